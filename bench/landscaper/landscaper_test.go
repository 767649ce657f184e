//go:build unix

// Package landscaper measures the provider against Landscaper's own
// controllers (internal/testenv StartLandscaper) on one API server: the
// same 50-item installation applied and deleted by Landscaper and by
// landscaper_installation through the terraform CLI, in interleaved
// rounds. See bench/README.md for the numbers.
package landscaper

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/lscluster/lstest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/lsreferee"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/testenv"
)

// The provider and Landscaper are built and started by the first benchmark
// that runs, so a run without -bench (make testacc) builds and starts
// nothing.
var (
	build          sync.Once
	providerDir    string
	buildErr       error
	cleanup        = func() {}
	realLandscaper testenv.SharedLandscaper
)

// workspace builds the provider once (or takes the one in
// BENCH_PROVIDER_DIR, to measure another build) and returns its workspace.
func workspace(b *testing.B) *acctest.Workspace {
	b.Helper()
	build.Do(func() {
		if dir := os.Getenv("BENCH_PROVIDER_DIR"); dir != "" {
			providerDir = dir
			return
		}
		providerDir, cleanup, buildErr = acctest.BuildProvider()
	})
	return acctest.NewWorkspace(b, providerDir, buildErr)
}

// TestMain keeps Landscaper's configurations and logs in
// BENCH_LANDSCAPER_DIR if set (logs/<process>.log: where its time goes),
// gives each of its controllers and deployers BENCH_LANDSCAPER_WORKERS
// workers if set (else testenv's default), and stops Landscaper and its
// control plane and removes the provider's build at the end.
func TestMain(m *testing.M) {
	realLandscaper.LandscaperOptions.Dir = os.Getenv("BENCH_LANDSCAPER_DIR")
	if n := os.Getenv("BENCH_LANDSCAPER_WORKERS"); n != "" {
		workers, err := strconv.Atoi(n)
		if err != nil || workers < 1 {
			fmt.Fprintf(os.Stderr, "BENCH_LANDSCAPER_WORKERS=%q: want a positive number\n", n)
			os.Exit(2)
		}
		realLandscaper.LandscaperOptions.Workers = workers
	}
	code := m.Run()
	if err := realLandscaper.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "stopping Landscaper: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	cleanup()
	os.Exit(code)
}

// Items, Layers and ObjectsPerItem shape the benchmark's installations.
const (
	Items          = 50
	Layers         = 5
	ObjectsPerItem = 2
)

// blueprint renders Items kubernetes-manifest items of ObjectsPerItem
// ConfigMaps each into the import "namespace". With layered, the items
// form Layers layers of equal size and every item of a layer depends on
// every item of the layer before; without, no item depends on another.
func blueprint(layered bool) string {
	layers := 1
	if layered {
		layers = Layers
	}
	return fmt.Sprintf(`apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
jsonSchema: "https://json-schema.org/draft/2019-09/schema"
imports:
  - {name: cluster, targetType: landscaper.gardener.cloud/kubernetes-cluster}
  - {name: namespace, type: data, schema: {type: string}}
deployExecutions:
  - name: default
    type: GoTemplate
    template: |
      {{- $ns := .imports.namespace }}
      {{- $layers := %[1]d }}
      {{- $width := %[2]d }}
      deployItems:
      {{- range $l := until $layers }}
      {{- range $i := until $width }}
        - name: item-{{ $l }}-{{ $i }}
          type: landscaper.gardener.cloud/kubernetes-manifest
          target: {import: cluster}
          {{- if gt $l 0 }}
          dependsOn:
          {{- range $j := until $width }}
            - item-{{ sub $l 1 }}-{{ $j }}
          {{- end }}
          {{- end }}
          config:
            apiVersion: manifest.deployer.landscaper.gardener.cloud/v1alpha2
            kind: ProviderConfiguration
            updateStrategy: update
            manifests:
            {{- range $o := until %[3]d }}
              - policy: manage
                manifest:
                  apiVersion: v1
                  kind: ConfigMap
                  metadata: {name: item-{{ $l }}-{{ $i }}-{{ $o }}, namespace: {{ $ns }}}
                  data: {layer: "{{ $l }}", item: "{{ $i }}"}
            {{- end }}
      {{- end }}
      {{- end }}
`, layers, Items/layers, ObjectsPerItem)
}

