package deployer

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

func TestNormalizeConfig(t *testing.T) {
	cases := []struct{ in, want, err string }{
		{"", `{}`, ""},
		{"  \n", `{}`, ""},
		{`{"a": 1}`, `{"a":1}`, ""},
		{"a: 1\nb: [x, z]\n", `{"a":1,"b":["x","z"]}`, ""},
		// YAML 1.1, as Kubernetes and Landscaper read it: y is a boolean.
		{"b: [x, y]", `{"b":["x",true]}`, ""},
		{"[1, 2]", "", "must be an object"},
		{"just text", "", "must be an object"},
		{"a: [", "", "neither JSON nor YAML"},
	}
	for _, c := range cases {
		got, err := NormalizeConfig(c.in)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: error %v, want %q", c.in, err, c.err)
		case c.err == "" && (err != nil || string(got) != c.want):
			t.Errorf("%q: %s %v, want %s", c.in, got, err, c.want)
		}
	}
}

func TestDecodeStrictRejectsUnknownFields(t *testing.T) {
	var v struct {
		Command []string `json:"command"`
	}
	if err := DecodeStrict([]byte(`{"command":["true"]}`), &v); err != nil || v.Command[0] != "true" {
		t.Fatalf("%v %v", v, err)
	}
	err := DecodeStrict([]byte(`{"comand":["true"]}`), &v)
	if err == nil || !strings.Contains(err.Error(), `unknown field "comand"`) {
		t.Fatalf("error %v", err)
	}
}

func TestRegistry(t *testing.T) {
	r := NewRegistry()
	r.Register(nil, "landscaper.gardener.cloud/mock", "mock")
	if _, ok := r.Get("mock"); !ok {
		t.Fatal("alias not registered")
	}
	if _, ok := r.Get("helm"); ok {
		t.Fatal("unknown type found")
	}
	if got := strings.Join(r.Types(), ","); got != "landscaper.gardener.cloud/mock,mock" {
		t.Fatalf("types %s", got)
	}
}

func TestDecodeStrictWarnsAboutEveryUnknownField(t *testing.T) {
	type inner struct {
		B int `json:"b"`
	}
	var v struct {
		A     int   `json:"a"`
		Inner inner `json:"inner"`
	}
	err := DecodeStrict(json.RawMessage(`{"a":1,"x":2,"inner":{"b":3,"y":4}}`), &v)
	if !IsWarning(err) || !strings.Contains(err.Error(), `"x"`) || !strings.Contains(err.Error(), `"y"`) {
		t.Fatalf("err %v", err)
	}
	if v.A != 1 || v.Inner.B != 3 {
		t.Fatalf("decoded %+v", v)
	}
	if err := DecodeStrict(json.RawMessage(`{"a":"one"}`), &v); err == nil || IsWarning(err) {
		t.Fatalf("a type error must be an error: %v", err)
	}
	if err := DecodeStrict(json.RawMessage(`{"a":1}`), &v); err != nil {
		t.Fatalf("clean config: %v", err)
	}
}

func TestLookalike(t *testing.T) {
	warning := &UnknownFieldsError{Fields: []string{"comand", "Namespce", "values2", "x"}}
	for field, want := range map[string]string{
		"command":   `"comand"`,
		"namespace": `"Namespce"`, // case is ignored
		"values":    `"values2"`,
		"chart":     "",
		"env":       "", // "x" is three edits away
	} {
		got := Lookalike(field, warning)
		if want == "" && got != "" || want != "" && !strings.Contains(got, "the config has "+want+", which this deployer does not know: a misspelling of "+strconv.Quote(field)+"?") {
			t.Errorf("Lookalike(%q) = %q, want it to name %s", field, got, want)
		}
	}
	if got := Lookalike("command", nil); got != "" {
		t.Errorf("no warning: %q", got)
	}
	for _, c := range []struct {
		a, b string
		d    int
	}{{"comand", "command", 1}, {"commnad", "command", 1}, {"", "abc", 3}, {"kitten", "sitting", 3}} {
		if d := editDistance([]rune(c.a), []rune(c.b)); d != c.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, d, c.d)
		}
	}
}
