package masking

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestStandinsKeepShapeAndDiffer(t *testing.T) {
	st := &Standins{}
	in := map[string]any{
		"pw":    "p4ss-w0rd-sec-61",
		"n":     json.Number("41"),
		"f":     json.Number("1.5"),
		"on":    true,
		"kube":  "apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user: {token: abc123}\n",
		"json":  `{"token":"xyz"}`,
		"empty": "",
	}
	out, ok := st.Of(in).(map[string]any)
	if !ok {
		t.Fatalf("%T", st.Of(in))
	}
	if out["pw"] != "q5tt-x1se-tfd-72" || out["n"] != json.Number("42") || out["f"] != json.Number("2.5") || out["on"] != true {
		t.Errorf("stand-ins: %v", out)
	}
	// A document keeps its keys, so a template parsing it finds them.
	if kube, _ := out["kube"].(string); !strings.Contains(kube, "token: bcd234") || !strings.Contains(kube, "apiVersion:") {
		t.Errorf("kubeconfig stand-in: %q", kube)
	}
	if out["json"] != `{"token":"yza"}` {
		t.Errorf("JSON stand-in: %v", out["json"])
	}
	// Deterministic: plan and apply must render the same masks.
	again, _ := (&Standins{}).Of(in).(map[string]any)
	if again["pw"] != out["pw"] || again["kube"] != out["kube"] {
		t.Error("stand-ins differ between runs")
	}
}

func TestCompare(t *testing.T) {
	lit := func(s string) string { return strings.ReplaceAll(s, "s3cr3t", Mask) }
	shadowLit := func(s string) string { return strings.ReplaceAll(s, "t4ds4u", Mask) }
	actual := map[string]any{
		"same":    "visible",
		"b64":     "czNjcjN0",
		"partial": "admin:s3cr3t",
		"port":    json.Number("8443"),
		"list":    []any{"a", "b"},
		"s3cr3t":  "keyed",
		"flag":    true,
	}
	shadow := map[string]any{
		"same":    "visible",
		"b64":     "dDRkczR1",
		"partial": "admin:t4ds4u",
		"port":    json.Number("8444"),
		"list":    []any{"a"},
		"t4ds4u":  "keyed",
		"flag":    false,
	}
	c := Compare(actual, shadow, lit, shadowLit)
	got, _ := json.Marshal(c.Masked)
	want := `{"***":"***","b64":"***","flag":"***","list":["***","***"],"partial":"admin:***","port":"***","same":"visible"}`
	if string(got) != want {
		t.Errorf("masked\n got %s\nwant %s", got, want)
	}
	for _, d := range []string{"czNjcjN0", "admin:s3cr3t", "8443", "s3cr3t"} {
		found := false
		for _, x := range c.Derived {
			found = found || x == d
		}
		if !found {
			t.Errorf("derived %v lacks %q", c.Derived, d)
		}
	}
	if same := Compare(map[string]any{"a": "b"}, map[string]any{"a": "b"}, lit, shadowLit); same.Changed || len(same.Derived) > 0 {
		t.Errorf("nothing differs, yet %+v", same)
	}
}

func TestSecretData(t *testing.T) {
	v, _ := Decode([]byte(`{"manifests":[{"manifest":{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},
		"data":{"k":"dmFsdWU="},"stringData":{"p":"plain-text"}}},{"apiVersion":"v1","kind":"ConfigMap","data":{"c":"shown"}}]}`))
	out, found, changed := SecretData(v)
	got, _ := json.Marshal(out)
	want := `{"manifests":[{"manifest":{"apiVersion":"v1","data":{"k":"***"},"kind":"Secret","metadata":{"name":"s"},` +
		`"stringData":{"p":"***"}}},{"apiVersion":"v1","data":{"c":"shown"},"kind":"ConfigMap"}]}`
	if !changed || string(got) != want {
		t.Errorf("got %s", got)
	}
	if len(found) != 2 {
		t.Errorf("found %v", found)
	}
}
