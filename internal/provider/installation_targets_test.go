package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// Bad target forms are plan-time errors on the attribute at fault: the
// target or its field for what the configuration gives, the blueprint for
// an installation template naming a target its parent cannot give.
func TestInstallationTargetFormsErrorPaths(t *testing.T) {
	const kind = "landscaper.gardener.cloud/kubernetes-cluster"
	cluster := func(extra ...any) map[string]any {
		m := map[string]any{"type": kind, "config": `{"kubeconfig": "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n"}`}
		for i := 0; i < len(extra); i += 2 {
			m[fmt.Sprint(extra[i])] = extra[i+1]
		}
		return m
	}
	// parent imports a target, a target list and a target map, and hands
	// them to one sub-installation in the form the case gives.
	parent := func(targetImports string) string {
		return `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: one, type: target, targetType: ` + kind + `}
  - {name: fleet, type: targetList, targetType: ` + kind + `}
  - {name: clusters, type: targetMap, targetType: ` + kind + `}
subinstallations:
  - name: sub
    blueprint:
      filesystem:
        blueprint.yaml: |
          apiVersion: landscaper.gardener.cloud/v1alpha1
          kind: Blueprint
    imports:
      targets:
` + targetImports
	}
	good := map[string]any{
		"targets":      map[string]any{"one": cluster()},
		"target_lists": map[string]any{"fleet": []any{cluster(), cluster()}},
		"target_maps":  map[string]any{"clusters": map[string]any{"red": cluster(), "blue": cluster()}},
	}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for a, b := range good {
			m[a] = b
		}
		m[k] = v
		return m
	}
	cases := map[string]struct {
		bp      string
		targets map[string]any
		path    string
		detail  string
	}{
		"target map key naming no target": {bp: parent("          - name: m\n            targetMap: {red: redCluster, blue: one}\n"),
			path: `blueprint`, detail: `installation template "sub", imports.targets[0][m].targetMap[red]: import not satisfied: the target "redCluster"`},
		"element of no list or map": {bp: parent("          - {name: c, target: \"one[0]\"}\n"),
			path: `blueprint`, detail: `imports.targets[0][c]: import not satisfied: "one" is no target list or target map import`},
		"targetMapRef to a list": {bp: parent("          - {name: m, targetMapRef: fleet}\n"),
			path: `blueprint`, detail: `imports.targets[0][m].targetMapRef: import not satisfied: "fleet" is no target map import`},
		"target list entry naming no target": {bp: parent("          - {name: l, targets: [one, two]}\n"),
			path: `blueprint`, detail: `imports.targets[0][l].targets[1]: import not satisfied: the target "two"`},
		"no form": {bp: parent("          - {name: l}\n"),
			path: `blueprint`, detail: `imports.targets[0][l]: names no target`},
		"map element of the wrong type": {bp: strings.Replace(parent("          - {name: c, target: \"clusters[red]\"}\n"),
			"targetMap, targetType: "+kind, "targetMap, targetType: example.com/other", 1),
			path: `target_maps["clusters"]["red"].type`, detail: `target type is "` + kind + `", expected "example.com/other"`},
		"list element of the wrong type": {bp: strings.Replace(parent("          - {name: c, target: \"fleet[1]\"}\n"),
			"targetList, targetType: "+kind, "targetList, targetType: example.com/other", 1),
			path: `target_lists["fleet"][1].type`, detail: `target type is "` + kind + `", expected "example.com/other"`},
		"map key with brackets": {bp: parent("          - {name: c, target: one}\n"),
			targets: with("target_maps", map[string]any{"clusters": map[string]any{"a[b]": cluster()}}),
			path:    `target_maps["clusters"]["a[b]"]`, detail: `no square brackets`},
		"bad name": {bp: parent("          - {name: c, target: one}\n"),
			targets: with("targets", map[string]any{"one": cluster("name", "Not_A_Name")}),
			path:    `targets["one"].name`, detail: `not a Kubernetes object name`},
		"one name, two targets": {bp: parent("          - {name: c, target: one}\n"),
			targets: with("target_maps", map[string]any{"clusters": map[string]any{"red": cluster("name", "prod"),
				"blue": cluster("name", "prod", "config", `{"kubeconfig": "other"}`)}}),
			path: `target_maps["clusters"]["red"].name`, detail: `is named "prod" too`},
		"bad label key": {bp: parent("          - {name: c, target: one}\n"),
			targets: with("targets", map[string]any{"one": cluster("labels", map[string]any{"a b": "x"})}),
			path:    `targets["one"].labels["a b"]`, detail: `no Kubernetes metadata key`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			x := newProvider("test").installations
			cfg := map[string]any{"name": "x", "blueprint": map[string]any{"filesystem": map[string]any{"blueprint.yaml": tc.bp}}}
			targets := tc.targets
			if targets == nil {
				targets = good
			}
			for k, v := range targets {
				cfg[k] = v
			}
			v := fill(x.t, cfg)
			ps := x.validate(context.Background(), v)
			if !ps.errors() { // the inline targets' warning only
				_, _, ps = x.plan(context.Background(), tftypes.NewValue(x.t, nil), v, nil)
			}
			got := map[string]string{}
			for _, p := range ps {
				got[pathString(p.path)] += p.detail
			}
			if d, ok := got[tc.path]; !ok || !strings.Contains(d, tc.detail) {
				t.Fatalf("want %s: ...%s...; got %q", tc.path, tc.detail, got)
			}
		})
	}
}
