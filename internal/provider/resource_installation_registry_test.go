package provider

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/ctf/ctftest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/ocitest"
)

const registryPassword = "registry-pa55-9f3c2"

// exampleComponent is examples/installation's component, published as
// `ocm add componentversions` would store it.
func exampleComponent(t *testing.T, archive bool) []acctest.PublishedVersion {
	t.Helper()
	return acctest.Publish(t, archive, filepath.Join("..", "..", "examples", "installation", "component-constructor.yaml"))
}

func pushAll(t *testing.T, reg *ocitest.Registry, layout ocitest.Layout, versions []acctest.PublishedVersion) {
	t.Helper()
	acctest.Push(t, reg, layout, versions)
}

func ctfVersions(versions []acctest.PublishedVersion) []ctftest.Version {
	return acctest.CTFVersions(versions)
}

// exampleInstallation is examples/installation's resource with its
// component from a repository: providerBlock configures the repository,
// component the extra component attributes.
func exampleInstallation(providerBlock, component string) string {
	scripts, _ := filepath.Abs(filepath.Join("..", "..", "examples", "installation", "scripts"))
	return fmt.Sprintf(`
provider "landscaper" {
  cache_dir = %q
  %s
}

variable "environment" {
  type    = string
  default = "staging"
}

resource "landscaper_installation" "app" {
  name      = "app"
  blueprint = { ref = "blueprint" }
  component = {
    name    = "github.com/acme/app"
    version = "v1.0.0"
    %s
  }
  imports = {
    environment = var.environment
    replicas    = 3
    scripts     = %q
  }
}
`, "%CACHE%", providerBlock, component, scripts)
}

func withCache(t *testing.T, cfg string) string {
	return strings.Replace(cfg, "%CACHE%", t.TempDir(), 1)
}

var exampleExports = []statecheck.StateCheck{
	statecheck.ExpectKnownValue("landscaper_installation.app", tfjsonpath.New("exports").AtMapKey("url"),
		knownvalue.StringExact("https://app.staging.example.com")),
	statecheck.ExpectKnownValue("landscaper_installation.app", tfjsonpath.New("status").AtMapKey("phase"), knownvalue.StringExact("Succeeded")),
}

// noSecretInState fails when the registry password is anywhere in state.
func noSecretInState(s *terraform.State) error {
	for _, m := range s.Modules {
		for name, r := range m.Resources {
			for k, v := range r.Primary.Attributes {
				if strings.Contains(v, registryPassword) {
					return fmt.Errorf("%s.%s holds the registry password", name, k)
				}
			}
		}
	}
	return nil
}

// examples/installation from a TLS registry with basic auth, trusted
// through SSL_CERT_FILE: apply, an empty plan that asks the registry for
// one manifest per component version and downloads nothing, a re-pushed
// plan with the registry down served from the cache, and a re-pushed
// version with new content planned as an update.
func TestAccInstallation_fromRegistry(t *testing.T) {
	reg := ocitest.Start(t, ocitest.Options{CA: registryCA, Auth: ocitest.Basic, Username: "acme-ci", Password: registryPassword})
	pushAll(t, reg, ocitest.OCM, exampleComponent(t, false))
	cfg := withCache(t, exampleInstallation(fmt.Sprintf(`
  repository_context   = { type = "OCIRegistry", baseUrl = "%s/ocm" }
  registry_credentials = { %q = { username = "acme-ci", password = %q } }`, reg.Host, reg.Host, registryPassword), ""))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: cfg, ConfigStateChecks: exampleExports, Check: noSecretInState},
			{
				PreConfig:        reg.ResetCounts,
				Config:           cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check: func(*terraform.State) error {
					// Terraform plans twice in this step (plan, then the
					// refresh-plan of the no-op apply): two component versions,
					// one manifest request each per plan, no blob.
					n := reg.Counts()
					if n["blob"] != 0 || n["manifest"] > 4 || n["manifest"] == 0 {
						return fmt.Errorf("a settled plan made %v requests", n)
					}
					return nil
				},
			},
			{
				PreConfig: func() {
					reg.SetDown(true)
				},
				Config:           cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{
				// The same version re-pushed with another monitoring blueprint.
				PreConfig: func() {
					reg.SetDown(false)
					versions := exampleComponent(t, false)
					for i := range versions {
						if versions[i].Name == "github.com/acme/monitoring" {
							versions[i].Blobs = append(versions[i].Blobs, acctest.PublishedBlob{MediaType: "text/plain", Data: []byte("extra layer")})
						}
					}
					pushAll(t, reg, ocitest.OCM, versions)
				},
				Config:   cfg,
				PlanOnly: true, ExpectNonEmptyPlan: true,
			},
		},
	})
}

