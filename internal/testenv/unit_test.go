//go:build unix

package testenv

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestLastLines(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		n        int
		want     string
	}{
		{"empty", "", 3, ""},
		{"fewer lines than n", "a\nb\n", 3, "a\nb"},
		{"exactly n", "a\nb\nc", 3, "a\nb\nc"},
		{"more lines than n", "a\nb\nc\nd\n", 2, "c\nd"},
		{"trailing blank lines dropped", "a\nb\n\n\n", 1, "b"},
		{"zero", "a\n", 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := lastLines([]byte(tc.in), tc.n); got != tc.want {
				t.Fatalf("lastLines(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
			}
		})
	}
}

func TestModulePath(t *testing.T) {
	for _, tc := range []struct {
		name, gomod, want string
	}{
		{"plain", "module example.com/a\n\ngo 1.26\n", "example.com/a"},
		{"quoted with comment", "// c\nmodule \"example.com/b\" // why\n", "example.com/b"},
		{"tab", "module\texample.com/c\n", "example.com/c"},
		{"prefix of another word", "modules x\nmodule example.com/d\n", "example.com/d"},
		{"none", "go 1.26\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := modulePath([]byte(tc.gomod)); got != tc.want {
				t.Fatalf("modulePath = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestRepoRoot(t *testing.T) {
	root := t.TempDir()
	write := func(rel, content string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("repo/go.mod", "module "+mainModule+"\n")
	write("repo/tools/go.mod", "module "+mainModule+"/tools\n")
	write("repo/tools/testenv/go.mod", "module "+mainModule+"/tools/testenv\n")
	write("repo/internal/x/x.go", "package x\n")
	write("other/go.mod", "module example.com/other\n")

	for _, tc := range []struct {
		start, want string
		err         error
	}{
		{"repo", "repo", nil},
		{"repo/internal/x", "repo", nil},
		{"repo/tools/testenv", "repo", nil},
		{"other", "", errNoRepo},
	} {
		t.Run(tc.start, func(t *testing.T) {
			got, err := repoRoot(filepath.Join(root, tc.start))
			if !errors.Is(err, tc.err) {
				t.Fatalf("err %v, want %v", err, tc.err)
			}
			if tc.err == nil && got != filepath.Join(root, tc.want) {
				t.Fatalf("root %q, want %q", got, filepath.Join(root, tc.want))
			}
		})
	}
}

// TestStartFailure runs Start against fake binaries: the error must carry
// the failing process's log, and no process may be left behind.
func TestStartFailure(t *testing.T) {
	for _, tc := range []struct {
		name string
		// etcd is the fake etcd's script body; it records its PID first.
		etcd    string
		timeout time.Duration
		want    []string
	}{
		{
			name: "exits at once",
			etcd: `echo "fake etcd: flag --bogus not understood" >&2; exit 3`,
			want: []string{"etcd exited", "exit status 3", "flag --bogus not understood"},
		},
		{
			name:    "never ready",
			etcd:    `echo "fake etcd: waiting for nothing"; exec sleep 600`,
			timeout: 2 * time.Second,
			want:    []string{"etcd not ready", "waiting for nothing"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin := t.TempDir()
			pidFile := filepath.Join(t.TempDir(), "pid")
			scripts := map[string]string{
				"etcd":                    "echo $$ > " + pidFile + "\n" + tc.etcd,
				"kube-apiserver":          "exit 1",
				"kube-controller-manager": "exit 1",
			}
			for name, body := range scripts {
				if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
					t.Fatal(err)
				}
			}

			env, err := Start(t.Context(), Options{BinDir: bin, StartTimeout: tc.timeout})
			if err == nil {
				_ = env.Stop()
				t.Fatal("Start succeeded with a broken etcd")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}

			data, rerr := os.ReadFile(pidFile)
			if rerr != nil {
				t.Fatal(rerr)
			}
			pid, rerr := strconv.Atoi(strings.TrimSpace(string(data)))
			if rerr != nil {
				t.Fatal(rerr)
			}
			if kerr := syscall.Kill(pid, 0); !errors.Is(kerr, syscall.ESRCH) {
				t.Fatalf("fake etcd (pid %d) still exists after the failed Start: %v", pid, kerr)
			}
		})
	}
}