// BenchmarkLandscaper50 applies and deletes the same installation of
// Items manifest items with Landscaper's controllers and with the
// provider, in rounds that alternate which goes first. Each side's times
// run from the first write (Landscaper: Targets, DataObject and
// Installation; provider: terraform apply, plan included) until the
// Installation's job finished Succeeded or terraform exited, with all
// Items×ObjectsPerItem ConfigMaps there; and from the deletion (the
// Installation's; terraform destroy, refresh included) until the
// Installation and every ConfigMap are gone or terraform exited. It
// reports the medians and their ratios (Landscaper's time over the
// provider's). BENCH_PROVIDER_CONFIG is put into the provider block, for
// instance `max_parallelism = 5`, Landscaper's workers per controller here.
//
//	independent: no item depends on another.
//	layered:     Layers layers of Items/Layers items; each item depends
//	             on every item of the layer before.
func BenchmarkLandscaper50(b *testing.B) {
	for _, layered := range []bool{false, true} {
		name := "independent"
		if layered {
			name = "layered"
		}
		b.Run(name, func(b *testing.B) { benchLandscaper(b, name, blueprint(layered)) })
	}
}

// side is one way of deploying: apply until deployed, remove until gone,
// and the seconds each took.
type side struct {
	name             string
	apply, remove    func(round int)
	applied, removed []float64
}

