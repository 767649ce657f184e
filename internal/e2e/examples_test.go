package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
)

// copyTree copies the files below src into dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if strings.HasPrefix(rel, ".terraform") || strings.HasSuffix(rel, ".tfstate") {
			return nil
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// examples/installation, as a team would keep it (module, blueprints,
// component constructor with a component reference, an exec script),
// applies, plans nothing the second time, reacts to a changed variable
// with an update, and destroys.
func TestExampleInstallation(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	copyTree(t, filepath.Join("..", "..", "examples", "installation"), w.Dir)
	out := w.Apply()
	for _, want := range []string{`url = "https://app.staging.example.com"`, `dashboard = "https://grafana.staging.example.com"`} {
		if !strings.Contains(out, want) {
			t.Errorf("apply output lacks %s:\n%s", want, out)
		}
	}
	if plan, code := w.PlanExitCode(); code != 0 {
		t.Fatalf("second plan exit %d, want no changes:\n%s", code, plan)
	}
	out = w.Apply("TF_VAR_environment=production")
	if !strings.Contains(out, `url = "https://app.production.example.com"`) || !strings.Contains(out, "1 changed") {
		t.Errorf("changing the environment:\n%s", out)
	}
	attrs := w.Attributes("landscaper_installation", "app")
	if p := acctest.Dig(attrs, "status", "deploy_items", "monitoring/dashboard"); p != "Succeeded" {
		t.Errorf("monitoring/dashboard: %v", p)
	}
	if out, code := w.Run([]string{"TF_VAR_environment=production"}, "destroy", "-auto-approve", "-input=false", "-no-color"); code != 0 {
		t.Fatalf("destroy exit %d:\n%s", code, out)
	}
}

// examples/installation/installation.tftest.hcl passes under the real
// `terraform test`, offline: `terraform get` links the local render module
// (no registry: the provider comes through dev_overrides, so no init), and
// every run block only plans.
func TestExampleInstallationTerraformTest(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	copyTree(t, filepath.Join("..", "..", "examples", "installation"), w.Dir)
	if out, code := w.Run(nil, "get", "-no-color"); code != 0 {
		t.Fatalf("terraform get exit %d:\n%s", code, out)
	}
	out, code := w.Run(nil, "test", "-no-color")
	if code != 0 {
		t.Fatalf("terraform test exit %d:\n%s", code, out)
	}
	for _, want := range []string{`run "staging"... pass`, `run "production"... pass`, "0 failed"} {
		if !strings.Contains(out, want) {
			t.Errorf("terraform test output lacks %s:\n%s", want, out)
		}
	}
	// Nothing ran: the plan-only runs leave no state behind.
	if _, err := os.Stat(filepath.Join(w.Dir, "terraform.tfstate")); err == nil {
		t.Error("terraform test wrote state")
	}
}

// examples/fleet/installation rolls a new version out through the real
// CLI: the canary cluster first, then the batches; a manual pause stops
// after one stage with a warning; destroy removes everything. The
// clusters' kubeconfigs point nowhere: the example's exec items never
// connect, and the health command is replaced.
func TestExampleFleetInstallation(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	copyTree(t, filepath.Join("..", "..", "examples", "fleet", "installation"), w.Dir)
	var clusters []string
	for _, name := range []string{"eu-1", "eu-2", "us-1", "us-2", "ap-1"} {
		p := w.Path(name + ".kubeconfig")
		acctest.WriteFile(t, p, acctest.UnreachableKubeconfig)
		clusters = append(clusters, fmt.Sprintf("%q = %q", name, p))
	}
	vars := func(more ...string) []string {
		return append([]string{"TF_VAR_clusters={" + strings.Join(clusters, ", ") + "}", "TF_VAR_bake=1s",
			`TF_VAR_health_command=["sh", "-c", "test -n \"$LANDSCAPER_MEMBER_ITEMS\""]`}, more...)
	}
	out := w.Apply(vars()...)
	if !strings.Contains(out, `rollout = "Completed"`) {
		t.Fatalf("create:\n%s", out)
	}
	// A new version, paused: the canary (ap-1, first by name) alone moves.
	out, code := w.Run(vars("TF_VAR_app_version=2.0.0", "TF_VAR_paused=true"), "apply", "-auto-approve", "-input=false", "-no-color")
	if code != 0 || !strings.Contains(out, `Rollout of group "clusters" paused by hand`) || !strings.Contains(out, `members_on_new_spec = tolist([`) ||
		!strings.Contains(out, "\"ap-1\",\n])") {
		t.Fatalf("paused apply exit %d:\n%s", code, out)
	}
	out = w.Apply(vars("TF_VAR_app_version=2.0.0")...)
	if !strings.Contains(out, `rollout = "Completed"`) || !strings.Contains(out, `"us-2",`) {
		t.Fatalf("unpaused apply:\n%s", out)
	}
	if out, code := w.Run(vars("TF_VAR_app_version=2.0.0"), "destroy", "-auto-approve", "-input=false", "-no-color"); code != 0 {
		t.Fatalf("destroy exit %d:\n%s", code, out)
	}
}
