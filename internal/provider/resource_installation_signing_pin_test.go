//go:build unix

package provider

import (
	"context"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	helmregistry "helm.sh/helm/v3/pkg/registry"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/helm/helmtest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/ocitest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/signing"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/signing/signtest"
)

// What a verifying installation pins and refuses: the proofs of issue 18
// beside the descriptor-integrity ones (resource_installation_signing_strict_test.go).

// signedExampleWith is signedExample with any signing options (a
// certificate chain for CA verification).
func signedExampleWith(t *testing.T, o signtest.Options) []acctest.PublishedVersion {
	t.Helper()
	versions := digestedExample(t)
	for i := range versions {
		if versions[i].Name == "github.com/acme/app" {
			signed, err := signtest.Sign(versions[i].Descriptor, o)
			if err != nil {
				t.Fatal(err)
			}
			versions[i].Descriptor = signed
		}
	}
	return versions
}

// pinnedConfig is the configuration of the installation "pinned" of
// example.com/pinned 1.0.0 from the registry at host, verified with
// key's public key as signature acme; component holds further attributes
// of component (each with a leading ", "), rest further lines of the
// resource (indented two spaces, newline-terminated).
func pinnedConfig(t *testing.T, host string, key *rsa.PrivateKey, component, rest string) string {
	t.Helper()
	return fmt.Sprintf(`
provider "landscaper" {
  cache_dir          = %q
  repository_context = { type = "OCIRegistry", baseUrl = "%s/ocm" }
  verification_signatures = { acme = { public_key = %q } }
}

resource "landscaper_installation" "app" {
  name         = "pinned"
  blueprint    = { ref = "blueprint" }
  component    = { name = "example.com/pinned", version = "1.0.0"%s }
  verification = { signature_name = "acme" }
%s}
`, t.TempDir(), host, signtest.PublicKeyPEM(key), component, rest)
}

// clusterTarget is the targets attribute of an installation with the
// target cluster at kubeconfig.
func clusterTarget(kubeconfig string) string {
	return fmt.Sprintf(`  targets = {
    cluster = {
      type   = "landscaper.gardener.cloud/kubernetes-cluster"
      config = yamlencode({ kubeconfig = file(%q) })
    }
  }
`, kubeconfig)
}

// errorPattern turns a message into a pattern that survives Terraform's
// line wrapping.
func errorPattern(s string) *regexp.Regexp {
	return regexp.MustCompile("(?s)" + strings.ReplaceAll(strings.ReplaceAll(s, " ", `\s+`), "{", `\{`))
}

// An empty signature_name once switched verification off without a word;
// it is a plan-time error on its attribute, and nothing is read.
func TestAccInstallation_emptySignatureNameIsRefused(t *testing.T) {
	reg := ocitest.Start(t, ocitest.Options{CA: registryCA})
	// Unsigned: were verification off, this would plan.
	pushAll(t, reg, ocitest.OCM, exampleComponent(t, false))
	key := rsaKey(t)
	provider := fmt.Sprintf(`repository_context = { type = "OCIRegistry", baseUrl = "%s/ocm" }
  verification_signatures = { acme = { public_key = %q } }`, reg.Host, signtest.PublicKeyPEM(key))
	reg.ResetCounts()
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      withCache(t, exampleInstallation(provider, "}\n  verification = { signature_name = \"\" ")),
			PlanOnly:    true,
			ExpectError: errorPattern(`Invalid verification.*verification.signature_name: signature_name is empty`),
		}},
	})
	if n := reg.Counts()["manifest"]; n != 0 {
		t.Errorf("the registry was asked for %d manifests; a refused configuration reads nothing", n)
	}
}