func benchLandscaper(b *testing.B, name, bp string) {
	w := workspace(b) // first: it skips without TF_ACC
	env, _ := realLandscaper.Get(b)
	k := lsreferee.NewKube(b, env.Kubeconfig())
	// The waits look often so that their granularity stays small beside
	// what they measure.
	k.Interval = 20 * time.Millisecond
	inst := func(ns string) lsreferee.Installation {
		return lsreferee.Installation{Name: "scale-" + name, Blueprint: map[string]string{"blueprint.yaml": bp},
			Imports: map[string]any{"namespace": ns}, Targets: []string{"cluster"}}
	}
	ns := func(round int, who string) string { return fmt.Sprintf("scale-%s-%d-%s", name, round, who) }

	ls := &side{name: "Landscaper"}
	ls.apply = func(round int) {
		instNS := ns(round, "inst")
		k.Write(instNS, inst(ns(round, "ls")))
		k.WaitJobFinished(instNS, "scale-"+name)
		if phase := phase(k, instNS, "scale-"+name); phase != "Succeeded" {
			b.Fatalf("Landscaper's Installation %s/scale-%s is %s", instNS, name, phase)
		}
		waitConfigMaps(k, ns(round, "ls"), Items*ObjectsPerItem)
	}
	ls.remove = func(round int) {
		instNS := ns(round, "inst")
		k.Delete(lstest.GVRs["Installation"], instNS, "scale-"+name)
		k.WaitGone(lstest.GVRs["Installation"], instNS, "scale-"+name)
		waitConfigMaps(k, ns(round, "ls"), 0)
	}
	// BENCH_TF_LOG_DIR receives Terraform's and the provider's trace log of
	// each run, <shape>-<round>-<command>.log: where their time goes.
	logEnv := func(round int, command string) []string {
		dir := os.Getenv("BENCH_TF_LOG_DIR")
		if dir == "" {
			return nil
		}
		return []string{"TF_LOG=trace", "TF_LOG_PATH=" + filepath.Join(dir, fmt.Sprintf("%s-%d-%s.log", name, round, command))}
	}
	tf := &side{name: "provider"}
	tf.apply = func(round int) {
		if out, code := w.Run(logEnv(round, "apply"), "apply", "-input=false", "-no-color", "-auto-approve"); code != 0 {
			b.Fatalf("terraform apply exited %d:\n%s", code, out)
		}
		waitConfigMaps(k, ns(round, "tf"), Items*ObjectsPerItem)
	}
	tf.remove = func(round int) {
		if out, code := w.Run(logEnv(round, "destroy"), "destroy", "-input=false", "-no-color", "-auto-approve"); code != 0 {
			b.Fatalf("terraform destroy exited %d:\n%s", code, out)
		}
		waitConfigMaps(k, ns(round, "tf"), 0)
	}

	timed := func(f func(int), round int) float64 {
		start := time.Now()
		f(round)
		return time.Since(start).Seconds()
	}
	round := 0
	for b.Loop() {
		// Namespaces and files are not part of either side's time.
		b.StopTimer()
		for _, who := range []string{"inst", "ls", "tf"} {
			k.Namespace(ns(round, who))
		}
		// Landscaper's context controller writes the namespace's default
		// Context, which Installations need, when the namespace appears.
		waitExists(k, lstest.GVRs["Context"], ns(round, "inst"), "default")
		lsreferee.WriteProvider(b, w, k.Kubeconfig, inst(ns(round, "tf")))
		if cfg := os.Getenv("BENCH_PROVIDER_CONFIG"); cfg != "" {
			w.Config(lsreferee.ProviderConfig(inst(ns(round, "tf"))) + "provider \"landscaper\" {\n  " + cfg + "\n}\n")
		}
		b.StartTimer()
		order := []*side{ls, tf}
		if round%2 == 1 {
			order = []*side{tf, ls}
		}
		for _, s := range order {
			s.applied = append(s.applied, timed(s.apply, round))
		}
		for _, s := range order {
			s.removed = append(s.removed, timed(s.remove, round))
		}
		round++
	}
	for _, s := range []*side{ls, tf} {
		b.Logf("%s: apply %s, delete %s", s.name, seconds(s.applied), seconds(s.removed))
	}
	short := map[string]string{"Landscaper": "ls", "provider": "tf"}
	for _, s := range []*side{ls, tf} {
		b.ReportMetric(median(s.applied), short[s.name]+"-apply-s")
		b.ReportMetric(median(s.removed), short[s.name]+"-delete-s")
	}
	b.ReportMetric(median(ls.applied)/median(tf.applied), "apply-ratio")
	b.ReportMetric(median(ls.removed)/median(tf.removed), "delete-ratio")
}

// phase is the Installation's status.phase.
func phase(k *lsreferee.Kube, ns, name string) string {
	p, _, _ := unstructured.NestedString(k.Get(lstest.GVRs["Installation"], ns, name).Object, "status", "phase")
	return p
}

// waitExists waits until the object name of gvr in ns exists.
func waitExists(k *lsreferee.Kube, gvr schema.GroupVersionResource, ns, name string) {
	k.T.Helper()
	k.Poll(func() bool {
		_, err := k.Resource(gvr, ns).Get(k.T.Context(), name, metav1.GetOptions{})
		return err == nil
	}, func() string { return fmt.Sprintf("%s %s/%s does not exist", gvr.Resource, ns, name) })
}

var configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// waitConfigMaps waits until ns holds want ConfigMaps besides the one
// Kubernetes puts into every namespace.
func waitConfigMaps(k *lsreferee.Kube, ns string, want int) {
	k.T.Helper()
	have := -1
	k.Poll(func() bool {
		list, err := k.Resource(configMaps, ns).List(k.T.Context(), metav1.ListOptions{})
		if err != nil {
			k.T.Fatal(err)
		}
		have = 0
		for _, cm := range list.Items {
			if cm.GetName() != "kube-root-ca.crt" {
				have++
			}
		}
		return have == want
	}, func() string { return fmt.Sprintf("%s holds %d ConfigMaps, want %d", ns, have, want) })
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(v))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func seconds(v []float64) string {
	var parts []string
	for _, x := range v {
		parts = append(parts, fmt.Sprintf("%.2fs", x))
	}
	return strings.Join(parts, " ")
}
