package deployer

import (
	"encoding/json"
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
