package provider

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// maskingPassword is the canary of the masking tests: a sensitive import.
const maskingPassword = "p4ss-w0rd-sec-61"

// maskingCanaries are the canary and everything the masking blueprint
// (testdata/installation/masking) makes of it, with the literal data of
// its Secret and the config of the target a sub-installation exports:
// none of them may appear in a plan, a state attribute that is not
// sensitive, a log or a diagnostic.
func maskingCanaries() []string {
	pw := maskingPassword
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	sha := func(s string) string { sum := sha256.Sum256([]byte(s)); return hex.EncodeToString(sum[:]) }
	return []string{
		pw, b64(pw), strings.ToUpper(pw), sha(pw), "Basic " + b64("admin:"+pw), b64("admin:" + pw), pw[:9],
		"tok-" + pw, b64("tok-" + pw), sha(pw)[:12],
		"literal-api-key-1234",
		"exported-target-t0ken-4242", sha("exported-target-t0ken-4242"),
	}
}

func maskingConfig(t *testing.T, plain string) string {
	dir, err := filepath.Abs(filepath.Join("testdata", "installation", "masking"))
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf(`
resource "landscaper_installation" "app" {
  name              = "app"
  blueprint         = { path = %q }
  imports           = { plain = %q }
  sensitive_imports = { password = %q }
}`, dir, plain, maskingPassword)
}

// noCanaries fails when a canary appears in what a plan shows in clear:
// every attribute but the sensitive ones.
type noCanaries struct{ canaries []string }

func (c noCanaries) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	for _, rc := range req.Plan.ResourceChanges {
		after, _ := rc.Change.After.(map[string]any)
		for attr, v := range after {
			if attr == attrSensitiveImports || attr == attrSensitiveExports {
				continue
			}
			if s := c.find(fmt.Sprint(v)); s != "" {
				resp.Error = fmt.Errorf("%s: %s shows %q: %v", rc.Address, attr, s, v)
				return
			}
		}
	}
}

func (c noCanaries) find(text string) string {
	for _, s := range c.canaries {
		if strings.Contains(text, s) {
			return s
		}
	}
	return ""
}

// Masking by derivation: whatever a template makes of a secret (base64,
// upper case, a hash, a basic-auth header, a substring, YAML, JSON, an
// indented block, a Spiff expression, a concatenation), the rendered
// deploy items show it masked, in the plan and in state; a Secret's
// literal data is masked too; an export a secret influenced lands in
// sensitive_exports, and flows masked into a sibling, as does an exported
// target's config. Values no secret touched stay readable.
func TestAccInstallation_maskingByDerivation(t *testing.T) {
	t.Parallel()
	res := "landscaper_installation.app"
	config := func(key string) tfjsonpath.Path {
		return tfjsonpath.New(attrDeployItems).AtMapKey(key).AtMapKey("config")
	}
	has := func(key, re string) statecheck.StateCheck {
		return statecheck.ExpectKnownValue(res, config(key), knownvalue.StringRegexp(regexp.MustCompile(re)))
	}
	canaries := noCanaries{maskingCanaries()}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:           maskingConfig(t, "blue"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{canaries}},
				ConfigStateChecks: []statecheck.StateCheck{
					has("transforms", `"b64":"\*\*\*"`),
					has("transforms", `"upper":"\*\*\*"`),
					has("transforms", `"sha":"\*\*\*"`),
					// The base64 of "admin:" and the secret ends in the
					// secret's own base64 (six bytes make whole groups), a
					// form masked wherever it appears: only "admin:" shows.
					has("transforms", `"basic":"Basic YWRtaW46\*\*\*"`),
					has("transforms", `"sub":"\*\*\*"`),
					has("transforms", `"yaml":"pw: \*\*\*"`),
					has("transforms", `"json":"\{\\"pw\\":\\"\*\*\*\\"\}"`),
					has("transforms", `"indented":"    \*\*\*"`),
					// The secret part of a concatenation is masked, the rest shows.
					has("transforms", `"concat":"blue-\*\*\*"`),
					has("transforms", `"plain":"blue"`),
					has("spiffed", `"joined":"user:\*\*\*"`),
					has("spiffed", `"plain":"blue"`),
					has("secret", `"stringData":\{"api-key":"\*\*\*"\}`),
					has("secret", `"name":"literal"`),
					has("producer/issue", `"token":"tok-\*\*\*"`),
					has("consumer/use", `"token":"\*\*\*"`),
					has("consumer/use", `"kube":"\*\*\*"`),
					has("consumer/use", `"note":"public-note"`),
					statecheck.ExpectKnownValue(res, tfjsonpath.New("exports"), knownvalue.ObjectExact(map[string]knownvalue.Check{
						"fromSibling": knownvalue.Null(),
						"digest":      knownvalue.Null(),
						"greeting":    knownvalue.StringExact("hello-blue"),
					})),
					statecheck.ExpectKnownValue(res, tfjsonpath.New(attrSensitiveExports), knownvalue.ObjectExact(map[string]knownvalue.Check{
						"fromSibling": knownvalue.StringExact("tok-" + maskingPassword),
						"digest":      knownvalue.StringRegexp(regexp.MustCompile(`^[0-9a-f]{12}$`)),
					})),
					noCanariesInState{res, canaries, nil},
				},
			},
			{
				// A new plain value renders the consumer again at plan time,
				// from the producer's exports of the last apply.
				Config: maskingConfig(t, "green"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(res, plancheck.ResourceActionUpdate),
						plancheck.ExpectKnownValue(res, config("consumer/use"), knownvalue.StringRegexp(regexp.MustCompile(
							`"kube":"\*\*\*","note":"public-note","plain":"green","token":"\*\*\*"`))),
						canaries,
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{noCanariesInState{res, canaries, nil}},
			},
		},
	})
}

