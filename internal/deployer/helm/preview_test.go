//go:build unix

package helm

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/helm/helmtest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/target"
)

// A dry run of a release is `helm upgrade --install --dry-run=server`
// compared object by object with the cluster: creates before the install,
// unchanged after it, the fields a new value changes (a Secret's by path
// only), and a delete for an object the chart no longer renders. With
// helmDeployment: false the rendered chart is dry-run like manifests.
func TestPreviewOfAReleaseAndOfRenderedObjects(t *testing.T) {
	tgt, _ := cluster(t)
	d := New(Options{PollInterval: 100 * time.Millisecond})
	for _, mode := range []string{"release", "objects"} {
		t.Run(mode, func(t *testing.T) {
			ns, name := "preview-"+mode, "pv-"+mode
			config := func(message string, extra bool) json.RawMessage {
				c := map[string]any{
					"apiVersion": APIVersion, "kind": Kind, "name": name, "namespace": ns, "createNamespace": true,
					"chart":  map[string]any{"archive": map[string]any{"raw": helmtest.ArchiveBase64(t, helmtest.Workload, "")}},
					"values": map[string]any{"message": message, "extra": extra},
				}
				if mode == "objects" {
					c["helmDeployment"] = false
				}
				return mustJSON(t, c)
			}
			req := deployer.Request{Execution: "e", Item: mode, Config: config("one", true), Target: tgt}
			preview := func(what string, want map[string]string) {
				t.Helper()
				changes, err := d.Preview(t.Context(), req)
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				got := map[string]string{}
				for _, c := range changes {
					got[c.Object] = c.Summary
				}
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(want)
				if string(g) != string(w) {
					t.Errorf("%s:\n got  %s\n want %s", what, g, w)
				}
				if strings.Contains(string(g), "one-token") || strings.Contains(string(g), "two-token") {
					t.Errorf("%s: a secret's value is shown: %s", what, g)
				}
			}
			obj := func(kind, n string) string { return "v1 " + kind + " " + ns + "/" + name + "-" + n }
			all := func(summary string) map[string]string {
				m := map[string]string{obj("ConfigMap", "config"): summary, obj("ConfigMap", "extra"): summary, obj("Secret", "secret"): summary}
				if mode == "objects" {
					// Without a release, createNamespace renders the namespace.
					m["v1 Namespace "+ns] = summary
				}
				return m
			}
			preview("before the install", all("create"))
			res, err := run(t, d, core.OperationReconcile, req)
			if err != nil {
				t.Fatal(err)
			}
			req.State = res.State
			preview("after the install", all("unchanged"))
			req.Config = config("two", false)
			changed := all("unchanged")
			changed[obj("ConfigMap", "config")], changed[obj("ConfigMap", "extra")], changed[obj("Secret", "secret")] =
				"update: data.message", "delete", "update: data.token"
			preview("after a change", changed)
			if _, err := run(t, d, core.OperationDelete, req); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A cluster that does not answer is an error of the dry run (the plan
// turns it into a warning), not a hang.
func TestPreviewOfAnUnreachableCluster(t *testing.T) {
	kc := "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n"
	tgt := &deployer.Target{Name: "down", Type: target.KubernetesClusterType, Config: mustJSON(t, map[string]string{"kubeconfig": kc})}
	d := New(Options{})
	for _, release := range []bool{true, false} {
		req := deployer.Request{Execution: "e", Item: "down", Target: tgt, Config: mustJSON(t, map[string]any{
			"apiVersion": APIVersion, "kind": Kind, "name": "down", "namespace": "down", "helmDeployment": release,
			"chart": map[string]any{"archive": map[string]any{"raw": helmtest.ArchiveBase64(t, helmtest.Workload, "")}},
		})}
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		_, err := d.Preview(ctx, req)
		cancel()
		if err == nil {
			t.Errorf("helmDeployment %v: a dry run against an unreachable cluster succeeded", release)
		}
	}
}
