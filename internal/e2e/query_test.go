package e2e

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/kube"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/lscluster/lstest"
)

// queryBlueprint deploys one ConfigMap, named after the installation,
// holding the data import message.
const queryBlueprint = blueprintHeader + `  - {name: message, type: data, schema: {type: string}}
deployExecutions:
  - name: default
    type: GoTemplate
    template: |
      deployItems:
        - name: config
          type: landscaper.gardener.cloud/kubernetes-manifest
          target: {import: cluster}
          config:
            apiVersion: manifest.deployer.landscaper.gardener.cloud/v1alpha2
            kind: ProviderConfiguration
            updateStrategy: update
            manifests:
              - policy: manage
                manifest: {apiVersion: v1, kind: ConfigMap, metadata: {name: {{ .imports.namespace }}-cm, namespace: {{ .imports.namespace }}}, data: {message: {{ .imports.message }}}}
`

// queryProvider defines the provider targets: the Landscaper resource
// cluster and the Target the installations import, by its name.
const queryProvider = `
provider "landscaper" {
  targets = {
    landscaper = { type = "landscaper.gardener.cloud/kubernetes-cluster", config = yamlencode({ kubeconfig = file("${path.module}/kubeconfig") }) }
    cluster    = { type = "landscaper.gardener.cloud/kubernetes-cluster", config = yamlencode({ kubeconfig = file("${path.module}/kubeconfig") }) }
  }
}
`

