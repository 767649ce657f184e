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
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/privatestate"
)

// woConfig is the fixture's configuration with v given write-only.
func (f *installationFixture) woConfig(v string, version int64) tftypes.Value {
	obj := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"v": tftypes.String}}
	return fill(f.x.t, map[string]any{
		"name":                 "app",
		"blueprint":            map[string]any{"path": "/bp"},
		attrSensitiveImportsWO: tftypes.NewValue(obj, map[string]tftypes.Value{"v": tftypes.NewValue(tftypes.String, v)}),
		attrWOVersion:          tftypes.NewValue(tftypes.Number, version),
	})
}

// Write-only imports at the protocol: refused when the client cannot
// handle them (Terraform before 1.11); read from the configuration at
// plan and apply, and null in planned and new state; neither state nor
// private state holds the value; a new value under the same version plans
// nothing.
func TestWriteOnlyImportsAtTheProtocol(t *testing.T) {
	const secret = "wo-s3cr3t-value"
	f := newInstallationFixture(t, &treeBP{subs: 1, items: 2})
	ctx := context.Background()
	cfg := f.dv(t, f.woConfig(secret, 1))
	for _, caps := range []*tfprotov6.ValidateResourceConfigClientCapabilities{nil, {WriteOnlyAttributesAllowed: true}} {
		resp, _ := f.s.ValidateResourceConfig(ctx, &tfprotov6.ValidateResourceConfigRequest{TypeName: installationType,
			Config: cfg, ClientCapabilities: caps})
		refused := false
		for _, d := range resp.Diagnostics {
			refused = refused || d.Summary == "Write-only attribute not supported"
		}
		if refused != (caps == nil) {
			t.Errorf("client capabilities %+v: refused %v", caps, refused)
		}
	}

	plan, applied := f.step(t, f.null, nil, f.woConfig(secret, 1))
	for what, dv := range map[string]*tfprotov6.DynamicValue{"planned": plan.PlannedState, "new": applied.NewState} {
		v, diags := decode(f.x, dv)
		if diags != nil {
			t.Fatal(diags[0].Detail)
		}
		if wo := fields(v)[attrSensitiveImportsWO]; !wo.IsNull() {
			t.Errorf("%s state holds sensitive_imports_wo: %v", what, wo)
		}
		if what == "new" {
			if strings.Contains(v.String(), secret) {
				t.Errorf("the new state holds the secret: %s", v)
			}
		}
	}
	for _, d := range applied.Diagnostics {
		t.Fatalf("apply: %s: %s", d.Summary, d.Detail)
	}
	doc, err := privatestate.Decode(applied.Private)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(doc.JSON), secret) {
		t.Errorf("private state holds the secret: %s", doc.JSON)
	}

	// A new value under the same version: nothing to do; a new version:
	// the items run again.
	again, _ := f.s.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{TypeName: installationType,
		PriorState: applied.NewState, ProposedNewState: f.dv(t, f.woConfig("another", 1)), Config: f.dv(t, f.woConfig("another", 1)),
		PriorPrivate: applied.Private})
	prior, _ := decode(f.x, applied.NewState)
	planned, _ := decode(f.x, again.PlannedState)
	if !planned.Equal(prior) {
		d, _ := prior.Diff(planned)
		t.Errorf("a new write-only value under the same version plans changes: %v", d)
	}
	bumped, _ := f.s.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{TypeName: installationType,
		PriorState: applied.NewState, ProposedNewState: f.dv(t, f.woConfig("another", 2)), Config: f.dv(t, f.woConfig("another", 2)),
		PriorPrivate: applied.Private})
	planned, _ = decode(f.x, bumped.PlannedState)
	if fields(planned)["status"].IsKnown() && fields(fields(planned)["status"])["job_id"].Equal(fields(fields(prior)["status"])["job_id"]) {
		t.Error("a new version plans no job")
	}
}

// atRestExecHCL is an installation whose exec item gets the write-only
// password when execSecret is true, and is rendered at all when withExec
// is; the item's command appends its imports to <dir>/<OPERATION>. extra
// is added to the resource.
func atRestExecHCL(dir, password string, version int, withExec, execSecret bool, extra string) string {
	bp := `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: password, schema: {type: string}}
  - {name: withExec, schema: {type: boolean}}
  - {name: execSecret, schema: {type: boolean}}
deployExecutions:
  - name: x
    type: GoTemplate
    template: |
      deployItems:
        - name: fine
          type: landscaper.gardener.cloud/mock
          config: {providerStatus: {n: 1}}
      {{- if .imports.withExec }}
        - name: shell
          type: exec
          config:
            command: [sh, -c, 'cat "$IMPORTS_PATH" >> "` + dir + `/$OPERATION"; echo >> "` + dir + `/$OPERATION"']
            importValues: {password: {{ if .imports.execSecret }}{{ .imports.password | quote }}{{ else }}none{{ end }}}
      {{- end }}
`
	return fmt.Sprintf(`
resource "landscaper_installation" "app" {
  name                         = "app"
  blueprint                    = { filesystem = { "blueprint.yaml" = %q } }
  imports                      = { withExec = %t, execSecret = %t }
  sensitive_imports_wo         = { password = %q }
  sensitive_imports_wo_version = %d
%s
}
`, bp, withExec, execSecret, password, version, extra)
}

