package lscluster

import (
	"strings"
	"testing"
)

func TestParseID(t *testing.T) {
	ok := map[string]ID{
		"landscaper/cu-example/hello-world":         {Target: "landscaper", Namespace: "cu-example", Installation: "hello-world"},
		"ls_cluster.1/default/app.v2":               {Target: "ls_cluster.1", Namespace: "default", Installation: "app.v2"},
		"landscaper/ns/" + strings.Repeat("a", 253): {Target: "landscaper", Namespace: "ns", Installation: strings.Repeat("a", 253)},
	}
	for in, want := range ok {
		got, err := ParseID(in)
		if err != nil {
			t.Errorf("ParseID(%q): %v", in, err)
			continue
		}
		if got != want {
			t.Errorf("ParseID(%q) = %+v, want %+v", in, got, want)
		}
		if got.String() != in {
			t.Errorf("ParseID(%q).String() = %q", in, got.String())
		}
	}
	bad := map[string]string{
		"":                                             "the ID is empty",
		"hello-world":                                  "1 part(s)",
		"cu-example/hello-world":                       "2 part(s)",
		"landscaper/cu-example/hello/world":            "4 part(s)",
		"/cu-example/hello-world":                      "provider target is empty",
		"lands caper/cu-example/hello-world":           "contains white space",
		"landscaper//hello-world":                      "namespace is empty",
		"landscaper/CU_Example/hello-world":            `namespace "CU_Example" is not a namespace name`,
		"landscaper/" + strings.Repeat("n", 64) + "/x": "is not a namespace name",
		"landscaper/cu-example/":                       "installation name is empty",
		"landscaper/cu-example/Hello_World":            `installation "Hello_World" is not an object name`,
		"landscaper/cu-example/hello-world-":           "is not an object name",
	}
	for in, want := range bad {
		_, err := ParseID(in)
		if err == nil {
			t.Errorf("ParseID(%q): no error", in)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, want) || !strings.Contains(msg, IDFormat) || !strings.Contains(msg, "import ID "+quote(in)) {
			t.Errorf("ParseID(%q) = %q, want it to contain %q, the format and the ID", in, msg, want)
		}
	}
}

func quote(s string) string { return `"` + s + `"` }

func TestDataObjectName(t *testing.T) {
	// Expected names computed independently: base32 (lower case, no
	// padding) of SHA-1("<context>/<name>").
	cases := []struct{ context, name, want string }{
		{"", "my-release", "my-release"},
		{"", "#Not.Hashed", "Not.Hashed"},
		{"Inst.root", "#my-target", "my-target"},
		{"Inst.root", "configmap-name-2", "wkvha6r6s2cqla63py3s3ceukjqcn7jb"},
		{"", "Foo_Bar", "lmr5uzhobtiadmwzqk6umjeb7qfucvjr"},
		{"", "default/mydataref", "mhnmgqk6dvekwnwele6dhd3rqprtlsmy"},
	}
	for _, c := range cases {
		if got := DataObjectName(c.context, c.name); got != c.want {
			t.Errorf("DataObjectName(%q, %q) = %q, want %q", c.context, c.name, got, c.want)
		}
	}
	if got := InstallationContext("root"); got != "Inst.root" {
		t.Errorf("InstallationContext = %q", got)
	}
}
