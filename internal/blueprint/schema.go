package blueprint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
	"sigs.k8s.io/yaml"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/blueprint/component"
)

// SchemaContext is what the references of a blueprint's schemas resolve
// against: local:// names a localType, blueprint:// a file of the blueprint,
// cd:// a resource of the blueprint's component (or of a component it
// references) whose content is a JSON schema.
type SchemaContext struct {
	Blueprint  *Blueprint
	Components *component.Set
	Component  *component.Component
}

// NewSchemaContext returns the context for the schemas of b. set and comp
// may be nil when the blueprint does not come from a component; cd:// refs
// are then errors.
func (b *Blueprint) NewSchemaContext(set *component.Set, comp *component.Component) *SchemaContext {
	return &SchemaContext{Blueprint: b, Components: set, Component: comp}
}

// Schema is a compiled schema.
type Schema struct {
	s *jsonschema.Schema
}

// Violation is one reason a value does not match a schema.
type Violation struct {
	// Pointer is the JSON pointer of the failing value ("" for the root).
	Pointer string
	Message string
}

// ValidationError lists every violation of one value.
type ValidationError struct {
	Violations []Violation
}

func (e *ValidationError) Error() string {
	parts := make([]string, 0, len(e.Violations))
	for _, v := range e.Violations {
		p := v.Pointer
		if p == "" {
			p = "(root)"
		}
		parts = append(parts, p+": "+v.Message)
	}
	return strings.Join(parts, "; ")
}

// maxSchemaNodes bounds the size of a schema after its references are
// inlined; references that fan out can otherwise grow it exponentially.
const maxSchemaNodes = 200000

// Compile resolves the references of a schema and compiles it. The draft is
// the schema's own $schema, else the blueprint's jsonSchemaVersion (or
// jsonSchema), else draft-07.
func (sc *SchemaContext) Compile(schema json.RawMessage) (*Schema, error) {
	if sc == nil {
		sc = &SchemaContext{}
	}
	doc, err := decodeSchemaJSON(schema)
	if err != nil {
		return nil, fmt.Errorf("schema is not valid JSON: %w", err)
	}
	r := &resolver{ctx: sc, comp: sc.Component, useBlueprint: true}
	resolved, err := r.resolve(doc, map[string]bool{})
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(sc.draft())
	c.AssertFormat()
	c.UseLoader(refuseLoader{})
	const loc = "mem:///schema.json"
	if err := c.AddResource(loc, resolved); err != nil {
		return nil, fmt.Errorf("schema is not a valid JSON schema: %w", err)
	}
	s, err := c.Compile(loc)
	if err != nil {
		return nil, fmt.Errorf("schema is not a valid JSON schema: %w", err)
	}
	return &Schema{s: s}, nil
}

func (sc *SchemaContext) draft() *jsonschema.Draft {
	if sc.Blueprint != nil {
		v := sc.Blueprint.Definition.JSONSchemaVersion
		if v == "" {
			v = sc.Blueprint.Definition.JSONSchema
		}
		switch {
		case strings.Contains(v, "draft-04"):
			return jsonschema.Draft4
		case strings.Contains(v, "draft-06"):
			return jsonschema.Draft6
		case strings.Contains(v, "2019-09"):
			return jsonschema.Draft2019
		case strings.Contains(v, "2020-12"):
			return jsonschema.Draft2020
		}
	}
	return jsonschema.Draft7
}

type refuseLoader struct{}

func (refuseLoader) Load(u string) (any, error) {
	return nil, fmt.Errorf("schema reference %s cannot be loaded: only local://, blueprint:// and cd:// references and references within the schema are supported", u)
}

var printer = message.NewPrinter(language.English)

// Validate checks a value (any Go value that marshals to JSON) against the
// schema. A mismatch is a *ValidationError.
func (s *Schema) Validate(value any) error {
	data, err := json.Marshal(value)
	if err != nil {
		return fmt.Errorf("value cannot be represented as JSON: %w", err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	err = s.s.Validate(inst)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	out := &ValidationError{}
	collectViolations(ve, out)
	return out
}

func collectViolations(ve *jsonschema.ValidationError, out *ValidationError) {
	if len(ve.Causes) == 0 {
		out.Violations = append(out.Violations, Violation{
			Pointer: jsonPointer(ve.InstanceLocation),
			Message: ve.ErrorKind.LocalizedString(printer),
		})
		return
	}
	for _, c := range ve.Causes {
		collectViolations(c, out)
	}
}

func jsonPointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		t = strings.ReplaceAll(t, "~", "~0")
		b.WriteString(strings.ReplaceAll(t, "/", "~1"))
	}
	return b.String()
}

// ValidateValue compiles schema and validates value against it.
func (sc *SchemaContext) ValidateValue(schema json.RawMessage, value any) error {
	s, err := sc.Compile(schema)
	if err != nil {
		return err
	}
	return s.Validate(value)
}

func decodeSchemaJSON(data []byte) (any, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, errors.New("empty schema")
	}
	// Schema files referenced by blueprint:// or cd:// may be YAML.
	if data[0] != '{' && data[0] != '[' {
		j, err := yaml.YAMLToJSON(data)
		if err != nil {
			return nil, err
		}
		data = j
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	return doc, nil
}

