package blueprint

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/blueprint/component"
)

func loadSet(t *testing.T) (*component.Set, *component.Component) {
	t.Helper()
	set, err := component.LoadFiles("testdata/constructor/component-constructor.yaml", "testdata/constructor/leaf-constructor.yaml")
	if err != nil {
		t.Fatal(err)
	}
	root, err := set.Root()
	if err != nil {
		t.Fatal(err)
	}
	return set, root
}

func TestSchemaRefs(t *testing.T) {
	b, err := LoadDir("testdata/blueprints/full")
	if err != nil {
		t.Fatal(err)
	}
	set, root := loadSet(t)
	sc := b.NewSchemaContext(set, root)
	tests := []struct {
		name    string
		schema  string
		value   any
		pointer string // "" means valid
		errText string
	}{
		{name: "local ok", schema: `{"$ref":"local://replicas"}`, value: 3},
		{name: "local fails", schema: `{"$ref":"local://replicas"}`, value: 0, pointer: "(root)", errText: "minimum"},
		{name: "nested local", schema: `{"$ref":"local://endpoint"}`, value: map[string]any{"host": "h", "port": 70000}, pointer: "/port"},
		{name: "blueprint file", schema: `{"$ref":"blueprint://schemas/release.json"}`, value: map[string]any{"name": "x", "replicas": 2}},
		{name: "blueprint file with local inside", schema: `{"$ref":"blueprint://schemas/release.json"}`, value: map[string]any{"name": "x", "replicas": "two"}, pointer: "/replicas"},
		{name: "cd two deep", schema: `{"$ref":"cd://componentReferences/mid/componentReferences/sub/resources/config-schema"}`, value: map[string]any{"size": 1}},
		{name: "cd fails", schema: `{"$ref":"cd://componentReferences/mid/componentReferences/sub/resources/config-schema"}`, value: map[string]any{"size": "big"}, pointer: "/size"},
		// config-schema refers to cd://resources/name-schema, which resolves in the leaf component.
		{name: "cd nested relative to its component", schema: `{"$ref":"cd://componentReferences/mid/componentReferences/sub/resources/config-schema"}`, value: map[string]any{"size": 1, "name": "ab"}, pointer: "/name"},
		{name: "fragment", schema: `{"$ref":"blueprint://schemas/release.json#/properties/name"}`, value: "", pointer: "(root)"},
		{name: "internal ref", schema: `{"definitions":{"a":{"type":"string"}},"properties":{"x":{"$ref":"#/definitions/a"}}}`, value: map[string]any{"x": 1}, pointer: "/x"},
		{name: "format asserted", schema: `{"type":"string","format":"email"}`, value: "nope", pointer: "(root)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := sc.ValidateValue(json.RawMessage(tt.schema), tt.value)
			if tt.pointer == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("err = %v, want a ValidationError", err)
			}
			if !strings.Contains(ve.Error(), tt.pointer+":") || !strings.Contains(ve.Error(), tt.errText) {
				t.Errorf("err = %q, want pointer %q and %q", ve, tt.pointer, tt.errText)
			}
		})
	}
}

func TestSchemaErrors(t *testing.T) {
	b, err := LoadDir("testdata/blueprints/full")
	if err != nil {
		t.Fatal(err)
	}
	set, root := loadSet(t)
	tests := []struct {
		name   string
		ctx    *SchemaContext
		schema string
		want   string
	}{
		{"not json", b.NewSchemaContext(nil, nil), `{`, "not valid JSON"},
		{"not a schema", b.NewSchemaContext(nil, nil), `{"type": 5}`, "not a valid JSON schema"},
		{"unknown local", b.NewSchemaContext(nil, nil), `{"$ref":"local://nope"}`, `type "nope" is not defined in localTypes`},
		{"missing blueprint file", b.NewSchemaContext(nil, nil), `{"$ref":"blueprint://schemas/nope.json"}`, `no file "schemas/nope.json"`},
		{"escaping blueprint file", b.NewSchemaContext(nil, nil), `{"$ref":"blueprint://../x.json"}`, "leaves the blueprint"},
		{"cd without component", b.NewSchemaContext(nil, nil), `{"$ref":"cd://resources/x"}`, "no component"},
		{"cd unknown ref", b.NewSchemaContext(set, root), `{"$ref":"cd://componentReferences/nope/resources/x"}`, `no component reference "nope"`},
		{"cd access resource", b.NewSchemaContext(set, root), `{"$ref":"cd://resources/echo-server-image"}`, "only input resources"},
		{"remote ref", b.NewSchemaContext(nil, nil), `{"$ref":"https://example.com/s.json"}`, "cannot be loaded"},
		{"ref not string", b.NewSchemaContext(nil, nil), `{"$ref": 1}`, "$ref must be a string"},
		{"bad fragment", b.NewSchemaContext(nil, nil), `{"$ref":"local://replicas#/nope"}`, `no field "nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.ctx.Compile(json.RawMessage(tt.schema))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestSchemaCycle(t *testing.T) {
	b, err := LoadFiles("m", map[string][]byte{"blueprint.yaml": []byte(minimal + `localTypes:
  a: {$ref: "local://b"}
  b: {properties: {x: {$ref: "local://a"}}}
`)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.NewSchemaContext(nil, nil).Compile(json.RawMessage(`{"$ref":"local://a"}`))
	if err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Fatalf("err = %v", err)
	}
}

func TestSchemaBlowupIsBounded(t *testing.T) {
	// Each type refers to the next twice: 2^40 nodes if inlined naively.
	var sb strings.Builder
	sb.WriteString(minimal + "localTypes:\n")
	for i := range 40 {
		sb.WriteString("  t" + string(rune('a'+i%26)) + string(rune('a'+i/26)) + ": {properties: {l: {$ref: \"local://t" + string(rune('a'+(i+1)%26)) + string(rune('a'+(i+1)/26)) + "\"}, r: {$ref: \"local://t" + string(rune('a'+(i+1)%26)) + string(rune('a'+(i+1)/26)) + "\"}}}\n")
	}
	sb.WriteString("  tob: {type: string}\n")
	b, err := LoadFiles("m", map[string][]byte{"blueprint.yaml": []byte(sb.String())})
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.NewSchemaContext(nil, nil).Compile(json.RawMessage(`{"$ref":"local://taa"}`))
	if err == nil || !strings.Contains(err.Error(), "nodes") {
		t.Fatalf("err = %v", err)
	}
}

func TestSchemaDraft(t *testing.T) {
	// In draft 2019-09 $ref siblings apply; in draft-07 they are ignored.
	schema := json.RawMessage(`{"$ref":"#/definitions/s","maxLength":2,"definitions":{"s":{"type":"string"}}}`)
	for _, tt := range []struct {
		version string
		valid   bool
	}{
		{"", true},
		{"https://json-schema.org/draft-07/schema#", true},
		{"https://json-schema.org/draft/2019-09/schema", false},
	} {
		b, err := LoadFiles("m", map[string][]byte{"blueprint.yaml": []byte(minimal + "jsonSchemaVersion: \"" + tt.version + "\"\n")})
		if err != nil {
			t.Fatal(err)
		}
		err = b.NewSchemaContext(nil, nil).ValidateValue(schema, "long")
		if (err == nil) != tt.valid {
			t.Errorf("version %q: err = %v, want valid=%v", tt.version, err, tt.valid)
		}
	}
}