// CA verification with a subject accepts that signer only; without one, a
// warning says any certificate of the CA is accepted. A certificate its CA
// issued for TLS servers does not sign components.
func TestAccInstallation_caSubject(t *testing.T) {
	ca, err := signtest.NewCA("acme CA")
	if err != nil {
		t.Fatal(err)
	}
	signer := rsaKey(t)
	release := pkix.Name{CommonName: "release signer", Organization: []string{"Acme"}}
	intern := pkix.Name{CommonName: "intern", Organization: []string{"Acme"}}
	chain := func(subject pkix.Name, ext ...x509.ExtKeyUsage) [][]byte {
		der, err := ca.Issue(signer, subject, x509.KeyUsageDigitalSignature, ext...)
		if err != nil {
			t.Fatal(err)
		}
		return [][]byte{der}
	}
	const verify = "}\n  verification = { signature_name = \"acme\" "
	cases := map[string]struct {
		chain   [][]byte
		subject string
		want    string // empty: plans
	}{
		"subject of the signer":                 {chain: chain(release), subject: "CN=release signer,O=Acme"},
		"common name of the signer":             {chain: chain(release, x509.ExtKeyUsageCodeSigning), subject: "release signer"},
		"another certificate of the same CA":    {chain: chain(intern), subject: "CN=release signer,O=Acme", want: `subject "CN=intern,O=Acme", not the subject "CN=release signer,O=Acme"`},
		"a TLS server certificate of the CA":    {chain: chain(release, x509.ExtKeyUsageServerAuth), subject: "release signer", want: "not for code signing"},
		"no subject: any certificate of the CA": {chain: chain(intern)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			reg := ocitest.Start(t, ocitest.Options{CA: registryCA})
			pushAll(t, reg, ocitest.OCM, signedExampleWith(t, signtest.Options{Name: "acme", Key: signer, Chain: tc.chain}))
			sig := fmt.Sprintf("ca_certificate = %q", ca.PEM())
			if tc.subject != "" {
				sig += fmt.Sprintf(", subject = %q", tc.subject)
			}
			provider := fmt.Sprintf(`repository_context = { type = "OCIRegistry", baseUrl = "%s/ocm" }
  verification_signatures = { acme = { %s } }`, reg.Host, sig)
			step := resource.TestStep{Config: withCache(t, exampleInstallation(provider, verify)), PlanOnly: true, ExpectNonEmptyPlan: true}
			if tc.want != "" {
				step.ExpectError = errorPattern(tc.want)
			}
			resource.ParallelTest(t, resource.TestCase{ProtoV6ProviderFactories: protoV6ProviderFactories, Steps: []resource.TestStep{step}})
		})
	}
}

