//go:build unix

package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/helm/helmtest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/ocitest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/signing"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/signing/signtest"
)

// What a hostile registry or chart repository tries against digests,
// signatures and credentials (issue 25), through Terraform.

// A registry that answers the signed chart's digest with another chart's
// manifest, labelled signed schema 1 and with the signed digest in its
// Docker-Content-Digest header (which go-containerregistry takes as the
// digest of such a manifest, even when pulling by digest), gets nothing
// installed: the digest is computed from the bytes, and schema 1 is
// refused, saying so.
func TestAccInstallation_forgedSchema1DigestIsRefused(t *testing.T) {
	kubeconfig, cs := helmCluster(t)
	key := rsaKey(t)
	reg := ocitest.Start(t, ocitest.Options{CA: registryCA})
	helmConfig := ocitest.Blob{MediaType: "application/vnd.cncf.helm.config.v1+json", Data: []byte("{}")}
	signed := reg.PushArtifact(t, "charts/demo:1.0.0", helmConfig,
		ocitest.Blob{MediaType: "application/vnd.cncf.helm.chart.content.v1.tar+gzip", Data: helmtest.Archive(t, helmtest.Demo, "1.0.0")})
	reg.PushArtifact(t, "charts/demo:evil", helmConfig,
		ocitest.Blob{MediaType: "application/vnd.cncf.helm.chart.content.v1.tar+gzip", Data: helmtest.Archive(t, helmtest.Workload, "1.0.0")})
	forged := ocitest.Forgery{Body: reg.Manifest(t, "charts/demo", "evil"), ContentType: ocitest.MediaTypeSchema1Signed, DigestHeader: signed}
	reg.Forge("charts/demo", signed, forged)
	reg.Forge("charts/demo", "1.0.0", forged)

	ns := "acc-forged-schema1"
	v := signedChartComponent(t, key, pinnedBlueprint(ns, `ref: {{ (getResource .cd "name" "chart").access.imageReference }}`),
		reg.Host+"/charts/demo:1.0.0", signed)
	pushAll(t, reg, ocitest.OCM, []acctest.PublishedVersion{v})
	config := pinnedConfig(t, reg.Host, key, "", clusterTarget(kubeconfig))
	resource.Test(t, resource.TestCase{ProtoV6ProviderFactories: protoV6ProviderFactories, Steps: []resource.TestStep{{
		Config: config,
		ExpectError: errorPattern(`unable to pull chart ` + reg.Host + `/charts/demo@` + signed + `: .* Docker schema-1 manifest ` +
			`\(application/vnd.docker.distribution.manifest.v1\+prettyjws\): a verifying installation refuses schema-1 manifests`),
	}}})
	if _, err := cs.CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("namespace %s exists: the forged chart ran (%v)", ns, err)
	}
}

// A descriptor signed with jsonNormalisation/v1 (which does not sign
// sources) that a registry gives a second signature of the same name,
// claiming jsonNormalisation/v2, would make its sources' labels look
// signed to templates; it is refused at plan time, naming the signature,
// and nothing runs.
func TestAccInstallation_twoSignaturesOfOneNameAreRefused(t *testing.T) {
	key := rsaKey(t)
	reg := ocitest.Start(t, ocitest.Options{CA: registryCA})
	versions := signedExample(t, key, "", signing.JSONNormalisationV1)
	for i := range versions {
		if versions[i].Name == "github.com/acme/app" {
			twice, err := signtest.PrependCopy(versions[i].Descriptor, signing.JSONNormalisationV2)
			if err != nil {
				t.Fatal(err)
			}
			versions[i].Descriptor = twice
		}
	}
	pushAll(t, reg, ocitest.OCM, versions)
	provider := fmt.Sprintf(`repository_context = { type = "OCIRegistry", baseUrl = "%s/ocm" }
  verification_signatures = { acme = { public_key = %q } }`, reg.Host, signtest.PublicKeyPEM(key))
	resource.ParallelTest(t, resource.TestCase{ProtoV6ProviderFactories: protoV6ProviderFactories, Steps: []resource.TestStep{{
		Config:      withCache(t, exampleInstallation(provider, "}\n  verification = { signature_name = \"acme\" ")),
		PlanOnly:    true,
		ExpectError: errorPattern(`signature "acme": the component version carries 2 signatures of that name, and one is expected`),
	}}})
}

