package testenv

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

const (
	// BinEnv names the environment variable that points at a directory
	// holding etcd, kube-apiserver and kube-controller-manager. When set,
	// those binaries are used as they are and only built if missing.
	BinEnv = "LANDSCAPER_TESTENV_BIN"

	mainModule = "github.com/landscaper-tf/terraform-provider-landscaper"
)

// binarySet is a group of binaries one build script makes.
type binarySet struct {
	// env names the variable that points at a directory holding them.
	env string
	// script builds them into the directory in $env; relative to the
	// repository.
	script string
	// defaultDir is where they go without $env; relative to the repository.
	defaultDir string
	names      []string
}

// controlPlane are the commands Start runs, as scripts/testenv-build.sh
// names them.
var controlPlane = binarySet{
	env:        BinEnv,
	script:     "scripts/testenv-build.sh",
	defaultDir: "bin/testenv",
	names:      []string{"etcd", "kube-apiserver", "kube-controller-manager"},
}

// binaries locates the set's binaries and builds them when needed.
//
// Without an explicit directory the build script always runs: it is a no-op
// when its stamp matches what it builds from, and otherwise it rebuilds, so a
// version bump never leaves stale binaries in use. The build output goes to
// buildLog.
func (s binarySet) binaries(ctx context.Context, explicitDir, buildLog string) (string, error) {
	dir := explicitDir
	if dir == "" {
		dir = os.Getenv(s.env)
	}
	if dir != "" && s.missing(dir) == "" {
		return dir, nil
	}

	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	root, err := repoRoot(wd)
	if err != nil {
		if dir != "" {
			return "", fmt.Errorf("%s missing from %s, and no repository to build it from: %w", s.missing(dir), dir, err)
		}
		return "", fmt.Errorf("set %s or run the tests inside the repository: %w", s.env, err)
	}
	if dir == "" {
		dir = filepath.Join(root, s.defaultDir)
	}
	if err := s.build(ctx, root, dir, buildLog); err != nil {
		return "", err
	}
	if name := s.missing(dir); name != "" {
		return "", fmt.Errorf("%s did not produce %s in %s", s.script, name, dir)
	}
	return dir, nil
}

// missing returns the name of the first binary that is not an executable
// file in dir, or "" when all are present.
func (s binarySet) missing(dir string) string {
	for _, name := range s.names {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return name
		}
	}
	return ""
}

func (s binarySet) build(ctx context.Context, root, dir, buildLog string) error {
	log, err := os.OpenFile(buildLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer func() { _ = log.Close() }()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(root, s.script))
	cmd.Dir = root
	cmd.Env = append(os.Environ(), s.env+"="+dir)
	cmd.Stdout = log
	cmd.Stderr = log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w%s", s.script, err, logTail(buildLog))
	}
	return nil
}

// errNoRepo means no directory above the start holds the main module.
var errNoRepo = errors.New("no go.mod of " + mainModule + " found")

// repoRoot walks up from dir to the directory whose go.mod declares the
// main module. Nested modules (tools/, tools/testenv/) are passed over.
func repoRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && modulePath(data) == mainModule {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errNoRepo
		}
		dir = parent
	}
}

// modulePath returns the path of the module directive in go.mod content.
func modulePath(gomod []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(gomod))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		rest, ok := strings.CutPrefix(line, "module")
		if !ok || rest == "" || (rest[0] != ' ' && rest[0] != '\t') {
			continue
		}
		rest = strings.TrimSpace(rest)
		if i := strings.Index(rest, "//"); i >= 0 {
			rest = strings.TrimSpace(rest[:i])
		}
		return strings.Trim(rest, `"`)
	}
	return ""
}