// The same component from a CTF directory, a CTF archive and a component
// archive: no registry at all.
func TestAccInstallation_fromFiles(t *testing.T) {
	dir := t.TempDir()
	versions := exampleComponent(t, false)
	ctfFiles := ctftest.Files(t, ctfVersions(versions)...)
	repos := map[string]string{
		"ctf-dir": ctftest.WriteDir(t, filepath.Join(dir, "ctf"), ctfFiles),
		"ctf-tgz": ctftest.WriteArchive(t, filepath.Join(dir, "transport.tgz"), ctfFiles),
	}
	for name, repo := range repos {
		t.Run(name, func(t *testing.T) {
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: protoV6ProviderFactories,
				Steps: []resource.TestStep{
					{Config: withCache(t, exampleInstallation("", fmt.Sprintf("repository = %q", repo))), ConfigStateChecks: exampleExports},
					{Config: withCache(t, exampleInstallation("", fmt.Sprintf("repository = %q", repo))), PlanOnly: true},
				},
			})
		})
	}
	// A component archive holds one version: the referenced monitoring
	// component comes from a constructor file, which wins.
	t.Run("component-archive", func(t *testing.T) {
		var app acctest.PublishedVersion
		for _, v := range exampleComponent(t, true) {
			if v.Name == "github.com/acme/app" {
				app = v
			}
		}
		files := map[string][]byte{"component-descriptor.yaml": app.Descriptor}
		for _, b := range app.Blobs {
			files["blobs/"+strings.Replace(b.Digest, ":", ".", 1)] = b.Data
		}
		ca := ctftest.WriteArchive(t, filepath.Join(dir, "app-ca.tgz"), files)
		monitoring := filepath.Join(dir, "monitoring-constructor.yaml")
		src, _ := os.ReadFile(filepath.Join("..", "..", "examples", "installation", "component-constructor.yaml"))
		_, mon, _ := strings.Cut(string(src), "\n  - name: github.com/acme/monitoring")
		bp, _ := filepath.Abs(filepath.Join("..", "..", "examples", "installation", "blueprints", "monitoring"))
		mon = "components:\n  - name: github.com/acme/monitoring" + strings.Replace(mon, "./blueprints/monitoring", bp, 1)
		acctest.WriteFile(t, monitoring, mon)
		resource.ParallelTest(t, resource.TestCase{
			ProtoV6ProviderFactories: protoV6ProviderFactories,
			Steps: []resource.TestStep{{
				Config:            withCache(t, exampleInstallation("", fmt.Sprintf("repository = %q\n    constructors = [%q]", ca, monitoring))),
				ConfigStateChecks: exampleExports,
			}},
		})
	})
}

// Legacy Gardener layouts behind a registry that hands out bearer tokens.
func TestAccInstallation_fromLegacyRegistryWithBearerTokens(t *testing.T) {
	reg := ocitest.Start(t, ocitest.Options{CA: registryCA, Auth: ocitest.Bearer, Username: "acme-ci", Password: registryPassword})
	versions := exampleComponent(t, false)
	pushAll(t, reg, ocitest.Legacy, versions[:1])
	pushAll(t, reg, ocitest.LegacyJSON, versions[1:])
	cfg := withCache(t, exampleInstallation(fmt.Sprintf(`
  registry_credentials = { %q = { username = "acme-ci", password = %q } }`, reg.Host, registryPassword),
		fmt.Sprintf(`repository_context = { type = "ociRegistry", baseUrl = "%s/ocm" }`, reg.Host)))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps:                    []resource.TestStep{{Config: cfg, ConfigStateChecks: exampleExports, Check: noSecretInState}},
	})
}

