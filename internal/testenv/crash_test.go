//go:build unix

package testenv_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/testenv"
)

// crashHelperEnv switches the test binary into crashHelper: the directory it
// names holds fake binaries and receives the fake etcd's PID.
const crashHelperEnv = "TESTENV_CRASH_HELPER_DIR"

// crashHelper starts an environment whose etcd never becomes ready, waits
// until that etcd runs, and dies without any cleanup, as a test binary does
// on a panic in another goroutine or a -timeout abort.
func crashHelper(dir string) {
	go func() {
		_, _ = testenv.Start(context.Background(), testenv.Options{BinDir: dir, StartTimeout: time.Hour})
	}()
	for range 600 {
		if _, err := os.Stat(filepath.Join(dir, "pid")); err == nil {
			os.Exit(3)
		}
		time.Sleep(100 * time.Millisecond)
	}
	os.Exit(4)
}

// TestNoOrphansAfterCrash kills nothing itself: the kernel must end the
// children of a test binary that died.
func TestNoOrphansAfterCrash(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("only Linux ties a child's life to its parent's")
	}
	dir := t.TempDir()
	fakes := map[string]string{
		"etcd":                    "echo $$ > " + filepath.Join(dir, "pid.tmp") + " && mv " + filepath.Join(dir, "pid.tmp") + " " + filepath.Join(dir, "pid") + "\nexec sleep 600",
		"kube-apiserver":          "exit 1",
		"kube-controller-manager": "exit 1",
	}
	for name, body := range fakes {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}

	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashHelperEnv+"="+dir)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("helper: %v, want exit status 3\n%s", err, out)
	}

	data, err := os.ReadFile(filepath.Join(dir, "pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	// The signal is delivered as the helper exits; reaping by init follows.
	deadline := time.Now().Add(30 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("fake etcd (pid %d) outlived the crashed test binary", pid)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