// pinnedBlueprint is a blueprint whose one helm item takes its chart as
// chartSource says (a YAML fragment under chart:).
func pinnedBlueprint(ns, chartSource string) string {
	return `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - name: cluster
    targetType: landscaper.gardener.cloud/kubernetes-cluster
deployExecutions:
  - name: default
    type: GoTemplate
    template: |
      deployItems:
        - name: chart
          type: landscaper.gardener.cloud/helm
          target: {import: cluster}
          config:
            apiVersion: helm.deployer.landscaper.gardener.cloud/v1alpha1
            kind: ProviderConfiguration
            name: pinned
            namespace: ` + ns + `
            createNamespace: true
            helmDeployment: false
            chart:
              ` + chartSource + `
            values:
              message: from-the-signed-chart
`
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

// pushSignedChart pushes a chart archive as `helm push` does and returns its
// reference and manifest digest: what ociArtifactDigest/v1 signs.
func pushSignedChart(t *testing.T, reg *helmtest.Registry, archive []byte) (ref, digest string) {
	t.Helper()
	ch := helmtest.Load(t, archive)
	client, err := helmregistry.NewClient(helmregistry.ClientOptPlainHTTP(),
		helmregistry.ClientOptCredentialsFile(filepath.Join(t.TempDir(), "config.json")))
	if err != nil {
		t.Fatal(err)
	}
	ref = fmt.Sprintf("%s/charts/%s:%s", reg.Host, ch.Name(), ch.Metadata.Version)
	res, err := client.Push(archive, ref)
	if err != nil {
		t.Fatal(err)
	}
	return ref, res.Manifest.Digest
}

// signedChartComponent publishes example.com/pinned:1.0.0 with the
// blueprint and a chart resource whose ociArtifact access is chartRef,
// signed with its manifest digest as `ocm sign` records it.
func signedChartComponent(t *testing.T, key *rsa.PrivateKey, blueprint, chartRef, chartDigest string) acctest.PublishedVersion {
	t.Helper()
	return signedOCIComponent(t, key, blueprint, fmt.Sprintf(`      - name: chart
        type: helmChart
        access: {type: ociArtifact, imageReference: %q}
`, chartRef), "chart", chartDigest)
}

// signedOCIComponent publishes example.com/pinned:1.0.0 with the blueprint
// and the given resources (constructor YAML), the OCI resource named
// ociResource recording ociDigest as `ocm sign` records it, and signs it.
func signedOCIComponent(t *testing.T, key *rsa.PrivateKey, blueprint, resourcesYAML, ociResource, ociDigest string) acctest.PublishedVersion {
	t.Helper()
	dir := t.TempDir()
	mkdir(t, filepath.Join(dir, "blueprint"))
	acctest.WriteFile(t, filepath.Join(dir, "blueprint", "blueprint.yaml"), blueprint)
	acctest.WriteFile(t, filepath.Join(dir, "component-constructor.yaml"), `components:
  - name: example.com/pinned
    version: 1.0.0
    provider: {name: acme}
    resources:
      - name: blueprint
        type: landscaper.gardener.cloud/blueprint
        input: {type: dir, path: ./blueprint, compress: true, mediaType: application/vnd.gardener.landscaper.blueprint.v1+tar+gzip}
`+resourcesYAML)
	v := acctest.Publish(t, false, filepath.Join(dir, "component-constructor.yaml"))[0]
	desc := addDigests(t, v, nil)
	var doc map[string]any
	if err := yaml.Unmarshal(desc, &doc); err != nil {
		t.Fatal(err)
	}
	comp, _ := doc["component"].(map[string]any)
	resources, _ := comp["resources"].([]any)
	for _, r := range resources {
		if m, _ := r.(map[string]any); m["name"] == ociResource {
			m["digest"] = map[string]any{"hashAlgorithm": "SHA-256", "normalisationAlgorithm": signing.OCIArtifactDigestV1,
				"value": strings.TrimPrefix(ociDigest, "sha256:")}
		}
	}
	desc, _ = yaml.Marshal(doc)
	signed, err := signtest.Sign(desc, signtest.Options{Name: "acme", Key: key, Normalisation: signing.JSONNormalisationV2})
	if err != nil {
		t.Fatal(err)
	}
	v.Descriptor = signed
	return v
}

// What templates see of a verified component, through Terraform: the
// image's access, which the registry pointed elsewhere after signing,
// pinned to the signed digest, and its labels marked signed or not.
func TestAccInstallation_templatesSeePinsAndUnsignedLabels(t *testing.T) {
	key := rsaKey(t)
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	blueprint := `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
exports:
  - {name: image, type: data, schema: {type: string}}
  - {name: labels, type: data, schema: {type: string}}
deployExecutions:
  - name: default
    type: GoTemplate
    template: |
      {{- $image := getResource .cd "name" "image" }}
      deployItems:
        - name: app
          type: landscaper.gardener.cloud/mock
          config:
            apiVersion: mock.deployer.landscaper.gardener.cloud/v1alpha1
            kind: ProviderConfiguration
            phase: Succeeded
            export:
              image: {{ $image.access.imageReference }}
              labels: "{{ range $image.labels }}{{ .name }}={{ if .unsigned }}unsigned{{ else }}signed{{ end }} {{ end }}"
exportExecutions:
  - name: default
    type: GoTemplate
    template: |
      exports:
        image: {{ index .deployitems "app" "image" }}
        labels: {{ index .deployitems "app" "labels" | quote }}
`
	v := signedOCIComponent(t, key, blueprint, `      - name: image
        type: ociImage
        labels: [{name: team, value: platform, signing: true}, {name: note, value: anything}]
        access: {type: ociArtifact, imageReference: "registry.example/acme/app:1.0"}
`, "image", digest)
	// The registry points the unsigned access elsewhere.
	v.Descriptor = setAccess(t, v.Descriptor, "image", map[string]any{"type": "ociArtifact", "imageReference": "evil.example/acme/app:latest"})
	reg := ocitest.Start(t, ocitest.Options{CA: registryCA})
	pushAll(t, reg, ocitest.OCM, []acctest.PublishedVersion{v})
	config := pinnedConfig(t, reg.Host, key, "", "")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{{Config: config, ConfigStateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownValue("landscaper_installation.app", tfjsonpath.New("exports").AtMapKey("image"),
				knownvalue.StringExact("evil.example/acme/app@"+digest)),
			statecheck.ExpectKnownValue("landscaper_installation.app", tfjsonpath.New("exports").AtMapKey("labels"),
				knownvalue.StringExact("team=signed note=unsigned ")),
		}}},
	})
}

