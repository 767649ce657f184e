//go:build unix

package landscaper

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/lscluster/lstest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/lsreferee"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/testenv"
)

// RemoteInstallations is how many remote installations
// BenchmarkRemote200's root module holds.
const RemoteInstallations = 200

// remoteBlueprint renders one kubernetes-manifest item of ObjectsPerItem
// ConfigMaps, named after the import "index", into the import "namespace".
var remoteBlueprint = fmt.Sprintf(`apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
jsonSchema: "https://json-schema.org/draft/2019-09/schema"
imports:
  - {name: cluster, targetType: landscaper.gardener.cloud/kubernetes-cluster}
  - {name: namespace, type: data, schema: {type: string}}
  - {name: index, type: data, schema: {type: string}}
deployExecutions:
  - name: default
    type: GoTemplate
    template: |
      deployItems:
        - name: configmaps
          type: landscaper.gardener.cloud/kubernetes-manifest
          target: {import: cluster}
          config:
            apiVersion: manifest.deployer.landscaper.gardener.cloud/v1alpha2
            kind: ProviderConfiguration
            updateStrategy: update
            manifests:
            {{- range $o := until %d }}
              - policy: manage
                manifest:
                  apiVersion: v1
                  kind: ConfigMap
                  metadata: {name: {{ $.imports.index }}-{{ $o }}, namespace: {{ $.imports.namespace }}}
                  data: {index: "{{ $.imports.index }}"}
            {{- end }}
`, ObjectsPerItem)

// remoteConfig is the root module: RemoteInstallations
// landscaper_installation resources (for_each) in namespace lsNS of the
// Landscaper cluster, each deploying into appNS through the provider
// target app (the same API server). parallelism is Terraform's
// -parallelism, which bounds how many installations the provider hands to
// Landscaper and waits for at once.
func remoteConfig(lsNS, appNS string) string {
	return fmt.Sprintf(`
provider "landscaper" {
  targets = {
    landscaper = { type = "landscaper.gardener.cloud/kubernetes-cluster", config = yamlencode({ kubeconfig = file("${path.module}/kubeconfig") }) }
    app        = { type = "landscaper.gardener.cloud/kubernetes-cluster", config = yamlencode({ kubeconfig = file("${path.module}/kubeconfig") }) }
  }
}

resource "landscaper_installation" "i" {
  for_each           = toset([for i in range(%d) : format("i%%03d", i)])
  name               = each.key
  landscaper_cluster = { target = "landscaper", namespace = %q }
  blueprint          = { path = "${path.module}/blueprint" }
  imports            = { namespace = %q, index = each.key }
  targets            = { cluster = { name = "app" } }
  timeouts           = { create = "10m", update = "10m", delete = "10m" }
}
`, RemoteInstallations, lsNS, appNS)
}

