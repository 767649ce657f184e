//go:build unix

// Package kubernetes measures the provider against a real API server: 200
// ConfigMaps as 200 kubernetes-manifest deploy items of one execution,
// applied, updated and destroyed by the terraform CLI with the provider
// binary, as a user runs them. See bench/README.md for the numbers and
// how they compare with HashiCorp's kubernetes provider.
package kubernetes

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/testenv"
)

var (
	providerDir string
	buildErr    error
	kubeEnv     *testenv.Env
)

// TestMain builds the provider (or takes the one in BENCH_PROVIDER_DIR,
// to measure another build such as an earlier commit's) and starts the
// test control plane, for TF_ACC runs only.
func TestMain(m *testing.M) {
	cleanup := func() {}
	if dir := os.Getenv("BENCH_PROVIDER_DIR"); dir != "" {
		providerDir = dir
	} else {
		providerDir, cleanup, buildErr = acctest.BuildProvider()
	}
	var code int
	if os.Getenv("TF_ACC") == "" {
		code = m.Run()
	} else {
		code = testenv.Main(m, &kubeEnv)
	}
	cleanup()
	os.Exit(code)
}

// config is n ConfigMaps in namespace default, each its own
// kubernetes-manifest item, all holding value; provider is the body of
// the provider block.
func config(kubeconfig string, n int, value, provider string) string {
	return fmt.Sprintf(`
provider "landscaper" {
  %[4]s
}

resource "landscaper_execution" "cms" {
  name = "cms"
  targets = { cluster = {
    type   = "landscaper.gardener.cloud/kubernetes-cluster"
    config = yamlencode({ kubeconfig = file(%[1]q) })
  } }
  deploy_items = { for i in range(%[2]d) : "cm-${i}" => {
    type   = "kubernetes-manifest"
    target = "cluster"
    config = yamlencode({
      apiVersion = "manifest.deployer.landscaper.gardener.cloud/v1alpha2"
      kind       = "ProviderConfiguration"
      manifests = [{ policy = "manage", manifest = {
        apiVersion = "v1", kind = "ConfigMap"
        metadata   = { name = "bench-${i}", namespace = "default" }
        data       = { value = %[3]q }
      } }]
    })
  } }
}
`, kubeconfig, n, value, provider)
}

// BenchmarkConfigMaps200 times apply (create), apply (update of every
// item) and destroy of 200 ConfigMaps, each a deploy item, reported as
// apply-s, update-s and destroy-s per run; plan-s is the plan of the
// creation, which sends no request to the cluster.
//
// BENCH_PROVIDER_CONFIG is put into the provider block, for instance
// `max_parallelism = 50` or `kubernetes_rate_limit = { qps = 100, burst = 200 }`.
func BenchmarkConfigMaps200(b *testing.B) {
	w := acctest.NewWorkspace(b, providerDir, buildErr)
	kubeconfig := kubeEnv.KubeconfigPath()
	provider := os.Getenv("BENCH_PROVIDER_CONFIG")
	benchConfigMaps(b, w, func(value string) { w.Config(config(kubeconfig, 200, value, provider)) })
}

// BenchmarkHashiCorpConfigMaps200 is the same with HashiCorp's
// kubernetes_config_map_v1, from the provider binary in
// BENCH_HASHICORP_PROVIDER_DIR (built from its source, tag v2.38.0), so
// both are measured on the same machine under the same load.
func BenchmarkHashiCorpConfigMaps200(b *testing.B) {
	dir := os.Getenv("BENCH_HASHICORP_PROVIDER_DIR")
	if dir == "" {
		b.Skip("set BENCH_HASHICORP_PROVIDER_DIR to the directory of terraform-provider-kubernetes")
	}
	w := acctest.NewWorkspace(b, providerDir, buildErr)
	acctest.WriteFile(b, w.Path("cli.tfrc"), fmt.Sprintf(`provider_installation {
  dev_overrides {
    "hashicorp/kubernetes" = %q
  }
  direct {}
}
`, dir))
	kubeconfig := kubeEnv.KubeconfigPath()
	benchConfigMaps(b, w, func(value string) {
		acctest.WriteFile(b, w.Path("main.tf"), fmt.Sprintf(`
terraform {
  required_providers {
    kubernetes = { source = "hashicorp/kubernetes" }
  }
}

provider "kubernetes" {
  config_path = %q
}

resource "kubernetes_config_map_v1" "cm" {
  count = 200
  metadata {
    name      = "hashicorp-${count.index}"
    namespace = "default"
  }
  data = { value = %q }
}
`, kubeconfig, value))
	})
}

// benchConfigMaps runs the rounds: write(value) writes the configuration
// of the 200 ConfigMaps holding value into w.
func benchConfigMaps(b *testing.B, w *acctest.Workspace, write func(value string)) {
	requests := map[string]float64{}
	timed := func(args ...string) float64 {
		b.Helper()
		before := configMapRequests(b)
		start := time.Now()
		out, code := w.Run(nil, args...)
		if code != 0 {
			b.Fatalf("terraform %v exited %d:\n%s", args, code, out)
		}
		d := time.Since(start).Seconds()
		requests[args[0]] += configMapRequests(b) - before
		return d
	}
	var plan, apply, update, noop, destroy float64
	runs := 0
	for b.Loop() {
		runs++
		write("v1")
		// What Terraform and the provider cost before any request to the
		// cluster: the plan of the creation.
		plan += timed("plan", "-input=false", "-no-color")
		apply += timed("apply", "-input=false", "-no-color", "-auto-approve")
		write("v2-" + strconv.Itoa(runs))
		update += timed("apply", "-input=false", "-no-color", "-auto-approve")
		// A no-op plan: the refresh that update and destroy also begin with.
		noop += timed("plan", "-input=false", "-no-color")
		destroy += timed("destroy", "-input=false", "-no-color", "-auto-approve")
	}
	b.ReportMetric(plan/float64(runs), "plan-s")
	b.ReportMetric(apply/float64(runs), "apply-s")
	b.ReportMetric(update/float64(runs), "update-s")
	b.ReportMetric(noop/float64(runs), "noop-plan-s")
	b.ReportMetric(destroy/float64(runs), "destroy-s")
	// apply counts both applies (create and update).
	b.ReportMetric(requests["apply"]/float64(2*runs), "requests/apply")
	b.ReportMetric(requests["destroy"]/float64(runs), "requests/destroy")
}

// configMapRequests is how many requests about ConfigMaps the API server
// has answered so far, from its metrics.
func configMapRequests(b *testing.B) float64 {
	b.Helper()
	n, err := kubeEnv.MetricSum(b.Context(), "apiserver_request_total", `resource="configmaps"`)
	if err != nil {
		b.Fatal(err)
	}
	return n
}
