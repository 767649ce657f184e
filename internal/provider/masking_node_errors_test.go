package provider

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/lscluster"
)

// What a node's blueprint says when it fails (rendering, exports) may
// quote what a template made of a secret, and the node's path may be a
// sub-installation name a secret made: the tests here fail a node so and
// look for the secret in every diagnostic and the state.

const tenantSecret = "Acme Corp Tenant"

// dnsOfTenant is what a careless author makes of the tenant for a name.
const dnsOfTenant = `{{ .imports.tenant | lower | replace " " "-" }}`

// subUnderSecretName is a blueprint with a sub-installation named after
// the tenant whose child blueprint fails to render (a required import
// nobody gives it).
func subUnderSecretName(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	child := "apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: Blueprint\nimports:\n  - {name: dbSize, type: data, schema: {type: integer}}\n"
	bp := `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: tenant, type: data, schema: {type: string}}
subinstallationExecutions:
  - name: subs
    type: GoTemplate
    template: |
      subinstallations:
        - apiVersion: landscaper.gardener.cloud/v1alpha1
          kind: InstallationTemplate
          name: db-` + dnsOfTenant + `
          blueprint: {filesystem: {blueprint.yaml: ` + fmt.Sprintf("%q", child) + `}}
`
	writeBlueprint(t, dir, bp)
	return dir
}

// exportFailsForSecret is a blueprint whose export execution fails, for
// the real region only, quoting what it made of the tenant.
func exportFailsForSecret(t *testing.T) string {
	t.Helper()
	return exportingBlueprint(t, "  - {name: region, type: data, schema: {type: string}}\n",
		`{{ if eq .imports.region "eu-old-1" }}{{ fail (printf "region retired for tenant %s" (`+dnsOfTenant[3:len(dnsOfTenant)-3]+`)) }}{{ end }}
      exports:
        endpoint: https://svc.example.com`)
}

// exportingBlueprint is a blueprint importing the tenant (and more) with
// one mock item and the export execution template given.
func exportingBlueprint(t *testing.T, moreImports, exportTemplate string) string {
	t.Helper()
	dir := t.TempDir()
	writeBlueprint(t, dir, `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: tenant, type: data, schema: {type: string}}
`+moreImports+`exports:
  - {name: endpoint, schema: {type: string}}
deployExecutions:
  - name: x
    type: GoTemplate
    template: |
      deployItems:
        - name: app
          type: landscaper.gardener.cloud/mock
          config: {export: {ok: fine}}
exportExecutions:
  - name: x
    type: GoTemplate
    template: |
      `+exportTemplate+`
`)
	return dir
}

// exportsFailAlike is a child blueprint whose export fails for every
// value of every secret.
const exportsFailAlike = "apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: Blueprint\nexports:\n  - {name: url, schema: {type: string}}\n" +
	"exportExecutions:\n  - name: x\n    type: Spiff\n    template:\n      exports:\n        url: (( 1 / 0 ))\n"

func writeBlueprint(t *testing.T, dir, bp string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "blueprint.yaml"), []byte(bp), 0o600); err != nil {
		t.Fatal(err)
	}
}

// rpcApply plans and applies a blueprint directory with sensitive
// imports through the provider's RPCs, as Terraform calls them, and
// returns every diagnostic and the new state (null when the plan failed).
func rpcApply(t *testing.T, dir string, sensitive map[string]string) ([]string, tftypes.Value) {
	t.Helper()
	p := newProvider("test")
	p.engine.Store(engine.New(p.deployers, DefaultMaxParallelism))
	s := &server{routes: p.routes()}
	x := p.installations
	attrs := map[string]tftypes.Type{}
	vals := map[string]tftypes.Value{}
	for k, v := range sensitive {
		attrs[k] = tftypes.String
		vals[k] = tftypes.NewValue(tftypes.String, v)
	}
	cfg := fill(x.t, map[string]any{
		"name":              "app",
		"blueprint":         map[string]any{"path": dir},
		"sensitive_imports": tftypes.NewValue(tftypes.Object{AttributeTypes: attrs}, vals),
	})
	dv, err := tfprotov6.NewDynamicValue(x.t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	null, _ := tfprotov6.NewDynamicValue(x.t, tftypes.NewValue(x.t, nil))
	ctx := context.Background()
	plan, err := s.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{TypeName: installationType,
		PriorState: &null, ProposedNewState: &dv, Config: &dv})
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, d := range plan.Diagnostics {
		texts = append(texts, "plan: "+d.Summary+"\n"+d.Detail)
	}
	if len(plan.Diagnostics) > 0 {
		return texts, tftypes.NewValue(x.t, nil)
	}
	applied, err := s.ApplyResourceChange(ctx, &tfprotov6.ApplyResourceChangeRequest{TypeName: installationType,
		PriorState: &null, PlannedState: plan.PlannedState, Config: &dv, PlannedPrivate: plan.PlannedPrivate})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range applied.Diagnostics {
		texts = append(texts, "apply: "+d.Summary+"\n"+d.Detail)
	}
	st, err := applied.NewState.Unmarshal(x.t)
	if err != nil {
		t.Fatal(err)
	}
	return texts, st
}