// BenchmarkRemote200 runs one root module of RemoteInstallations remote
// installations (landscaper_installation with landscaper_cluster) against
// one Landscaper cluster (internal/testenv SharedLandscaper) through the
// terraform CLI, in rounds of: the plan of the creation (saved), the
// apply of that plan, a no-op plan (the refresh of every installation)
// and the destroy. During the apply it watches the Installations and
// notes when Landscaper had each Succeeded. It reports the medians:
//
//	plan-s              terraform plan -out (nothing exists yet)
//	apply-s             terraform apply of the saved plan: the provider
//	                    writes each installation's objects and waits for
//	                    its job, so it ends after the last is Succeeded
//	ls-succeeded-s      from the apply's start until Landscaper had all
//	                    RemoteInstallations Succeeded
//	ls-install-s        an Installation's time from its creation to
//	                    Succeeded (the median over all of them)
//	noop-plan-s         terraform plan -detailed-exitcode after the apply
//	destroy-s           terraform destroy, until every Installation and
//	                    what it deployed is gone
//	apply-over-ls       apply-s / ls-succeeded-s
//
// and, from the API server's metrics, for the apply and the destroy: the
// requests about Landscaper's objects (requests/apply, requests/destroy),
// the LISTs of Installations among them (inst-lists/...) and the MB those
// LISTs returned (inst-list-MB/...): counts that do not depend on the
// machine's load, by whomever sent them (Landscaper, the provider).
//
// BENCH_PARALLELISM is Terraform's -parallelism (default Terraform's 10);
// BENCH_LANDSCAPER_WORKERS Landscaper's workers per controller and
// deployer (testenv.LandscaperOptions.Workers, default 5); both are
// reported (tf-parallelism, ls-workers).
func BenchmarkRemote200(b *testing.B) {
	w := workspace(b) // first: it skips without TF_ACC
	env, ls := realLandscaper.Get(b)
	k := lsreferee.NewKube(b, env.Kubeconfig())
	k.Interval = 20 * time.Millisecond
	k.Timeout = 10 * time.Minute
	acctest.WriteFile(b, w.Path("kubeconfig"), k.Kubeconfig)
	if err := os.MkdirAll(w.Path("blueprint"), 0o755); err != nil {
		b.Fatal(err)
	}
	acctest.WriteFile(b, filepath.Join(w.Path("blueprint"), "blueprint.yaml"), remoteBlueprint)

	parallelism := 10
	var flags []string
	if p := os.Getenv("BENCH_PARALLELISM"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 {
			b.Fatalf("BENCH_PARALLELISM=%q: want a positive number", p)
		}
		parallelism = n
		flags = append(flags, "-parallelism="+p)
	}
	// BENCH_TF_LOG_DIR receives Terraform's and the provider's trace log of
	// each step, remote200-<round>-<step>.log.
	run := func(round int, step, command string, args ...string) (string, int, float64) {
		var extra []string
		if dir := os.Getenv("BENCH_TF_LOG_DIR"); dir != "" {
			extra = []string{"TF_LOG=trace", "TF_LOG_PATH=" + filepath.Join(dir, fmt.Sprintf("remote200-%d-%s.log", round, step))}
		}
		args = append(append([]string{command, "-input=false", "-no-color"}, flags...), args...)
		start := time.Now()
		out, code := w.Run(extra, args...)
		return out, code, time.Since(start).Seconds()
	}
	var plan, apply, lsDone, lsInstall, noop, destroy []float64
	var applyUse, destroyUse []apiUse
	round := 0
	for b.Loop() {
		b.StopTimer()
		lsNS, appNS := fmt.Sprintf("remote200-%d-ls", round), fmt.Sprintf("remote200-%d-app", round)
		k.Namespace(lsNS)
		k.Namespace(appNS)
		w.Config(remoteConfig(lsNS, appNS))
		b.StartTimer()

		out, code, secs := run(round, "plan", "plan", "-out=tfplan")
		if code != 0 {
			b.Fatalf("terraform plan exited %d:\n%s", code, out)
		}
		plan = append(plan, secs)

		watcher := watchSucceeded(b, k, lsNS)
		before := used(b, env)
		start := time.Now()
		out, code, secs = run(round, "apply", "apply", "tfplan")
		if code != 0 {
			watcher.stop()
			b.Fatalf("terraform apply exited %d:\n%s", code, out)
		}
		apply = append(apply, secs)
		applyUse = append(applyUse, used(b, env).minus(before))
		var seen map[string]instTimes
		k.Poll(func() bool {
			seen = watcher.times()
			return countSucceeded(seen) == RemoteInstallations
		}, func() string {
			return fmt.Sprintf("Landscaper has %d of %d Installations Succeeded", countSucceeded(seen), RemoteInstallations)
		})
		watcher.stop()
		var last time.Time
		var each []float64
		for _, t := range seen {
			if t.succeeded.After(last) {
				last = t.succeeded
			}
			each = append(each, t.succeeded.Sub(t.created).Seconds())
		}
		lsDone = append(lsDone, last.Sub(start).Seconds())
		lsInstall = append(lsInstall, median(each))
		waitConfigMaps(k, appNS, RemoteInstallations*ObjectsPerItem)

		out, code, secs = run(round, "noop-plan", "plan", "-detailed-exitcode")
		if code != 0 {
			b.Fatalf("the plan after the apply exited %d, want 0 (no changes):\n%s", code, out)
		}
		noop = append(noop, secs)

		before = used(b, env)
		out, code, secs = run(round, "destroy", "destroy", "-auto-approve")
		if code != 0 {
			b.Fatalf("terraform destroy exited %d:\n%s", code, out)
		}
		destroy = append(destroy, secs)
		destroyUse = append(destroyUse, used(b, env).minus(before))
		b.StopTimer()
		if list, err := k.Resource(lstest.GVRs["Installation"], lsNS).List(b.Context(), metav1.ListOptions{}); err != nil || len(list.Items) > 0 {
			b.Fatalf("after the destroy %s holds Installations (%v)", lsNS, err)
		}
		waitConfigMaps(k, appNS, 0)
		b.StartTimer()
		round++
	}
	b.Logf("Landscaper workers %d, terraform -parallelism %d", ls.Workers(), parallelism)
	b.Logf("plan %s; apply %s; Landscaper all Succeeded %s (an Installation: median %s); no-op plan %s; destroy %s",
		seconds(plan), seconds(apply), seconds(lsDone), seconds(lsInstall), seconds(noop), seconds(destroy))
	b.ReportMetric(median(plan), "plan-s")
	b.ReportMetric(median(apply), "apply-s")
	b.ReportMetric(median(lsDone), "ls-succeeded-s")
	b.ReportMetric(median(lsInstall), "ls-install-s")
	b.ReportMetric(median(noop), "noop-plan-s")
	b.ReportMetric(median(destroy), "destroy-s")
	b.ReportMetric(median(apply)/median(lsDone), "apply-over-ls")
	for _, u := range []struct {
		step string
		use  []apiUse
	}{{"apply", applyUse}, {"destroy", destroyUse}} {
		b.Logf("%s: %s", u.step, u.use)
		b.ReportMetric(median(field(u.use, func(a apiUse) float64 { return a.requests })), "requests/"+u.step)
		b.ReportMetric(median(field(u.use, func(a apiUse) float64 { return a.lists })), "inst-lists/"+u.step)
		b.ReportMetric(median(field(u.use, func(a apiUse) float64 { return a.listBytes }))/1e6, "inst-list-MB/"+u.step)
	}
	b.ReportMetric(float64(parallelism), "tf-parallelism")
	b.ReportMetric(float64(ls.Workers()), "ls-workers")
}