// resolver inlines local://, blueprint:// and cd:// references the way
// Landscaper does: the object holding the $ref is replaced by the
// referenced schema (siblings of $ref are dropped), other references stay
// for the schema library to resolve.
type resolver struct {
	ctx          *SchemaContext
	comp         *component.Component
	useBlueprint bool // false inside schemas that come from a component
	nodes        *int
}

func (r *resolver) resolve(v any, path map[string]bool) (any, error) {
	if r.nodes == nil {
		r.nodes = new(int)
	}
	if *r.nodes++; *r.nodes > maxSchemaNodes {
		return nil, fmt.Errorf("schema has more than %d nodes after its references are resolved", maxSchemaNodes)
	}
	switch t := v.(type) {
	case map[string]any:
		if ref, ok := t["$ref"]; ok {
			s, isString := ref.(string)
			if !isString {
				return nil, fmt.Errorf("$ref must be a string, got %T", ref)
			}
			if res, handled, err := r.resolveRef(s, path); handled || err != nil {
				return res, err
			}
		}
		out := make(map[string]any, len(t))
		for k, e := range t {
			res, err := r.resolve(e, path)
			if err != nil {
				return nil, err
			}
			out[k] = res
		}
		return out, nil
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			res, err := r.resolve(e, path)
			if err != nil {
				return nil, err
			}
			out[i] = res
		}
		return out, nil
	default:
		return v, nil
	}
}

func (r *resolver) resolveRef(ref string, visiting map[string]bool) (any, bool, error) {
	u, err := url.Parse(ref)
	if err != nil {
		return nil, true, fmt.Errorf("$ref %q: %w", ref, err)
	}
	if u.Scheme != "local" && u.Scheme != "blueprint" && u.Scheme != "cd" {
		return nil, false, nil
	}
	key := ref
	if r.comp != nil {
		key = r.comp.ID().String() + "::" + ref
	}
	if visiting[key] {
		return nil, true, fmt.Errorf("$ref %q is part of a reference cycle", ref)
	}
	next := make(map[string]bool, len(visiting)+1)
	for k := range visiting {
		next[k] = true
	}
	next[key] = true

	var doc any
	sub := r
	switch u.Scheme {
	case "local":
		if !r.useBlueprint || r.ctx.Blueprint == nil {
			return nil, true, fmt.Errorf("$ref %q: no blueprint local types here", ref)
		}
		if strings.Trim(u.Path, "/") != "" {
			return nil, true, fmt.Errorf("$ref %q: a local type reference takes no path", ref)
		}
		raw, ok := r.ctx.Blueprint.Definition.LocalTypes[u.Host]
		if !ok {
			return nil, true, fmt.Errorf("$ref %q: type %q is not defined in localTypes", ref, u.Host)
		}
		if doc, err = decodeSchemaJSON(raw); err != nil {
			return nil, true, fmt.Errorf("$ref %q: %w", ref, err)
		}
	case "blueprint":
		if !r.useBlueprint || r.ctx.Blueprint == nil {
			return nil, true, fmt.Errorf("$ref %q: no blueprint files here", ref)
		}
		data, err := r.ctx.Blueprint.ReadFile(path.Join(u.Host, u.Path))
		if err != nil {
			return nil, true, fmt.Errorf("$ref %q: %w", ref, err)
		}
		if doc, err = decodeSchemaJSON(data); err != nil {
			return nil, true, fmt.Errorf("$ref %q: %w", ref, err)
		}
	case "cd":
		if r.ctx.Components == nil || r.comp == nil {
			return nil, true, fmt.Errorf("$ref %q: the blueprint has no component to resolve it in", ref)
		}
		c, res, err := r.ctx.Components.Resolve(r.comp, ref)
		if err != nil {
			return nil, true, fmt.Errorf("$ref %q: %w", ref, err)
		}
		if res == nil {
			return nil, true, fmt.Errorf("$ref %q names a component, not a resource", ref)
		}
		blob, err := res.Content(c)
		if err != nil {
			return nil, true, fmt.Errorf("$ref %q: %w", ref, err)
		}
		if doc, err = decodeSchemaJSON(blob.Data); err != nil {
			return nil, true, fmt.Errorf("$ref %q: resource content is not a JSON schema: %w", ref, err)
		}
		// References inside a component's schema resolve against that
		// component, never against the blueprint.
		sub = &resolver{ctx: r.ctx, comp: c, useBlueprint: false, nodes: r.nodes}
	}
	resolved, err := sub.resolve(doc, next)
	if err != nil {
		return nil, true, err
	}
	frag, err := fragment(u.Fragment, resolved)
	if err != nil {
		return nil, true, fmt.Errorf("$ref %q: %w", ref, err)
	}
	return frag, true, nil
}

func fragment(frag string, doc any) (any, error) {
	frag = strings.Trim(frag, "/")
	if frag == "" {
		return doc, nil
	}
	cur := doc
	for _, key := range strings.Split(frag, "/") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("fragment %q: %q is not inside an object", frag, key)
		}
		if cur, ok = m[key]; !ok {
			return nil, fmt.Errorf("fragment %q: no field %q", frag, key)
		}
	}
	return cur, nil
}
