// Package e2e drives the real terraform CLI against the real provider
// binary, for what terraform-plugin-testing cannot do: send Ctrl-C, read
// the provider's logs, and start from state an earlier release wrote.
// Like acceptance tests, it runs only with TF_ACC set, and needs terraform
// on PATH. No network is needed: the provider is found through
// dev_overrides, so `terraform init` is skipped.
package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/testenv"
)

// providerDir holds the provider binary built by TestMain; buildErr says
// why there is none.
var (
	providerDir string
	buildErr    error
)

// kubeEnv is the control plane of the tests that deploy to a cluster,
// started for acceptance runs only.
var kubeEnv *testenv.Env

func TestMain(m *testing.M) {
	if address := os.Getenv(sourceProviderEnv); address != "" {
		serveStubProvider(address)
	}
	dir, cleanup, err := acctest.BuildProvider()
	providerDir, buildErr = dir, err
	var code int
	if os.Getenv("TF_ACC") == "" {
		code = m.Run()
	} else {
		code = testenv.Main(m, &kubeEnv)
	}
	if err := realLandscaper.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "stopping Landscaper: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	cleanup()
	os.Exit(code)
}

func newWorkspace(t *testing.T) *acctest.Workspace {
	t.Helper()
	return acctest.NewWorkspace(t, providerDir, buildErr)
}

// execution returns the attributes of landscaper_execution.app.
func execution(w *acctest.Workspace) map[string]any {
	w.T.Helper()
	return w.Attributes("landscaper_execution", "app")
}

// itemField reads status.deploy_items[item][field] from state attributes.
func itemField(attrs map[string]any, item, field string) any {
	return acctest.Dig(attrs, "status", "deploy_items", item, field)
}

// background is a terraform command running in its own process group, so
// a SIGINT to the group reaches terraform and its provider as a
// terminal's Ctrl-C would, and nothing else.
type background struct {
	t    *testing.T
	cmd  *exec.Cmd
	out  *syncBuffer
	err  error
	done chan struct{} // closed when terraform has exited, with its result in err
}

// startApply starts `terraform apply` in the background; whatever is left
// of its process group is killed when the test ends.
func startApply(t *testing.T, w *acctest.Workspace) *background {
	t.Helper()
	b := &background{t: t, cmd: w.Command(nil, "apply", "-input=false", "-no-color", "-auto-approve"),
		out: &syncBuffer{}, done: make(chan struct{})}
	b.cmd.Stdout, b.cmd.Stderr = b.out, b.out
	b.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { b.err = b.cmd.Wait(); close(b.done) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL) // in case the test failed early
		<-b.done
	})
	return b
}

// interrupt sends Ctrl-C and waits for terraform to exit, which it must
// do within 20 seconds and with a failure.
func (b *background) interrupt() {
	b.t.Helper()
	if err := syscall.Kill(-b.cmd.Process.Pid, syscall.SIGINT); err != nil {
		b.t.Fatal(err)
	}
	select {
	case <-b.done:
		if b.err == nil {
			b.t.Fatalf("interrupted terraform apply exited 0:\n%s", b.out.String())
		}
	case <-time.After(20 * time.Second):
		b.t.Fatalf("terraform apply did not exit within 20s of SIGINT:\n%s", b.out.String())
	}
}

// expectGone waits up to 5 seconds for each process to be gone.
func expectGone(t *testing.T, pids []int) {
	t.Helper()
	for _, pid := range pids {
		deadline := time.Now().Add(5 * time.Second)
		for !gone(pid) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if !gone(pid) {
			t.Errorf("process %d of the interrupted item still runs", pid)
		}
	}
}
