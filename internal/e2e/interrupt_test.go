package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
)

// interruptConfig declares slow (an exec item running slowScript), after
// (a mock depending on slow; left out when its export is empty) and quick
// (an independent mock).
func interruptConfig(slowScript, after, quickExport string) string {
	items := fmt.Sprintf("    slow = { type = \"exec\", config = jsonencode({ command = [\"sh\", \"-c\", %q] }) }\n", slowScript)
	if after != "" {
		items += fmt.Sprintf("    after = { type = \"mock\", depends_on = [\"slow\"], config = jsonencode({ export = %q }) }\n", after)
	}
	items += fmt.Sprintf("    quick = { type = \"mock\", config = jsonencode({ export = %q }) }\n", quickExport)
	return "resource \"landscaper_execution\" \"app\" {\n  name = \"app\"\n  deploy_items = {\n" + items + "  }\n}\n"
}

// TestCtrlCInterruptsAndStateIsWritten: Ctrl-C during an update stops the
// running exec item (its whole process group), the state records what
// happened to every item, and a plain apply afterwards resumes only the
// unfinished part.
func TestCtrlCInterruptsAndStateIsWritten(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)

	// 1. Create: everything fast.
	w.Config(interruptConfig("echo v1", "", "one"))
	w.Apply()
	created := execution(w)
	quickJobCreate := itemField(created, "quick", "job_id_finished")

	// 2. Update: slow now blocks (its sleep is a grandchild in the same
	// process group), after is new and waits for slow, quick changed.
	pids := w.Path("pids")
	slowScript := fmt.Sprintf("sleep 60 & echo $$ $! > %[1]s.tmp && mv %[1]s.tmp %[1]s; wait", pids)
	w.Config(interruptConfig(slowScript, "after-export", "two"))

	bg := startApply(t, w)
	procs := waitForPids(t, pids, bg.done, bg.out)
	t.Cleanup(func() {
		for _, pid := range procs {
			if !gone(pid) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	bg.interrupt()
	if !strings.Contains(bg.out.String(), "ERR_INTERRUPTED") {
		t.Errorf("apply output does not mention ERR_INTERRUPTED:\n%s", bg.out.String())
	}
	expectGone(t, procs)

	interrupted := execution(w)
	jobID := acctest.Dig(interrupted, "status", "job_id")
	if p := itemField(interrupted, "slow", "phase"); p != "Failed" {
		t.Errorf("slow: phase %v, want Failed", p)
	}
	if codes := errorCodes(itemField(interrupted, "slow", "last_error")); !slices.Contains(codes, "ERR_INTERRUPTED") {
		t.Errorf("slow: last_error.codes %v, want ERR_INTERRUPTED", codes)
	}
	if p := itemField(interrupted, "after", "phase"); p != "Init" {
		t.Errorf("after: phase %v, want Init (never ran)", p)
	}
	if p := itemField(interrupted, "quick", "phase"); p != "Succeeded" {
		t.Errorf("quick: phase %v, want Succeeded", p)
	}
	quickJob := itemField(interrupted, "quick", "job_id_finished")
	if quickJob != jobID || quickJob == quickJobCreate {
		t.Errorf("quick: job_id_finished %v, want the interrupted job %v", quickJob, jobID)
	}
	if p := acctest.Dig(interrupted, "status", "phase"); p != "Failed" {
		t.Errorf("status.phase %v, want Failed", p)
	}
	if codes := errorCodes(acctest.Dig(interrupted, "status", "last_error")); !slices.Contains(codes, "ERR_INTERRUPTED") {
		t.Errorf("status.last_error.codes %v, want ERR_INTERRUPTED", codes)
	}
	if v := acctest.Dig(interrupted, "exports", "value", "quick"); v != "two" {
		t.Errorf("exports.quick = %v, want two", v)
	}

	// The unfinished part is a pending in-place update.
	if plan, code := w.PlanExitCode(); code != 2 {
		t.Errorf("plan after the interrupt exited %d, want 2 (changes):\n%s", code, plan)
	} else if !strings.Contains(plan, "1 to change") {
		t.Errorf("plan after the interrupt is not an in-place update:\n%s", plan)
	}

	// 3. Resume with slow made fast: only slow and after run.
	w.Config(interruptConfig("echo v3", "after-export", "two"))
	if res := w.Apply(); !strings.Contains(res, "1 changed") {
		t.Errorf("resume was not an in-place update:\n%s", res)
	}
	resumed := execution(w)
	for _, item := range []string{"slow", "after", "quick"} {
		if p := itemField(resumed, item, "phase"); p != "Succeeded" {
			t.Errorf("after resume: %s phase %v, want Succeeded", item, p)
		}
	}
	if j := itemField(resumed, "after", "job_id_finished"); j != acctest.Dig(resumed, "status", "job_id") {
		t.Errorf("after resume: after.job_id_finished %v, want the resume job %v", j, acctest.Dig(resumed, "status", "job_id"))
	}
	if j := itemField(resumed, "quick", "job_id_finished"); j != quickJob {
		t.Errorf("after resume: quick.job_id_finished %v, want %v (not re-run)", j, quickJob)
	}
	if v := acctest.Dig(resumed, "exports", "value", "after"); v != "after-export" {
		t.Errorf("exports.after = %v, want after-export", v)
	}
	if plan, code := w.PlanExitCode(); code != 0 {
		t.Errorf("plan after the resume exited %d, want 0 (no changes):\n%s", code, plan)
	}
}

// waitForPids waits until the slow item has written "<sh pid> <sleep pid>"
// to path, failing if terraform exits first.
func waitForPids(t *testing.T, path string, done <-chan struct{}, out fmt.Stringer) []int {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		if b, err := os.ReadFile(path); err == nil {
			var pids []int
			for _, f := range strings.Fields(string(b)) {
				pid, err := strconv.Atoi(f)
				if err != nil {
					t.Fatalf("pid file %q: %v", b, err)
				}
				pids = append(pids, pid)
			}
			if len(pids) < 2 {
				t.Fatalf("pid file %q: want at least two pids", b)
			}
			return pids
		}
		select {
		case <-done:
			t.Fatalf("terraform apply exited before the slow item started:\n%s", out.String())
		case <-deadline:
			t.Fatalf("the slow item did not start within 20s:\n%s", out.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// gone reports whether pid has exited. A zombie counts as gone: an orphan
// is reparented to PID 1, which in containers may never reap it.
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	// Format: pid (comm) state ...; comm may contain spaces or parentheses.
	rest := string(stat[strings.LastIndexByte(string(stat), ')')+1:])
	state := strings.Fields(rest)
	return len(state) > 0 && (state[0] == "Z" || state[0] == "X")
}

// syncBuffer collects a running command's output, readable at any time.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// errorCodes returns the codes of a last_error object from state.
func errorCodes(lastError any) []string {
	var codes []string
	list, _ := acctest.Dig(lastError, "codes").([]any)
	for _, c := range list {
		if s, ok := c.(string); ok {
			codes = append(codes, s)
		}
	}
	return codes
}
