package e2e

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
)

// sigkillConfig declares quick (an exec item logging its runs) and slow
// (the same, after quick, but blocking while the flag file block-<OPERATION>
// exists). Both carry version in their env, so a new version is a change
// of both.
func sigkillConfig(w *acctest.Workspace, version string) string {
	logRun := fmt.Sprintf(`echo "$DEPLOY_ITEM_NAME $OPERATION" >> %q`, w.Path("runs.log"))
	block := fmt.Sprintf(`if [ -e %[1]q ]; then sleep 60 & echo $$ $! $PPID > %[2]q.tmp && mv %[2]q.tmp %[2]q; wait; fi`,
		w.Path("block-")+"$OPERATION", w.Path("pids"))
	item := func(script, deps string) string {
		return fmt.Sprintf("{\n      type = \"exec\"\n      depends_on = [%s]\n      config = jsonencode({ command = [\"sh\", \"-c\", %q], env = { V = %q } })\n    }",
			deps, script, version)
	}
	return "resource \"landscaper_execution\" \"app\" {\n  name = \"app\"\n  deploy_items = {\n" +
		"    quick = " + item(logRun, "") + "\n" +
		"    slow = " + item(logRun+"\n"+block, `"quick"`) + "\n  }\n}\n"
}

// runs returns the run log ("<item>:<OPERATION>", sorted) and empties it.
func runs(t *testing.T, w *acctest.Workspace) []string {
	t.Helper()
	b, err := os.ReadFile(w.Path("runs.log"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	_ = os.Remove(w.Path("runs.log"))
	out := strings.Fields(strings.ReplaceAll(strings.TrimSpace(string(b)), " ", ":"))
	slices.Sort(out)
	return out
}

// killTerraformMidRun starts terraform with args, waits until the slow
// item blocks, and SIGKILLs the terraform process alone, as an OOM killer
// or a CI timeout would. It then checks that the item's processes (shell
// and grandchild) and the provider process are gone: nothing of the run
// may outlive terraform.
func killTerraformMidRun(t *testing.T, w *acctest.Workspace, args ...string) {
	t.Helper()
	_ = os.Remove(w.Path("pids"))
	cmd := w.Command(nil, args...)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })

	procs := waitForPids(t, w.Path("pids"), done, out)
	if len(procs) != 3 {
		t.Fatalf("pid file: %v, want shell, sleep and provider", procs)
	}
	t.Cleanup(func() {
		for _, pid := range procs {
			if !gone(pid) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-done
	names := []string{"the item's shell", "the item's grandchild", "the provider"}
	// The provider notices within a second, stops the item (SIGTERM to its
	// process group) and exits.
	deadline := time.Now().Add(15 * time.Second)
	for i, pid := range procs {
		for !gone(pid) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if !gone(pid) {
			t.Errorf("%s (pid %d) outlived the SIGKILLed terraform", names[i], pid)
		}
	}
}

// TestSIGKILLOfTerraform checks what the README says about a SIGKILL of
// terraform mid-run: a create leaves nothing in state and the next apply
// runs every item again; an update leaves the previous state and the next
// apply re-runs the items whose spec changed, even those that had finished;
// a destroy leaves the resource in state and the next destroy deletes it.
// In every case no process of the run outlives terraform.
func TestSIGKILLOfTerraform(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	apply := []string{"apply", "-input=false", "-no-color", "-auto-approve"}

	// Create, killed while slow runs: quick had finished.
	w.Config(sigkillConfig(w, "1"))
	acctest.WriteFile(t, w.Path("block-RECONCILE"), "")
	killTerraformMidRun(t, w, apply...)
	if got := runs(t, w); !slices.Equal(got, []string{"quick:RECONCILE", "slow:RECONCILE"}) {
		t.Errorf("runs of the killed create: %v", got)
	}
	if out, _ := w.Run(nil, "state", "list"); strings.Contains(out, "landscaper_execution.app") {
		t.Errorf("the killed create left the resource in state:\n%s", out)
	}
	_ = os.Remove(w.Path("block-RECONCILE"))
	w.Apply()
	if got := runs(t, w); !slices.Equal(got, []string{"quick:RECONCILE", "slow:RECONCILE"}) {
		t.Errorf("the apply after a killed create ran %v, want every item again", got)
	}

	// Update, killed while slow runs: quick had finished its new version.
	w.Config(sigkillConfig(w, "2"))
	acctest.WriteFile(t, w.Path("block-RECONCILE"), "")
	killTerraformMidRun(t, w, apply...)
	if got := runs(t, w); !slices.Equal(got, []string{"quick:RECONCILE", "slow:RECONCILE"}) {
		t.Errorf("runs of the killed update: %v", got)
	}
	_ = os.Remove(w.Path("block-RECONCILE"))
	w.Apply()
	if got := runs(t, w); !slices.Equal(got, []string{"quick:RECONCILE", "slow:RECONCILE"}) {
		t.Errorf("the apply after a killed update ran %v, want both changed items again", got)
	}
	if plan, code := w.PlanExitCode(); code != 0 {
		t.Errorf("plan after recovery exited %d:\n%s", code, plan)
	}

	// Destroy, killed while slow is being deleted (it goes first: quick
	// waits for its dependant).
	acctest.WriteFile(t, w.Path("block-DELETE"), "")
	killTerraformMidRun(t, w, "destroy", "-input=false", "-no-color", "-auto-approve")
	if got := runs(t, w); !slices.Equal(got, []string{"slow:DELETE"}) {
		t.Errorf("runs of the killed destroy: %v", got)
	}
	if out, _ := w.Run(nil, "state", "list"); !strings.Contains(out, "landscaper_execution.app") {
		t.Errorf("the killed destroy removed the resource from state:\n%s", out)
	}
	_ = os.Remove(w.Path("block-DELETE"))
	if out, code := w.Run(nil, "destroy", "-input=false", "-no-color", "-auto-approve"); code != 0 {
		t.Fatalf("destroy after a killed destroy exited %d:\n%s", code, out)
	}
	if got := runs(t, w); !slices.Equal(got, []string{"quick:DELETE", "slow:DELETE"}) {
		t.Errorf("the destroy after a killed destroy ran %v", got)
	}
}