// A chart repository (helmChartRepo) and an archive URL (archive.remote.url)
// get the provider's registry_credentials for their host, over HTTPS, and
// nothing else does: a redirect to another port of the same host, a
// redirect to http:// on the same host and port, and an index.yaml whose
// chart URL names http:// on the same host and port all reach content
// that is served without credentials, and no request there carries them.
func TestAccExecution_chartRepositoryCredentialsStayOnTheirOrigin(t *testing.T) {
	kubeconfig, cs := helmCluster(t)
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	// One version per repository: the cache keeps archives by digest, and
	// each repository's own must be fetched.
	versions := map[string]string{"port": "1.0.1", "plain": "1.0.2", "index": "1.0.3", "archive": "1.0.4"}
	other := ocitest.StartChartRepo(t, ocitest.ChartRepoOptions{CA: registryCA})
	repos := map[string]*ocitest.ChartRepo{}
	for name, version := range versions {
		archive := helmtest.Archive(t, helmtest.Demo, version)
		r := ocitest.StartChartRepo(t, ocitest.ChartRepoOptions{CA: registryCA, Username: "acme-ci", Password: registryPassword})
		r.AddChart("demo", version, archive)
		r.Serve("/cdn/demo.tgz", archive)
		r.Open("/cdn/demo.tgz")
		other.Serve("/cdn/"+name+".tgz", archive)
		repos[name] = r
	}
	repos["port"].Redirect("/charts/demo-1.0.1.tgz", other.URL+"/cdn/port.tgz")
	repos["plain"].Redirect("/charts/demo-1.0.2.tgz", repos["plain"].PlainURL+"/cdn/demo.tgz")
	repos["index"].SetChartURL("demo", "1.0.3", repos["index"].PlainURL+"/cdn/demo.tgz")
	repos["archive"].Redirect("/moved.tgz", other.URL+"/cdn/archive.tgz")

	var creds, items strings.Builder
	for name, r := range repos {
		fmt.Fprintf(&creds, "    %q = { username = \"acme-ci\", password = %q }\n", r.Host, registryPassword)
		chart := fmt.Sprintf(`{ helmChartRepo = { helmChartRepoUrl = %q, helmChartName = "demo", helmChartVersion = %q } }`, r.URL, versions[name])
		if name == "archive" {
			chart = fmt.Sprintf(`{ archive = { remote = { url = %q } } }`, r.URL+"/moved.tgz")
		}
		fmt.Fprintf(&items, `    %[1]s = {
      type   = "helm"
      target = "cluster"
      config = yamlencode({
        name = "chart", namespace = "acc-origin-%[1]s", createNamespace = true
        chart = %[2]s
        values = { message = "from-%[1]s" }
      })
    }
`, name, chart)
	}
	config := fmt.Sprintf(`
provider "landscaper" {
  cache_dir = %[1]q
  registry_credentials = {
%[2]s  }
}

resource "landscaper_execution" "app" {
  name = "chart-origins"
  targets = { cluster = {
    type   = "landscaper.gardener.cloud/kubernetes-cluster"
    config = yamlencode({ kubeconfig = file(%[3]q) })
  } }
  deploy_items = {
%[4]s  }
}
`, t.TempDir(), creds.String(), kubeconfig, items.String())
	installed := func(*terraform.State) error {
		for name := range repos {
			cm, err := cs.CoreV1().ConfigMaps("acc-origin-"+name).Get(context.Background(), "chart-config", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if cm.Data["message"] != "from-"+name {
				return fmt.Errorf("%s: message %q", name, cm.Data["message"])
			}
		}
		return nil
	}
	resource.Test(t, resource.TestCase{ProtoV6ProviderFactories: protoV6ProviderFactories, Steps: []resource.TestStep{{Config: config, Check: installed}}})
	for name, r := range repos {
		asked := false
		for _, q := range r.Requests() {
			asked = asked || strings.HasPrefix(q.Path, "/cdn/")
		}
		for _, q := range other.Requests() {
			asked = asked || q.Path == "/cdn/"+name+".tgz"
		}
		if !asked {
			t.Errorf("%s: the hostile move was never followed: the test proves nothing", name)
		}
		if len(r.Credentialed()) == 0 {
			t.Errorf("%s: the repository never got its credentials: the test proves nothing", name)
		}
		for _, q := range r.Credentialed() {
			if q.Scheme != "https" || strings.HasPrefix(q.Path, "/cdn/") {
				t.Errorf("%s: credentials went to %s://%s%s", name, q.Scheme, r.Host, q.Path)
			}
		}
	}
	for _, q := range other.Credentialed() {
		t.Errorf("credentials went to %s://%s%s, another port", q.Scheme, other.Host, q.Path)
	}
}