// apiUse is what the API server answered about Landscaper's objects: all
// requests, the LISTs of Installations, and the bytes those returned.
type apiUse struct{ requests, lists, listBytes float64 }

func (a apiUse) minus(b apiUse) apiUse {
	return apiUse{a.requests - b.requests, a.lists - b.lists, a.listBytes - b.listBytes}
}

func (a apiUse) String() string {
	return fmt.Sprintf("%.0f requests about Landscaper's objects, %.0f LISTs of Installations returning %.1f MB",
		a.requests, a.lists, a.listBytes/1e6)
}

// used reads apiUse so far from the API server's metrics.
func used(b *testing.B, env *testenv.Env) apiUse {
	b.Helper()
	const group = `group="landscaper.gardener.cloud"`
	list := []string{group, `resource="installations"`, `verb="LIST"`}
	var a apiUse
	var err error
	for _, m := range []struct {
		into   *float64
		name   string
		labels []string
	}{
		{&a.requests, "apiserver_request_total", []string{group}},
		{&a.lists, "apiserver_request_total", list},
		{&a.listBytes, "apiserver_response_sizes_sum", list},
	} {
		if *m.into, err = env.MetricSum(b.Context(), m.name, m.labels...); err != nil {
			b.Fatal(err)
		}
	}
	return a
}

func field(use []apiUse, f func(apiUse) float64) []float64 {
	out := make([]float64, len(use))
	for i, u := range use {
		out[i] = f(u)
	}
	return out
}

// instTimes are when the watch first saw an Installation, and when it
// first saw its job finished Succeeded (zero until then).
type instTimes struct{ created, succeeded time.Time }

// installationWatch notes, for each Installation of a namespace, when it
// appeared and when its job first finished Succeeded.
type installationWatch struct {
	mu     sync.Mutex
	seen   map[string]instTimes
	cancel context.CancelFunc
	done   chan struct{}
}

// watchSucceeded starts watching the Installations of ns; the times are
// those at which the events arrived, so they lag Landscaper's writes by
// the watch's delivery, milliseconds on this API server.
func watchSucceeded(b *testing.B, k *lsreferee.Kube, ns string) *installationWatch {
	b.Helper()
	res := k.Resource(lstest.GVRs["Installation"], ns)
	list, err := res.List(b.Context(), metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(b.Context())
	rw, err := watchtools.NewRetryWatcherWithContext(ctx, list.GetResourceVersion(), &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) { return res.Watch(ctx, o) },
	})
	if err != nil {
		cancel()
		b.Fatal(err)
	}
	iw := &installationWatch{seen: map[string]instTimes{}, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(iw.done)
		defer rw.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-rw.ResultChan():
				if !ok {
					return
				}
				u, isObj := ev.Object.(*unstructured.Unstructured)
				if !isObj || ev.Type == watch.Deleted {
					continue
				}
				now := time.Now()
				iw.mu.Lock()
				t, known := iw.seen[u.GetName()]
				if !known {
					t.created = now
				}
				if t.succeeded.IsZero() && jobSucceeded(u) {
					t.succeeded = now
				}
				iw.seen[u.GetName()] = t
				iw.mu.Unlock()
			}
		}
	}()
	return iw
}

// jobSucceeded tells whether the Installation's job has finished
// Succeeded.
func jobSucceeded(u *unstructured.Unstructured) bool {
	status, _, _ := unstructured.NestedMap(u.Object, "status")
	job, _ := status["jobID"].(string)
	return job != "" && status["jobIDFinished"] == job && status["phase"] == "Succeeded"
}

func (iw *installationWatch) times() map[string]instTimes {
	iw.mu.Lock()
	defer iw.mu.Unlock()
	out := make(map[string]instTimes, len(iw.seen))
	for n, t := range iw.seen {
		out[n] = t
	}
	return out
}

func (iw *installationWatch) stop() {
	iw.cancel()
	<-iw.done
}

func countSucceeded(seen map[string]instTimes) int {
	n := 0
	for _, t := range seen {
		if !t.succeeded.IsZero() {
			n++
		}
	}
	return n
}