// noCanariesInState fails when a canary is in a state attribute that is
// not sensitive.
type noCanariesInState struct {
	res      string
	canaries noCanaries
	// skip are attributes given in clear on purpose.
	skip []string
}

func (c noCanariesInState) CheckState(_ context.Context, req statecheck.CheckStateRequest, resp *statecheck.CheckStateResponse) {
	for _, r := range req.State.Values.RootModule.Resources {
		if r.Address != c.res {
			continue
		}
		for attr, v := range r.AttributeValues {
			if attr == attrSensitiveImports || attr == attrSensitiveExports || slices.Contains(c.skip, attr) {
				continue
			}
			if s := c.canaries.find(fmt.Sprint(v)); s != "" {
				resp.Error = fmt.Errorf("%s: %s holds %q: %v", r.Address, attr, s, v)
				return
			}
		}
	}
}

// Landscaper's guided tour (import-export/export-parameters) exports a
// ServiceAccount's token read from its Secret: fromResource names the
// ServiceAccount, fromObjectRef follows .secrets[0] to the Secret. Here
// that export lands in sensitive_exports, null in exports, beside an
// export read from a ConfigMap that stays readable; the Secret's literal
// data is masked in deploy_items.
func TestAccInstallation_secretReadExportIsSensitive(t *testing.T) {
	testTokenExport(t, "tour", false, statecheck.ExpectKnownValue("landscaper_installation.tour",
		tfjsonpath.New(attrDeployItems).AtMapKey("account").AtMapKey("config"),
		knownvalue.StringRegexp(regexp.MustCompile(`"stringData":\{"token":"\*\*\*"\}`))))
}

// Issue 25: export sensitivity is decided export by export. One item
// exports a token it reads from a Secret and a greeting it reads from a
// ConfigMap: the token is sensitive, the greeting is not, though both
// come from the same item.
func TestAccInstallation_exportBesideSecretExportIsPlain(t *testing.T) {
	testTokenExport(t, "beside", true)
}