// tenantShows names where the tenant, or what the blueprints make of it,
// shows: a diagnostic or a state attribute other than the sensitive
// imports.
func tenantShows(texts []string, st tftypes.Value) string {
	for _, s := range texts {
		if strings.Contains(strings.ToLower(s), "acme") {
			return "diagnostic " + s
		}
	}
	for name, v := range fields(st) {
		if name != attrSensitiveImports && strings.Contains(strings.ToLower(v.String()), "acme") {
			return "state attribute " + name + ": " + v.String()
		}
	}
	return ""
}

func TestNodeErrorsNameNoSecretMadeSubInstallation(t *testing.T) {
	texts, st := rpcApply(t, subUnderSecretName(t), map[string]string{"tenant": tenantSecret})
	if len(texts) == 0 {
		t.Fatal("want the child's render error")
	}
	if where := tenantShows(texts, st); where != "" {
		t.Fatalf("the tenant shows in a %s", where)
	}
	if !strings.Contains(texts[0], `Sub-installation "***" cannot be rendered`) {
		t.Fatalf("the diagnostic names the node otherwise: %q", texts)
	}
}

func TestExportErrorDecidedBySecretIsNotShown(t *testing.T) {
	texts, st := rpcApply(t, exportFailsForSecret(t), map[string]string{"tenant": tenantSecret, "region": "eu-old-1"})
	if len(texts) == 0 {
		t.Fatal("want the export error")
	}
	if where := tenantShows(texts, st); where != "" {
		t.Fatalf("the tenant shows in a %s", where)
	}
	if !strings.Contains(strings.Join(texts, "\n"), "the message is not shown") {
		t.Fatalf("the export error says something else: %q", texts)
	}
}

// An export execution failing alike for every value of the secrets says
// so in clear: it tells nothing of them.
func TestExportErrorOfEveryValueIsShown(t *testing.T) {
	dir := exportingBlueprint(t, "", `{{ fail "exports are not configured yet" }}`)
	texts, _ := rpcApply(t, dir, map[string]string{"tenant": tenantSecret})
	if !strings.Contains(strings.Join(texts, "\n"), "exports are not configured yet") {
		t.Fatalf("an error no secret decided is hidden: %q", texts)
	}
}

// The same through Terraform: the diagnostics name the sub-installation
// as *** and hide the export execution's message.
func TestAccInstallation_maskingFailedNodes(t *testing.T) {
	t.Parallel()
	config := func(dir, more string) string {
		return fmt.Sprintf(`
resource "landscaper_installation" "app" {
  name              = "app"
  blueprint         = { path = %q }
  sensitive_imports = { tenant = %q %s }
}`, dir, tenantSecret, more)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config(subUnderSecretName(t), ""), ExpectError: regexp.MustCompile(`Sub-installation "\*\*\*" cannot be rendered`)},
			{Config: config(exportFailsForSecret(t), `, region = "eu-old-1"`), ExpectError: regexp.MustCompile(`the message is not shown`)},
		},
	})
}

// A sub-installation named after a secret that fails at apply with no
// deploy item below it (no item key masks its name) is *** in the
// diagnostics and in status.last_error (the keys of status.installations
// still show it, as the guide says); a name of two letters too.
func TestFailedSubNamedAfterSecretIsMaskedAtApply(t *testing.T) {
	for name, shows := range map[string][]string{
		"db-" + dnsOfTenant:                       {"acme"},
		"{{ .imports.tenant | trunc 2 | lower }}": {`"ac"`, ": ac"},
	} {
		dir := t.TempDir()
		writeBlueprint(t, dir, `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: tenant, type: data, schema: {type: string}}
subinstallationExecutions:
  - name: subs
    type: GoTemplate
    template: |
      subinstallations:
        - apiVersion: landscaper.gardener.cloud/v1alpha1
          kind: InstallationTemplate
          name: `+name+`
          blueprint: {filesystem: {blueprint.yaml: `+fmt.Sprintf("%q", exportsFailAlike)+`}}
`)
		texts, st := rpcApply(t, dir, map[string]string{"tenant": tenantSecret})
		if len(texts) == 0 {
			t.Fatal("want the sub's export error")
		}
		texts = append(texts, "status.last_error: "+fields(fields(st)["status"])["last_error"].String())
		for _, text := range texts {
			for _, s := range shows {
				if strings.Contains(strings.ToLower(text), s) {
					t.Errorf("name %s: the sub's name shows (%s): %s", name, s, text)
				}
			}
		}
	}
}

