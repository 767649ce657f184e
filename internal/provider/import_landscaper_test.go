package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
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