// With write-only imports, through Terraform: what would keep a secret is
// refused at plan time; a new password alone plans nothing and a new
// version runs the exec item with it; an exec item given the password is
// refused when it would be deleted (orphaned), its delete command never
// runs, and once rendered without the password it can go.
func TestAccInstallationAtRest_exec(t *testing.T) {
	dir := t.TempDir()
	runs := func(op string) string {
		b, _ := os.ReadFile(filepath.Join(dir, op))
		return string(b)
	}
	check := func(op string, want ...string) resource.TestCheckFunc {
		return func(*terraform.State) error {
			got := strings.Fields(strings.ReplaceAll(strings.ReplaceAll(runs(op), "{", " "), "}", " "))
			if fmt.Sprint(got) != fmt.Sprint(want) {
				return fmt.Errorf("%s runs: %q, want %q", op, got, want)
			}
			return nil
		}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      atRestExecHCL(dir, "pw-1", 1, true, true, `  sensitive_imports = { other = "x" }`),
				ExpectError: regexp.MustCompile(`sensitive_imports and sensitive_imports_wo\s+cannot be given together`),
			},
			{
				Config:      atRestExecHCL(dir, "pw-1", 1, true, true, `  targets = { c = { type = "landscaper.gardener.cloud/kubernetes-cluster", config = "{}" } }`),
				ExpectError: spaced(`Inline target config with write-only imports.*targets\["c"\] gives a target's config inline`),
			},
			{
				Config:      atRestExecHCL(dir, "pw-1", 1, true, true, `  rollout = { canary = { count = 1 } }`),
				ExpectError: spaced(`rollout cannot be used with sensitive_imports_wo`),
			},
			{
				Config: atRestExecHCL(dir, "pw-1", 1, true, true, ""),
				Check: resource.ComposeTestCheckFunc(check("RECONCILE", `"password":"pw-1"`),
					resource.TestCheckNoResourceAttr("landscaper_installation.app", attrSensitiveImportsWO)),
			},
			{
				// Terraform cannot see a new write-only value: nothing to do.
				Config:   atRestExecHCL(dir, "pw-2", 1, true, true, ""),
				PlanOnly: true,
			},
			{
				Config: atRestExecHCL(dir, "pw-2", 2, true, true, ""),
				Check:  check("RECONCILE", `"password":"pw-1"`, `"password":"pw-2"`),
			},
			{
				Config: atRestExecHCL(dir, "pw-2", 2, false, true, ""),
				ExpectError: spaced(`Deploy item cannot be deleted without its secret.*deploy item "shell" \(deploy_items\["shell"\]\) ` +
					`is no longer rendered, but a value of sensitive_imports_wo influenced its config`),
			},
			{
				// Rendered without the password, it runs once with a
				// config that is kept, and can then be deleted.
				PreConfig: func() {
					if r := runs("DELETE"); r != "" {
						t.Errorf("the refused delete ran: %q", r)
					}
				},
				Config: atRestExecHCL(dir, "pw-2", 2, true, false, ""),
				Check:  check("RECONCILE", `"password":"pw-1"`, `"password":"pw-2"`, `"password":"none"`),
			},
			{
				Config: atRestExecHCL(dir, "pw-2", 2, false, false, ""),
				Check:  check("DELETE", `"password":"none"`),
			},
		},
	})
}

// With write-only imports, an item named after a digest of the password
// would keep the digest in state (deploy_items' keys) and private state:
// refused at plan time, without the name.
func TestAccInstallationAtRest_nameFromSecret(t *testing.T) {
	bp := `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: password, schema: {type: string}}
deployExecutions:
  - name: x
    type: GoTemplate
    template: |
      deployItems:
        - name: db-{{ .imports.password | sha256sum | trunc 12 }}
          type: landscaper.gardener.cloud/mock
          config: {providerStatus: {n: 1}}
`
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
resource "landscaper_installation" "app" {
  name                         = "app"
  blueprint                    = { filesystem = { "blueprint.yaml" = %q } }
  sensitive_imports_wo         = { password = "pw-in-a-name-9" }
  sensitive_imports_wo_version = 1
}
`, bp),
			ExpectError: spaced(`a deploy item is named after a write-only secret, or exists only because of one`),
		}},
	})
}
