package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// fill builds a value of type typ from v, with null for whatever v leaves
// out, so a test can write only the attributes it cares about.
func fill(typ tftypes.Type, v any) tftypes.Value {
	if v == nil {
		return tftypes.NewValue(typ, nil)
	}
	if tv, ok := v.(tftypes.Value); ok {
		return tv
	}
	switch t := typ.(type) {
	case tftypes.Object:
		in, _ := v.(map[string]any)
		out := map[string]tftypes.Value{}
		for name, at := range t.AttributeTypes {
			out[name] = fill(at, in[name])
		}
		return tftypes.NewValue(t, out)
	case tftypes.Map:
		in, _ := v.(map[string]any)
		out := map[string]tftypes.Value{}
		for k, e := range in {
			out[k] = fill(t.ElementType, e)
		}
		return tftypes.NewValue(t, out)
	case tftypes.List:
		if objs, ok := v.([]any); ok {
			out := make([]tftypes.Value, len(objs))
			for i, e := range objs {
				out[i] = fill(t.ElementType, e)
			}
			return tftypes.NewValue(t, out)
		}
		in, _ := v.([]string)
		out := make([]tftypes.Value, len(in))
		for i, e := range in {
			out[i] = tftypes.NewValue(t.ElementType, e)
		}
		return tftypes.NewValue(t, out)
	}
	return tftypes.NewValue(typ, v)
}

func validate(t *testing.T, items map[string]any, targets ...map[string]any) map[string]string {
	t.Helper()
	x := newProvider("test").executions
	cfg := map[string]any{"name": "x", "deploy_items": items}
	if len(targets) > 0 {
		cfg["targets"] = targets[0]
	}
	problems := x.validate(context.Background(), fill(x.vt.resource, cfg))
	out := map[string]string{}
	for _, p := range problems {
		out[pathString(p.path)] = p.detail
	}
	return out
}

// pathString writes an attribute path as Terraform shows it.
func pathString(p *tftypes.AttributePath) string {
	var b strings.Builder
	for _, s := range p.Steps() {
		switch s := s.(type) {
		case tftypes.AttributeName:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(string(s))
		case tftypes.ElementKeyString:
			fmt.Fprintf(&b, "[%q]", string(s))
		case tftypes.ElementKeyInt:
			fmt.Fprintf(&b, "[%d]", int64(s))
		}
	}
	return b.String()
}

// Targets are checked at plan time, on their own paths, without quoting
// their configs.
func TestValidateTargets(t *testing.T) {
	kc := `{"kubeconfig": "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\nusers: [{name: u, user: {token: s3cret-tok}}]"}`
	item := map[string]any{"a": map[string]any{"type": "mock", "target": "c"}}
	cases := map[string]struct {
		items   map[string]any
		targets map[string]any
		path    string
	}{
		"unknown type":   {item, map[string]any{"c": map[string]any{"type": "ssh", "config": "{}"}}, `targets["c"].type`},
		"bad config":     {item, map[string]any{"c": map[string]any{"type": "landscaper.gardener.cloud/kubernetes-cluster", "config": `{"kubeconfig": "users: [{user: {token: s3cret-tok}}]"}`}}, `targets["c"].config`},
		"not yaml":       {item, map[string]any{"c": map[string]any{"type": "landscaper.gardener.cloud/kubernetes-cluster", "config": "[s3cret-tok"}}, `targets["c"].config`},
		"missing target": {map[string]any{"a": map[string]any{"type": "mock", "target": "nope"}}, map[string]any{"c": map[string]any{"type": "landscaper.gardener.cloud/kubernetes-cluster", "config": kc}}, `deploy_items["a"].target`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := validate(t, tc.items, tc.targets)
			if _, found := got[tc.path]; !found || len(got) != 1 {
				t.Fatalf("diagnostics %v, want one on %s", got, tc.path)
			}
			if strings.Contains(got[tc.path], "s3cret") {
				t.Fatalf("a diagnostic quotes the target config: %s", got[tc.path])
			}
		})
	}
	if got := validate(t, item, map[string]any{"c": map[string]any{"type": "landscaper.gardener.cloud/kubernetes-cluster", "config": kc}}); len(got) != 0 {
		t.Fatalf("valid config: %v", got)
	}
}

// Plan-time errors carry the exact attribute path of the offending field.
func TestValidateConfigPaths(t *testing.T) {
	ok := map[string]any{"type": "mock"}
	cases := map[string]struct {
		items map[string]any
		path  string
	}{
		"type":       {map[string]any{"a": map[string]any{"type": "nope"}}, `deploy_items["a"].type`},
		"config":     {map[string]any{"a": map[string]any{"type": "mock", "config": "[1,"}}, `deploy_items["a"].config`},
		"deployer":   {map[string]any{"a": map[string]any{"type": "exec", "config": "{}"}}, `deploy_items["a"].config`},
		"timeout":    {map[string]any{"a": map[string]any{"type": "mock", "timeout": "soon"}}, `deploy_items["a"].timeout`},
		"depends_on": {map[string]any{"a": ok, "b": map[string]any{"type": "mock", "depends_on": []string{"zz"}}}, `deploy_items["b"].depends_on`},
		"cycle": {map[string]any{
			"a": map[string]any{"type": "mock", "depends_on": []string{"b"}},
			"b": map[string]any{"type": "mock", "depends_on": []string{"a"}},
		}, `deploy_items["a"].depends_on`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := validate(t, tc.items)
			if len(got) != 1 {
				t.Fatalf("diagnostics %v", got)
			}
			if _, found := got[tc.path]; !found {
				t.Fatalf("diagnostics %v, want one on %s", got, tc.path)
			}
		})
	}
	if got := validate(t, map[string]any{"a": ok, "b": map[string]any{"type": "mock", "depends_on": []string{"a"}}}); len(got) != 0 {
		t.Fatalf("valid config: %v", got)
	}
}