// testTokenExport applies an installation named name whose item "account"
// exports a ServiceAccount's token read from its Secret and whose
// greeting, read from a ConfigMap, comes from that item too (sameItem) or
// from an item of its own. The token, a plain import, must end in
// sensitive_exports only and nowhere else in state; the greeting in
// exports.
func testTokenExport(t *testing.T, name string, sameItem bool, checks ...statecheck.StateCheck) {
	t.Helper()
	if kubeEnv == nil {
		t.Skip("acceptance tests only (TF_ACC)")
	}
	token := "sa-t0ken-" + strings.ToLower(rand.Text())
	greetingItem, greetingExport := "account", `
                - key: greeting
                  jsonPath: .data.greeting
                  fromResource: {apiVersion: v1, kind: ConfigMap, name: NAME-greeting, namespace: default}`
	greetingManifest := `
              - policy: manage
                manifest: {apiVersion: v1, kind: ConfigMap, metadata: {name: NAME-greeting, namespace: default}, data: {greeting: hello}}`
	accountExtra, greetingItems := greetingManifest, ""
	if !sameItem {
		greetingItem, accountExtra = "greeting", ""
		greetingItems = `
        - name: greeting
          type: landscaper.gardener.cloud/kubernetes-manifest
          target: {import: cluster}
          config:
            apiVersion: manifest.deployer.landscaper.gardener.cloud/v1alpha2
            kind: ProviderConfiguration
            manifests:` + greetingManifest + `
            exports:
              exports:` + greetingExport
		greetingExport = ""
	}
	bp := strings.ReplaceAll(`apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: cluster, type: target, targetType: landscaper.gardener.cloud/kubernetes-cluster}
  - {name: token, type: data, schema: {type: string}}
exports:
  - {name: token, type: data, schema: {type: string}}
  - {name: greeting, type: data, schema: {type: string}}
deployExecutions:
  - name: x
    type: GoTemplate
    template: |
      deployItems:
        - name: account
          type: landscaper.gardener.cloud/kubernetes-manifest
          target: {import: cluster}
          config:
            apiVersion: manifest.deployer.landscaper.gardener.cloud/v1alpha2
            kind: ProviderConfiguration
            manifests:
              - policy: manage
                manifest: {apiVersion: v1, kind: Secret, metadata: {name: NAME-token, namespace: default}, stringData: {token: {{ .imports.token }}}}
              - policy: manage
                manifest: {apiVersion: v1, kind: ServiceAccount, metadata: {name: NAME-sa, namespace: default}, secrets: [{name: NAME-token}]}`+accountExtra+`
            exports:
              exports:
                - key: token
                  jsonPath: .secrets[0]
                  fromResource: {apiVersion: v1, kind: ServiceAccount, name: NAME-sa, namespace: default}
                  fromObjectRef: {apiVersion: v1, kind: Secret, jsonPath: .data.token}`+greetingExport+greetingItems+`
exportExecutions:
  - name: x
    type: GoTemplate
    template: |
      exports:
        token: {{ .deployitems.account.token }}
        greeting: {{ .deployitems.`+greetingItem+`.greeting }}
`, "NAME", name)
	cfg := fmt.Sprintf(`
resource "landscaper_installation" %[1]q {
  name      = %[1]q
  blueprint = { filesystem = { "blueprint.yaml" = %[2]q } }
  imports   = { token = %[3]q }
  targets = {
    cluster = {
      type   = "landscaper.gardener.cloud/kubernetes-cluster"
      config = yamlencode({ kubeconfig = file(%[4]q) })
    }
  }
}
`, name, bp, token, kubeEnv.KubeconfigPath())
	res := "landscaper_installation." + name
	b64 := base64.StdEncoding.EncodeToString([]byte(token))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: cfg,
			ConfigStateChecks: append([]statecheck.StateCheck{
				statecheck.ExpectKnownValue(res, tfjsonpath.New("exports"), knownvalue.ObjectExact(map[string]knownvalue.Check{
					"token":    knownvalue.Null(),
					"greeting": knownvalue.StringExact("hello"),
				})),
				statecheck.ExpectKnownValue(res, tfjsonpath.New(attrSensitiveExports), knownvalue.ObjectExact(map[string]knownvalue.Check{
					"token": knownvalue.StringExact(b64),
				})),
				// The token is a plain import here: only the Secret's data
				// masking keeps it out of deploy_items.
				noCanariesInState{res, noCanaries{[]string{token, b64}}, []string{"imports"}},
			}, checks...),
		}},
	})
}

// A sub-installation named after a secret is shown as *** in the keys of
// the items below it, in the plan and in state, and a second plan (which
// reads those keys back from the prior state) plans nothing; a sibling
// named otherwise keeps its name (review 3 of the rounds, F8). The item's
// own name is masked too: its shadow is under another path, so nothing is
// compared with it. The status's installations map still shows the node
// by its name (the guide says so), hence "status" is not scanned.
func TestAccInstallation_maskingSubNamedAfterSecret(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	child := "apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: Blueprint\ndeployExecutions:\n  - name: x\n" +
		"    type: GoTemplate\n    template: |\n      deployItems:\n        - name: app\n" +
		"          type: landscaper.gardener.cloud/mock\n          config: {export: {ok: fine}}\n"
	quoted := fmt.Sprintf("%q", child)
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
          name: db-{{ .imports.tenant }}
          blueprint: {filesystem: {blueprint.yaml: ` + quoted + `}}
        - apiVersion: landscaper.gardener.cloud/v1alpha1
          kind: InstallationTemplate
          name: static
          blueprint: {filesystem: {blueprint.yaml: ` + quoted + `}}
`
	if err := os.WriteFile(filepath.Join(dir, "blueprint.yaml"), []byte(bp), 0o600); err != nil {
		t.Fatal(err)
	}
	config := fmt.Sprintf(`
resource "landscaper_installation" "app" {
  name              = "app"
  blueprint         = { path = %q }
  sensitive_imports = { tenant = "acme-corp-tenant" }
}`, dir)
	res := "landscaper_installation.app"
	canaries := noCanaries{[]string{"acme-corp-tenant", "db-acme"}}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:           config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{canaries}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(res, tfjsonpath.New(attrDeployItems).AtMapKey("***/***").AtMapKey("config"),
						knownvalue.StringExact(`"***"`)),
					statecheck.ExpectKnownValue(res, tfjsonpath.New(attrDeployItems).AtMapKey("static/app").AtMapKey("config"),
						knownvalue.StringExact(`{"export":{"ok":"fine"}}`)),
					noCanariesInState{res, canaries, []string{"status"}},
				},
			},
			{
				Config:           config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
		},
	})
}