// Signed digests pin what a verifying installation pulls. Landscaper's
// chart.ref from the chart resource's access installs the signed chart,
// pulled by its digest; an attacker who points the (unsigned) access at
// another chart gets the pin, which that chart does not match, and
// nothing of it runs; a chart.ref to a chart no verified component signs
// is refused with the way to take it from the component; and content of
// a constructor's component, which no signature vouches for, is refused
// naming the component.
func TestAccInstallation_signedDigestsPinCharts(t *testing.T) {
	kubeconfig, cs := helmCluster(t)
	key := rsaKey(t)
	charts := helmtest.NewRegistry(t)
	signedRef, signedDigest := pushSignedChart(t, charts, helmtest.Archive(t, helmtest.Demo, "1.0.0"))
	otherRef, _ := pushSignedChart(t, charts, helmtest.Archive(t, helmtest.Workload, "1.0.0"))
	fromAccess := `ref: {{ (getResource .cd "name" "chart").access.imageReference }}`
	extraDir := t.TempDir()
	mkdir(t, filepath.Join(extraDir, "chart"))
	acctest.WriteFile(t, filepath.Join(extraDir, "chart", "Chart.yaml"), "apiVersion: v2\nname: extra\nversion: 1.0.0\n")
	acctest.WriteFile(t, filepath.Join(extraDir, "component-constructor.yaml"), `components:
  - name: example.com/extra
    version: 1.0.0
    provider: {name: me}
    resources:
      - name: chart
        type: helmChart
        input: {type: dir, path: ./chart, compress: true}
`)
	cases := map[string]struct {
		chart  string
		access string // the access as the registry serves it, after signing
		want   string // empty: installs the signed chart
	}{
		"access as signed":      {chart: fromAccess, access: signedRef},
		"access redirected":     {chart: fromAccess, access: otherRef, want: `unable to pull chart ` + strings.Replace(otherRef, ":1.0.0", "@"+signedDigest, 1)},
		"reference not signed":  {chart: "ref: " + otherRef, access: signedRef, want: `chart.ref ` + otherRef + `: the installation verifies signatures, and the chart pulled .* is no artifact a verified component signs; take the chart from the verified component instead: chart.resourceRef:`},
		"constructor component": {chart: `fromResource: {ref: {componentName: example.com/extra, version: 1.0.0}, resourceName: chart}`, access: signedRef, want: `resource "chart" of component example.com/extra:1.0.0 \(.*component-constructor.yaml\): the installation verifies signatures, and no checked signature vouches for this component`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ns := "acc-pin-" + strings.ReplaceAll(name, " ", "-")
			v := signedChartComponent(t, key, pinnedBlueprint(ns, tc.chart), signedRef, signedDigest)
			if tc.access != signedRef {
				// What an attacker with the registry can do: the access is
				// not signed, so the signature still verifies.
				v.Descriptor = setAccess(t, v.Descriptor, "chart", map[string]any{"type": "ociArtifact", "imageReference": tc.access})
			}
			reg := ocitest.Start(t, ocitest.Options{CA: registryCA})
			pushAll(t, reg, ocitest.OCM, []acctest.PublishedVersion{v})
			config := pinnedConfig(t, reg.Host, key, fmt.Sprintf(", constructors = [%q]", filepath.Join(extraDir, "component-constructor.yaml")), clusterTarget(kubeconfig))
			step := resource.TestStep{Config: config}
			if tc.want != "" {
				step.ExpectError = errorPattern(tc.want)
			} else {
				step.Check = func(*terraform.State) error {
					cm, err := cs.CoreV1().ConfigMaps(ns).Get(context.Background(), "pinned-config", metav1.GetOptions{})
					if err != nil {
						return err
					}
					if cm.Data["message"] != "from-the-signed-chart" {
						return fmt.Errorf("message %q", cm.Data["message"])
					}
					return nil
				}
			}
			resource.Test(t, resource.TestCase{ProtoV6ProviderFactories: protoV6ProviderFactories, Steps: []resource.TestStep{step}})
			if tc.want != "" {
				// Nothing of the other chart ran.
				if _, err := cs.CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
					t.Errorf("namespace %s exists after a refusal: %v", ns, err)
				}
			}
		})
	}
}