// What goes wrong with a repository is a plan-time error on component
// that names the repository and what was looked up; nothing runs.
func TestAccInstallation_registryErrors(t *testing.T) {
	reg := ocitest.Start(t, ocitest.Options{CA: registryCA, Auth: ocitest.Basic, Username: "acme-ci", Password: registryPassword})
	pushAll(t, reg, ocitest.OCM, exampleComponent(t, false)[:1]) // monitoring is missing
	down := ocitest.Start(t, ocitest.Options{CA: registryCA})
	down.SetDown(true)
	creds := fmt.Sprintf(`registry_credentials = { %q = { username = "acme-ci", password = %q } }`, reg.Host, registryPassword)
	repo := func(host string) string {
		return fmt.Sprintf(`repository_context = { type = "OCIRegistry", baseUrl = "%s/ocm" }`, host)
	}
	// A component whose descriptor is malformed, and one whose blueprint
	// has an access type nothing reads.
	reg.PushComponent(t, "ocm", "github.com/acme/broken", "v1.0.0", []byte("meta: {schemaVersion: v2}\ncomponent: {name: github.com/acme/broken, version: v1.0.0, resources: [{name: x}]}\n"), ocitest.OCM)
	reg.PushComponent(t, "ocm", "github.com/acme/s3", "v1.0.0", []byte(`meta: {schemaVersion: v2}
component:
  name: github.com/acme/s3
  version: v1.0.0
  provider: acme
  repositoryContexts: []
  sources: []
  componentReferences: []
  resources:
  - {name: blueprint, version: v1.0.0, type: landscaper.gardener.cloud/blueprint, relation: external, access: {type: s3, bucket: b, key: bp.tgz}}
`), ocitest.OCM)
	climbing := ctftest.WriteArchive(t, filepath.Join(t.TempDir(), "evil.tar"), map[string][]byte{"../../etc/evil": []byte("x")})
	other := func(name string) string {
		return fmt.Sprintf(`repository_context = { type = "OCIRegistry", baseUrl = "%s/ocm" }`, reg.Host) + "\n" + creds + fmt.Sprintf("\n# %s", name)
	}
	cases := map[string]struct{ provider, component, want string }{
		"malformed descriptor": {other("broken"), "", `(?s)component.*github.com/acme/broken.*resources\[0\]: name and type are required`},
		"unsupported access":   {other("s3"), "", `(?s)resource "blueprint" of component github.com/acme/s3:v1.0.0: unsupported access type "s3"`},
		"archive climbing out": {"", fmt.Sprintf("repository = %q", climbing), `(?s)entry "../../etc/evil" points outside the archive`},
		"missing reference": {creds + "\n" + repo(reg.Host), "",
			`(?s)component.*reference "monitoring".*` + regexp.QuoteMeta(reg.Host+"/ocm/component-descriptors/github.com/acme/monitoring:v2.1.0")},
		"wrong password": {fmt.Sprintf(`registry_credentials = { %q = { username = "acme-ci", password = "nope" } }`, reg.Host) + "\n" + repo(reg.Host), "",
			`(?s)refused access.*401.*credentials tried: registry_credentials`},
		"no credentials": {repo(reg.Host), "", `(?s)refused access.*anonymous access`},
		"unreachable":    {repo(down.Host), "", `(?s)(cannot be reached|did not answer)`},
		"missing file":   {"", `repository = "/nonexistent/transport.tgz"`, `(?s)repository /nonexistent/transport.tgz`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cfg := withCache(t, exampleInstallation(tc.provider, tc.component))
			for _, c := range []string{"broken", "s3"} {
				if strings.HasSuffix(tc.provider, "# "+c) {
					cfg = strings.Replace(cfg, `"github.com/acme/app"`, `"github.com/acme/`+c+`"`, 1)
				}
			}
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: protoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config:      cfg,
					PlanOnly:    true,
					ExpectError: regexp.MustCompile(strings.ReplaceAll(tc.want, " ", `\s+`)),
				}},
			})
		})
	}
}

// The guided tour's component archive, as the OCM CLI wrote it, plans
// unchanged: its blueprint blob is read from the archive, and its template
// reads the real descriptor (getResourceKey, getResource). Its chart is an
// OCI artifact on the internet, so the test stops at the plan.
func TestAccInstallation_guidedTourComponentArchive(t *testing.T) {
	archive, err := filepath.Abs(filepath.Join("..", "ocm", "ctf", "testdata", "guided-tour-helm-chart"))
	if err != nil {
		t.Fatal(err)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
provider "landscaper" {
  cache_dir = %q
}

resource "landscaper_installation" "tour" {
  name      = "helm-chart"
  blueprint = { ref = "blueprint" }
  component = {
    name       = "github.com/gardener/landscaper-examples/guided-tour/helm-chart"
    version    = "1.0.0"
    repository = %q
  }
  targets = {
    cluster = {
      type   = "landscaper.gardener.cloud/kubernetes-cluster"
      config = jsonencode({ kubeconfig = "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n" })
    }
  }
}
`, t.TempDir(), archive),
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
		}},
	})
}