// A sub-installation named after a secret that did not run (it imports
// from a sibling that failed) is listed in the parent's summary masked.
func TestNotRunSubNamedAfterSecretIsMasked(t *testing.T) {
	dir := t.TempDir()
	db := "apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: Blueprint\nimports:\n  - {name: url, type: data, schema: {type: string}}\n"
	writeBlueprint(t, dir, `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: tenant, type: data, schema: {type: string}}
subinstallationExecutions:
  - name: subs
    type: GoTemplate
    template: |
      subinstallations:
        - apiVersion: landscaper.gardener.cloud/v1alpha1
          kind: InstallationTemplate
          name: first
          blueprint: {filesystem: {blueprint.yaml: `+fmt.Sprintf("%q", exportsFailAlike)+`}}
          exports: {data: [{name: url, dataRef: firstUrl}]}
        - apiVersion: landscaper.gardener.cloud/v1alpha1
          kind: InstallationTemplate
          name: db-`+dnsOfTenant+`
          blueprint: {filesystem: {blueprint.yaml: `+fmt.Sprintf("%q", db)+`}}
          imports: {data: [{name: url, dataRef: firstUrl}]}
`)
	texts, st := rpcApply(t, dir, map[string]string{"tenant": tenantSecret})
	if len(texts) == 0 {
		t.Fatal("want the first sub's export error")
	}
	status := fields(st)["status"]
	lastErr := fields(status)["last_error"]
	if where := tenantShows(texts, tftypes.NewValue(tftypes.Object{AttributeTypes: map[string]tftypes.Type{"last_error": lastErr.Type()}},
		map[string]tftypes.Value{"last_error": lastErr})); where != "" {
		t.Fatalf("the not-run sub's secret-made name shows in a %s", where)
	}
}

// In remote mode Landscaper runs the export executions: what they said
// of a tree holding secrets cannot be compared with a stand-in rendering,
// and is not shown.
func TestRemoteTemplateErrorOfATreeWithSecretsIsNotShown(t *testing.T) {
	pt := &providerTargets{known: true, byName: map[string]*deployer.Target{
		"landscaper": {Type: "landscaper.gardener.cloud/kubernetes-cluster", Config: []byte(`{"kubeconfig":"x"}`)},
	}}
	x := newProvider("test").installations
	x.targets = func() *providerTargets { return pt }
	x.allowed = func() *allowedDeployers { return nil }
	bp, err := os.ReadFile(filepath.Join(exportFailsForSecret(t), "blueprint.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	f := remoteFields(t, x, map[string]any{
		"name":      "app",
		"blueprint": map[string]any{"filesystem": map[string]string{"blueprint.yaml": string(bp)}},
		attrSensitiveImports: map[string]any{
			"value": map[string]string{"tenant": tenantSecret, "region": "eu-old-1"},
			"type":  []any{"object", map[string]string{"tenant": "string", "region": "string"}},
		},
		attrLandscaperCluster: map[string]any{"target": "landscaper", "namespace": "ls"},
	})
	run, ps := x.renderRemote(context.Background(), f, pt)
	if ps.errors() || run == nil {
		t.Fatalf("renderRemote: %v", ps)
	}
	// What Landscaper v1.4 writes for a failing export execution
	// (installations controller, handlePhaseCompleting).
	lsErr := &lscluster.Error{Operation: "handlePhaseCompleting", Reason: "ConstructExports",
		Message: `unable to execute export template x: error calling fail: region retired for tenant acme-corp-tenant`}
	tree := &lscluster.Tree{Phase: "Failed", JobID: "j", JobIDFinished: "j", LastError: lsErr,
		Installations: map[string]lscluster.TreeNode{"": {Phase: "Failed", LastError: lsErr}}}
	for _, secrets := range []bool{true, false} {
		st := remoteStatus(tree, run.mask, secrets)
		texts := []string{st.LastError.Message}
		for _, pr := range treeProblems(st, run.sec) {
			texts = append(texts, pr.summary+"\n"+pr.detail)
		}
		if shows := strings.Contains(strings.Join(texts, "\n"), "acme"); shows == secrets {
			t.Errorf("tree holding secrets %v: the message shows %v: %q", secrets, shows, texts)
		}
	}
}
