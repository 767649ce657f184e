//go:build unix

package provider

import (
	"context"
	"fmt"
	"net"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/helm/helmtest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/ocitest"
)

// pushChart stores a chart archive in a registry as `helm push` does and
// returns its reference.
func pushChart(t *testing.T, reg *ocitest.Registry, archive []byte, repoTag string) string {
	t.Helper()
	reg.PushArtifact(t, repoTag, ocitest.Blob{MediaType: "application/vnd.cncf.helm.config.v1+json", Data: []byte("{}")},
		ocitest.Blob{MediaType: "application/vnd.cncf.helm.chart.content.v1.tar+gzip", Data: archive})
	return reg.Host + "/" + repoTag
}

// helmRegistryConfig is an execution with one helm item installing chart
// (an HCL object) into namespace ns, under a provider block with
// providerBody.
func helmRegistryConfig(kubeconfig, providerBody, ns, chart string) string {
	return fmt.Sprintf(`
provider "landscaper" {
  %[2]s
}

resource "landscaper_execution" "app" {
  name = "helm-registry"
  targets = { cluster = {
    type   = "landscaper.gardener.cloud/kubernetes-cluster"
    config = yamlencode({ kubeconfig = file(%[1]q) })
  } }
  deploy_items = {
    chart = {
      type    = "helm"
      target  = "cluster"
      timeout = "5m"
      config = yamlencode({
        name            = "chart"
        namespace       = %[3]q
        createNamespace = true
        chart           = %[4]s
        values          = { message = "from-registry" }
      })
    }
  }
}
`, kubeconfig, providerBody, ns, chart)
}

// A chart by chart.ref from a TLS registry on 127.0.0.1 that only the
// provider's registry_credentials open (no Docker config): pulled over
// HTTPS with them. The same for a chart repository (helmChartRepo)
// through the same client.
func TestAccExecution_helmChartFromTLSRegistryWithProviderCredentials(t *testing.T) {
	kubeconfig, cs := helmCluster(t)
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	reg := ocitest.Start(t, ocitest.Options{CA: registryCA, Auth: ocitest.Basic, Username: "acme-ci", Password: registryPassword})
	ref := pushChart(t, reg, helmtest.Archive(t, helmtest.Demo, "1.0.0"), "charts/demo:1.0.0")
	repo := helmtest.NewRepo(t)
	repo.Add(t, helmtest.Archive(t, helmtest.Demo, "0.9.0"))
	provider := fmt.Sprintf(`cache_dir = %q
  registry_credentials = { %q = { username = "acme-ci", password = %q } }`, t.TempDir(), reg.Host, registryPassword)
	installed := func(ns string) resource.TestCheckFunc {
		return func(*terraform.State) error {
			cm, err := cs.CoreV1().ConfigMaps(ns).Get(context.Background(), "chart-config", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if cm.Data["message"] != "from-registry" {
				return fmt.Errorf("message %q", cm.Data["message"])
			}
			return nil
		}
	}
	for name, c := range map[string]struct{ ns, chart string }{
		"ref":  {"acc-helm-tls", fmt.Sprintf("{ ref = %q }", ref)},
		"repo": {"acc-helm-repo", fmt.Sprintf("{ helmChartRepo = { helmChartRepoUrl = %q, helmChartName = \"demo\", helmChartVersion = \"~0.9\" } }", repo.URL)},
	} {
		t.Run(name, func(t *testing.T) {
			config := helmRegistryConfig(kubeconfig, provider, c.ns, c.chart)
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: protoV6ProviderFactories,
				Steps: []resource.TestStep{
					{Config: config, Check: installed(c.ns)},
					{Config: config, PlanOnly: true},
				},
			})
		})
	}
	if n := reg.Counts()["unauthorized"]; n == 0 {
		t.Error("the registry never asked for credentials: the test proves nothing")
	}
}

// Registry errors that only a change of configuration fixes fail the
// item at once, naming the registry, the reference and what to do, never
// the password: an untrusted certificate on 127.0.0.1 (no retry over
// plain HTTP), a registry that is not on loopback speaking plain HTTP,
// refused credentials. Were they retried, the item would fail after its
// timeout of 5m with a timeout error instead.
func TestAccExecution_helmRegistryErrorsAreImmediate(t *testing.T) {
	kubeconfig, _ := helmCluster(t)
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	otherCA, err := ocitest.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	archive := helmtest.Archive(t, helmtest.Demo, "1.0.0")
	untrusted := ocitest.Start(t, ocitest.Options{CA: otherCA})
	locked := ocitest.Start(t, ocitest.Options{CA: registryCA, Auth: ocitest.Basic, Username: "acme-ci", Password: registryPassword})
	cases := map[string]struct {
		reg      *ocitest.Registry
		provider string
		want     string
	}{
		"untrusted certificate": {untrusted, "", `registry\s+127\.0\.0\.1:\d+:\s+TLS\s+failed\s+for\s+OCI\s+artifact\s+127\.0\.0\.1:\d+/charts/demo:1\.0\.0:[\s\S]*SSL_CERT_FILE[\s\S]*ERR_CONFIGURATION_PROBLEM`},
		"refused credentials": {locked, fmt.Sprintf(`registry_credentials = { %q = { username = "acme-ci", password = "not-the-password" } }`, locked.Host),
			`registry\s+127\.0\.0\.1:\d+\s+refused\s+access\s+to\s+OCI\s+artifact[\s\S]*401[\s\S]*credentials\s+tried:\s+registry_credentials[\s\S]*ERR_UNAUTHORIZED`},
	}
	if ip := nonLoopbackIP(); ip != "" {
		cases["plain HTTP off loopback"] = struct {
			reg      *ocitest.Registry
			provider string
			want     string
		}{ocitest.Start(t, ocitest.Options{Addr: ip + ":0"}), "", `speaks\s+plain\s+HTTP,\s+which\s+is\s+used\s+only\s+for\s+loopback\s+addresses\s+or\s+where\s+asked\s+for\s+with\s+http://,\s+for\s+OCI\s+artifact[\s\S]*ERR_CONFIGURATION_PROBLEM`}
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			ref := pushChart(t, c.reg, archive, "charts/demo:1.0.0")
			ns := "acc-helm-" + strings.ReplaceAll(name, " ", "-")
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: protoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config:      helmRegistryConfig(kubeconfig, c.provider, ns, fmt.Sprintf("{ ref = %q }", ref)),
					ExpectError: regexp.MustCompile(c.want),
				}},
			})
			if n := c.reg.Counts()["manifest"]; name != "refused credentials" && n != 0 {
				t.Errorf("%d manifest requests were answered", n)
			}
		})
	}
}

// nonLoopbackIP is an IPv4 address of this machine that is not loopback,
// or "" when it has none.
func nonLoopbackIP() string {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP.String()
		}
	}
	return ""
}