// A subject is for CA signatures only, and must be a name; both are
// plan-time errors on the provider's attribute.
func TestAccProvider_badSignatureSubject(t *testing.T) {
	ca, err := signtest.NewCA("acme CA")
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct{ signature, want string }{
		"subject with public_key": {fmt.Sprintf(`public_key = %q, subject = "release signer"`, signtest.PublicKeyPEM(rsaKey(t))),
			`Invalid verification signature.*subject applies to ca_certificate only`},
		"malformed distinguished name": {fmt.Sprintf(`ca_certificate = %q, subject = "=x,CN=y"`, ca.PEM()),
			`Invalid verification signature.*subject of signature "acme": "=x,CN=y" is not a distinguished name`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cfg := fmt.Sprintf(`provider "landscaper" {
  verification_signatures = { acme = { %s } }
}

resource "landscaper_installation" "app" {
  name      = "app"
  blueprint = { filesystem = { "blueprint.yaml" = "apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: Blueprint\n" } }
}
`, tc.signature)
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: protoV6ProviderFactories,
				Steps:                    []resource.TestStep{{Config: cfg, PlanOnly: true, ExpectError: errorPattern(tc.want)}},
			})
		})
	}
}

// Without a subject, a CA signature warns that any certificate of the CA
// verifies; with one, or with a public key, it does not.
func TestSignatureWarnings(t *testing.T) {
	cfg := componentsConfig{signatures: map[string]signatureModel{
		"open":   {PublicKey: types.StringNull(), CACertificate: types.StringValue("pem"), Subject: types.StringNull()},
		"pinned": {PublicKey: types.StringNull(), CACertificate: types.StringValue("pem"), Subject: types.StringValue("CN=x")},
		"key":    {PublicKey: types.StringValue("pem"), CACertificate: types.StringNull(), Subject: types.StringNull()},
	}}
	diags := cfg.signatureWarnings()
	if len(diags) != 1 || diags.HasError() || diags[0].Summary() != "Any signer of this CA is accepted" || !strings.Contains(diags[0].Detail(), `signature "open"`) {
		t.Fatalf("warnings: %v", diags)
	}
}
