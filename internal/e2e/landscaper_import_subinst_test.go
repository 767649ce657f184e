package e2e

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
)

// subBlueprint is the blueprint of one sub-installation: a ConfigMap of
// its own name holding the message the root hands down, deployed with the
// policy.
func subBlueprint(name, policy string) string {
	return manifestBlueprint([]string{"message"}, policy,
		fmt.Sprintf(`{apiVersion: v1, kind: ConfigMap, metadata: {name: %s, namespace: example-subs}, data: {message: "{{ .imports.message }}"}}`, name), "")
}

// subTemplate is the InstallationTemplate file of the sub-installation
// name, as the guided tour's subinstallations example writes them: the
// root's target and data handed down by name.
func subTemplate(name, policy string) string {
	return fmt.Sprintf(`apiVersion: landscaper.gardener.cloud/v1alpha1
kind: InstallationTemplate
name: %s
blueprint:
  filesystem:
    blueprint.yaml: |
%s
imports:
  targets:
    - {name: cluster, target: cluster}
  data:
    - {name: message, dataRef: message}
`, name, indentLines(subBlueprint(name, policy), "      "))
}

// TestImportFromLandscaper_subinstallations takes over a root
// Installation whose blueprint deploys nothing itself and renders two
// sub-installations, written as Landscaper's controllers leave them: the
// sub-Installation objects (owned by the root, labelled, annotated with
// their names in the blueprint, listed in the root's subInstCache), their
// Executions and DeployItems, and the ConfigMaps the manifest deployer
// labelled. The apply adopts every ConfigMap in place and the plan after
// is empty.
func TestImportFromLandscaper_subinstallations(t *testing.T) {
	const ns = "cu-subs"
	w, c := importWorkspace(t, ns, "example-subs")
	c.write("apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: DataObject\nmetadata: {name: do-message, namespace: " + ns + "}\ndata: hello\n")

	subs := []string{"subinst-a", "subinst-b"}
	objects := map[string]string{"subinst-a": "subinst-a-2kx9f", "subinst-b": "subinst-b-7qw4m"}
	// fallback: an object labelled by another deploy item is left alone
	// unless adopted, so only a real adoption moves subinst-b's label.
	policies := map[string]string{"subinst-a": "manage", "subinst-b": "fallback"}
	files := "blueprint.yaml: |\n" + indentLines(`apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
jsonSchema: "https://json-schema.org/draft/2019-09/schema"
imports:
  - {name: cluster, type: target, targetType: landscaper.gardener.cloud/kubernetes-cluster}
  - {name: message, type: data, schema: {type: string}}
subinstallations:
  - file: /subinst-a.yaml
  - file: /subinst-b.yaml`, "  ") + "\n"
	cache := ""
	for _, s := range subs {
		files += s + ".yaml: |\n" + indentLines(subTemplate(s, policies[s]), "  ") + "\n"
		cache += fmt.Sprintf("    - {specName: %s, objectName: %s}\n", s, objects[s])
	}
	root := c.write(fmt.Sprintf(`apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Installation
metadata: {name: hello-subs, namespace: %s}
spec:
  imports:
    targets: [{name: cluster, target: my-cluster}]
    data: [{name: message, dataRef: do-message}]
  blueprint:
    inline:
      filesystem:
%s
status:
  observedGeneration: 1
  phase: Succeeded
  subInstCache:
    activeSubs:
%s`, ns, indentLines(files, "        "), cache))

	uids := map[string]types.UID{}
	for _, s := range subs {
		sub := c.write(fmt.Sprintf(`apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Installation
metadata:
  name: %[1]s
  namespace: %[2]s
  labels: {landscaper.gardener.cloud/encompassed-by: hello-subs}
  annotations: {landscaper.gardener.cloud/subinstallation-name: %[3]s}
  ownerReferences:
    - {apiVersion: landscaper.gardener.cloud/v1alpha1, kind: Installation, name: hello-subs, uid: %[4]s, controller: true, blockOwnerDeletion: true}
spec:
  blueprint:
    inline:
      filesystem:
        blueprint.yaml: |
%[5]s
  imports:
    targets: [{name: cluster, target: cluster}]
    data: [{name: message, dataRef: message}]
status:
  observedGeneration: 1
  phase: Succeeded
  executionRef: {name: %[1]s, namespace: %[2]s}
`, objects[s], ns, s, root.GetUID(), indentLines(subBlueprint(s, policies[s]), "          ")))
		rendered := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: example-subs}\ndata: {message: hello}", s)
		di := c.writeExecution(ns, objects[s], sub.GetUID(), manifestItem(ns, policies[s], rendered), "")
		uids[s] = c.write(labelled(rendered, di)).GetUID()
	}

	w.Config(importConfig("landscaper/" + ns + "/hello-subs"))
	out, code := w.Run(nil, "plan", "-input=false", "-no-color", "-generate-config-out=generated.tf")
	if code != 0 {
		t.Fatalf("plan -generate-config-out exited %d:\n%s", code, out)
	}
	generated := strings.Join(strings.Fields(acctest.ReadFile(t, w.Path("generated.tf"))), " ")
	for _, want := range []string{`"subinst-a.yaml"`, `"subinst-b.yaml"`, `message = "hello"`, `name = "my-cluster"`} {
		if !strings.Contains(generated, want) {
			t.Errorf("generated configuration lacks %s:\n%s", want, generated)
		}
	}
	w.Apply()

	for _, s := range subs {
		c.expectAdopted("example-subs", s, uids[s], "hello-subs/"+s)
	}
	if out, code := w.PlanExitCode(); code != 0 {
		t.Fatalf("plan after the take-over exited %d:\n%s", code, out)
	}
}