// TestQueryLandscaperNamespace takes a whole namespace over as the
// migration guide says, on Terraform 1.15: three Installations that
// Landscaper's own controllers ran to Succeeded are listed by the list
// resource landscaper_installation, `terraform query
// -generate-config-out` writes a resource and an import block by identity
// for each, and that configuration applies as it stands: the ConfigMaps
// Landscaper deployed keep their UIDs, and the plan after is empty. A
// namespace that is no namespace name and a provider target the provider
// does not define are refused, saying so; limit stops the listing.
func TestQueryLandscaperNamespace(t *testing.T) {
	tf := terraform115(t)
	w := newWorkspace(t)
	w.Terraform = tf
	env, _ := realLandscaper.Get(t)
	k := newDiffKube(t, env)
	const instNS = "query-inst"
	names := []string{"query-a", "query-b", "query-c"}
	for _, ns := range append([]string{instNS}, names...) {
		k.Namespace(ns)
	}
	k.Create(&unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "landscaper.gardener.cloud/v1alpha1", "kind": "Target",
		"metadata": map[string]any{"name": "cluster", "namespace": instNS},
		"spec": map[string]any{"type": "landscaper.gardener.cloud/kubernetes-cluster",
			"config": map[string]any{"kubeconfig": k.Kubeconfig}},
	}})
	for _, name := range names {
		for key, value := range map[string]string{"namespace": name, "message": "hello from " + name} {
			k.Create(&unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "landscaper.gardener.cloud/v1alpha1", "kind": "DataObject",
				"metadata": map[string]any{"name": name + "-" + key, "namespace": instNS}, "data": value,
			}})
		}
		k.Create(&unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "landscaper.gardener.cloud/v1alpha1", "kind": "Installation",
			"metadata": map[string]any{"name": name, "namespace": instNS,
				"annotations": map[string]any{"landscaper.gardener.cloud/operation": "reconcile"}},
			"spec": map[string]any{
				"blueprint": map[string]any{"inline": map[string]any{"filesystem": map[string]any{"blueprint.yaml": queryBlueprint}}},
				"imports": map[string]any{
					"targets": []any{map[string]any{"name": "cluster", "target": "cluster"}},
					"data": []any{map[string]any{"name": "namespace", "dataRef": name + "-namespace"},
						map[string]any{"name": "message", "dataRef": name + "-message"}},
				},
			},
		}})
	}
	cm := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	uids := map[string]types.UID{}
	for _, name := range names {
		k.WaitJobFinished(instNS, name)
		if phase := phaseOf(k, instNS, name); phase != "Succeeded" {
			t.Fatalf("Landscaper's Installation %s: phase %s", name, phase)
		}
		uids[name] = k.Get(cm, name, name+"-cm").GetUID()
	}

	acctest.WriteFile(t, w.Path("kubeconfig"), k.Kubeconfig)
	w.Config(queryProvider)
	list := func(target, namespace, more string) string {
		return fmt.Sprintf(`
list "landscaper_installation" "all" {
  provider         = landscaper
  include_resource = true
  %s
  config {
    target    = %q
    namespace = %q
  }
}
`, more, target, namespace)
	}
	// Bad input is an error naming what is wrong, and nothing is listed.
	for _, bad := range []struct{ target, namespace, summary, want string }{
		{"landscaper", "Query_Inst", "Error: Invalid namespace", `the namespace "Query_Inst" is not a namespace name`},
		{"nosuch", instNS, "Error: Provider target not defined", `the list of namespace "query-inst" names the provider target "nosuch"`},
	} {
		acctest.WriteFile(t, w.Path("landscaper.tfquery.hcl"), list(bad.target, bad.namespace, ""))
		out, code := w.Run(nil, "query", "-no-color")
		if flat := strings.Join(strings.Fields(out), " "); code == 0 || !strings.Contains(flat, bad.summary) || !strings.Contains(flat, bad.want) ||
			strings.Contains(flat, "name=query-a") {
			t.Errorf("list of %s in %s: query exited %d, want an error saying %s:\n%s", bad.namespace, bad.target, code, bad.want, out)
		}
	}
	// limit stops the listing.
	acctest.WriteFile(t, w.Path("landscaper.tfquery.hcl"), list("landscaper", instNS, "limit = 2"))
	out, code := w.Run(nil, "query", "-no-color")
	if got := strings.Count(out, "list.landscaper_installation.all "); code != 0 || got != 2 {
		t.Errorf("query with limit = 2 exited %d with %d results:\n%s", code, got, out)
	}

	acctest.WriteFile(t, w.Path("landscaper.tfquery.hcl"), list("landscaper", instNS, ""))
	out, code = w.Run(nil, "query", "-no-color", "-generate-config-out=generated.tf")
	if code != 0 {
		t.Fatalf("terraform query -generate-config-out exited %d:\n%s", code, out)
	}
	generated := acctest.ReadFile(t, w.Path("generated.tf"))
	flat := strings.Join(strings.Fields(generated), " ")
	if got := len(regexp.MustCompile(`resource "landscaper_installation"`).FindAllString(generated, -1)); got != len(names) {
		t.Errorf("generated %d landscaper_installation resources, want %d:\n%s", got, len(names), generated)
	}
	for _, name := range names {
		for _, want := range []string{
			fmt.Sprintf(`namespace = %q`, instNS),
			fmt.Sprintf(`name = %q`, name),
			fmt.Sprintf(`"hello from %s"`, name),
		} {
			if !strings.Contains(flat, want) {
				t.Errorf("generated configuration lacks %s:\n%s", want, generated)
			}
		}
	}
	if got := strings.Count(flat, "import {"); got != len(names) {
		t.Errorf("generated %d import blocks, want %d:\n%s", got, len(names), generated)
	}
	// The query file has done its part; the configuration applies alone.
	if err := os.Remove(w.Path("landscaper.tfquery.hcl")); err != nil {
		t.Fatal(err)
	}

	w.Apply()
	for _, name := range names {
		after := k.Get(cm, name, name+"-cm")
		if got := after.GetUID(); got != uids[name] {
			t.Errorf("ConfigMap %s/%s-cm was re-created: UID %s, was %s", name, name, got, uids[name])
		}
		if got, want := after.GetLabels()[kube.ManifestManagedLabel], kube.OwnerFor(name, "config"); got != want {
			t.Errorf("ConfigMap %s/%s-cm: managed label %q, want the provider's %q", name, name, got, want)
		}
	}
	ids := identities(t, w)
	var got []string
	for _, id := range ids {
		got = append(got, fmt.Sprintf("%v/%v/%v", id["target"], id["namespace"], id["name"]))
	}
	slices.Sort(got)
	if want := []string{"landscaper/query-inst/query-a", "landscaper/query-inst/query-b", "landscaper/query-inst/query-c"}; !slices.Equal(got, want) {
		t.Errorf("identities after apply: %v, want %v", got, want)
	}
	if out, code := w.PlanExitCode(); code != 0 {
		t.Fatalf("plan after the take-over exited %d:\n%s", code, out)
	}
}

// phaseOf is the phase of an Installation.
func phaseOf(k *diffKube, ns, name string) string {
	u := k.Get(lstest.GVRs["Installation"], ns, name)
	phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
	return phase
}
