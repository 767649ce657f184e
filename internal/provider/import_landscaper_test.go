package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/installation"
)

// An import from Landscaper that cannot be done says why, naming what it
// looked up, and imports nothing: an ID of the wrong shape, a provider
// target the provider does not define, a cluster that does not answer.
// (The take-over itself is internal/e2e's TestImportFromLandscaper: it
// needs Terraform's generated configuration and a second apply.)
func TestAccImportFromLandscaper_badInput(t *testing.T) {
	config := `
provider "landscaper" {
  targets = {
    landscaper = {
      type = "landscaper.gardener.cloud/kubernetes-cluster"
      config = yamlencode({ kubeconfig = yamlencode({
        apiVersion        = "v1"
        kind              = "Config"
        clusters          = [{ name = "c", cluster = { server = "https://127.0.0.1:1" } }]
        users             = [{ name = "u", user = { token = "t" } }]
        contexts          = [{ name = "c", context = { cluster = "c", user = "u" } }]
        "current-context" = "c"
      }) })
    }
  }
}

resource "terraform_data" "anchor" {}
`
	step := func(id, want string) resource.TestStep {
		return resource.TestStep{
			Config: config, ResourceName: "landscaper_installation.taken", ImportState: true, ImportStateId: id,
			ImportStateKind: resource.ImportBlockWithID, GenerateConfig: true,
			ExpectError: spaced(want),
		}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config},
			step("landscaper/cu-example", `Invalid import ID.*want <provider target>/<namespace>/<installation>.*it has 2 part`),
			step("landscaper/cu_example/hello-world", `Invalid import ID.*the namespace "cu_example" is not a namespace name`),
			step("nowhere/cu-example/hello-world", `Provider target not defined.*provider target "nowhere".*it defines: landscaper`),
			step("landscaper/cu-example/hello-world", `Cannot read the Landscaper installation.*Installation cu-example/hello-world.*"landscaper".*cannot be reached`),
		},
	})
}

// A cluster that answers but is no Landscaper resource cluster (the test
// control plane has none of Landscaper's CRDs): the diagnostic names the
// installation, the provider target and the API group it looked for.
func TestAccImportFromLandscaper_notALandscaperCluster(t *testing.T) {
	if kubeEnv == nil {
		t.Skip("acceptance tests only (TF_ACC): TestMain starts the control plane for them")
	}
	config := fmt.Sprintf(`
provider "landscaper" {
  targets = {
    landscaper = { type = "landscaper.gardener.cloud/kubernetes-cluster", config = yamlencode({ kubeconfig = file(%q) }) }
  }
}

resource "terraform_data" "anchor" {}
`, kubeEnv.KubeconfigPath())
	step := func(id, want string) resource.TestStep {
		return resource.TestStep{
			Config: config, ResourceName: "landscaper_installation.taken", ImportState: true, ImportStateId: id,
			ImportStateKind: resource.ImportBlockWithID, GenerateConfig: true,
			ExpectError: spaced(want),
		}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config},
			step("landscaper/cu-example/hello-world", `Cannot read the Landscaper installation.*Installation cu-example/hello-world.*`+
				`"landscaper".*not a Landscaper resource cluster.*serves no landscaper.gardener.cloud/v1alpha1.*CRDs are not installed`),
		},
	})
}

// The line the Secret-imports warning gives must parse as HCL whatever the
// installation and import are called: names Landscaper allows (dots,
// dashes, leading digits) are not all Terraform identifiers.
func TestSensitiveImportsHintNames(t *testing.T) {
	for _, c := range []struct{ in, ident, key string }{
		{"password", "password", "password"},
		{"api-token", "api_token", `"api-token"`},
		{"db.password", "db_password", `"db.password"`},
		{"9lives", "_9lives", `"9lives"`},
	} {
		if got := hclIdentifier(c.in); got != c.ident {
			t.Errorf("hclIdentifier(%q) = %q, want %q", c.in, got, c.ident)
		}
		if got := hclKey(c.in); got != c.key {
			t.Errorf("hclKey(%q) = %q, want %q", c.in, got, c.key)
		}
	}
}

// The imported exports stand in the first plan only while the run cannot
// compute anything else: inputs as imported, no secrets, nothing run yet.
func TestImportedExportsHoldOnlyForTheImportedInputs(t *testing.T) {
	exports := tftypes.NewValue(tftypes.Object{AttributeTypes: map[string]tftypes.Type{"greeting": tftypes.String}},
		map[string]tftypes.Value{"greeting": tftypes.NewValue(tftypes.String, "hello, world")})
	state := func() map[string]tftypes.Value {
		f := map[string]tftypes.Value{"exports": exports, attrSensitiveExports: dynamicNull}
		for _, a := range importedInputs {
			f[a] = tftypes.NewValue(tftypes.String, "as imported "+a)
		}
		f[attrSensitiveImports] = dynamicNull
		return f
	}
	imported := &installation.Status{}
	if got, ok := importedExports(state(), state(), imported, nil); !ok || !got.Equal(exports) {
		t.Fatalf("inputs as imported: exports %v (kept %v), want the imported ones", got, ok)
	}
	changed := state()
	changed["imports"] = tftypes.NewValue(tftypes.String, "edited")
	secret := state()
	secret[attrSensitiveImports] = tftypes.NewValue(tftypes.String, "from a variable")
	for name, c := range map[string]struct {
		config map[string]tftypes.Value
		st     *installation.Status
	}{
		"imports edited":     {changed, imported},
		"secret imports set": {secret, imported},
		"already run":        {state(), &installation.Status{JobID: "job-1"}},
		"no status":          {state(), nil},
	} {
		if _, ok := importedExports(state(), c.config, c.st, nil); ok {
			t.Errorf("%s: the imported exports were kept", name)
		}
	}
	if _, ok := importedExports(nil, state(), imported, nil); ok {
		t.Error("a create kept exports from nowhere")
	}
}
