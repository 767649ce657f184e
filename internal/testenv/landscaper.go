//go:build unix

package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// LandscaperBinEnv names the environment variable that points at a
// directory holding Landscaper's controllers (landscaper-controller and
// <deployer>-deployer-controller). When set, the binaries are used as they
// are and only built if missing; without it they live in <repo>/bin/landscaper,
// kept up to date by scripts/landscaper-build.sh.
const LandscaperBinEnv = "LANDSCAPER_CONTROLLERS_BIN"

// LandscaperNamespace is the namespace Landscaper's processes run "in", as
// its chart deploys them: it holds Landscaper's health check object.
const LandscaperNamespace = "ls-system"

// DefaultDeployers are the deployers StartLandscaper runs: all that work
// without a container runtime.
var DefaultDeployers = []string{"manifest", "helm", "mock"}

var landscaperBinaries = binarySet{
	env:        LandscaperBinEnv,
	script:     "scripts/landscaper-build.sh",
	defaultDir: "bin/landscaper",
	names: []string{"landscaper-controller", "manifest-deployer-controller",
		"helm-deployer-controller", "mock-deployer-controller"},
}

// landscaperGrace bounds the graceful shutdown of one of Landscaper's
// processes; its managers stop their workers on SIGTERM.
const landscaperGrace = 10 * time.Second

// LandscaperOptions configure StartLandscaper. The zero value is ready to use.
type LandscaperOptions struct {
	// BinDir holds Landscaper's controllers. Empty means
	// $LANDSCAPER_CONTROLLERS_BIN, else <repo>/bin/landscaper.
	BinDir string
	// Deployers replaces DefaultDeployers: any of "manifest", "helm" and
	// "mock"; empty runs none.
	Deployers []string
	// Dir receives the configurations, caches and logs/<process>.log. Empty
	// means a new temporary directory, which Stop removes unless a test
	// watching Landscaper failed (see Watch).
	Dir string
	// StartTimeout bounds the wait for each process to become ready; zero
	// means two minutes.
	StartTimeout time.Duration
	// Workers is how many objects each of Landscaper's installation,
	// execution and deploy item controllers, and the manifest and helm
	// deployers, reconcile at once; zero means DefaultLandscaperWorkers.
	// Landscaper fixes the mock deployer's count (1 in its logs), and the
	// context controller runs 2 here.
	Workers int
}

// DefaultLandscaperWorkers is LandscaperOptions.Workers when unset: more
// than Landscaper's own default of 1, so that tests of many items do not
// queue behind one worker.
const DefaultLandscaperWorkers = 5

// Landscaper is Gardener Landscaper's own controllers, built from
// third_party/landscaper and running as local processes against an Env's
// API server, which is then Landscaper's resource cluster and, through
// kubeconfig Targets, the target cluster too: the controller in its two
// modes (central: CRDs, Contexts, deploy item timeouts; main: Installations
// and Executions) and the deployers, each with its configuration as
// Landscaper's chart renders it. No webhooks run, so invalid objects are not
// rejected when created.
//
// Use it as a referee for what the provider claims about Landscaper:
//
//	ls, err := testenv.StartLandscaper(ctx, env, testenv.LandscaperOptions{})
//	...
//	ls.Watch(t) // in each test: on failure, keep the logs and print where they are
//
// then write Installations, Targets, DataObjects with the annotation
// landscaper.gardener.cloud/operation: reconcile through env's API, and wait
// for their status.phase. Env.Stop stops Landscaper first; Stop stops it
// alone. A package whose tests share one Landscaper uses SharedLandscaper.
type Landscaper struct {
	env    *Env
	opts   LandscaperOptions
	dir    string
	ownDir bool
	binDir string

	mu      sync.Mutex
	procs   []*process // in start order
	keep    bool       // keep dir: a watched test failed
	stopped bool
}

// StartLandscaper starts Landscaper against env and returns once every
// process has started its workers: the central controller first, until
// Landscaper's CRDs, which it installs, are Established; then the main
// controller and the deployers. On failure everything started is stopped
// again and the error carries the tail of the failing process's log.
func StartLandscaper(ctx context.Context, env *Env, opts LandscaperOptions) (_ *Landscaper, err error) {
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = defaultStartTimeout
	}
	if opts.Deployers == nil {
		opts.Deployers = DefaultDeployers
	}
	switch {
	case opts.Workers < 0:
		return nil, fmt.Errorf("testenv: Landscaper's workers must not be negative, got %d", opts.Workers)
	case opts.Workers == 0:
		opts.Workers = DefaultLandscaperWorkers
	}
	for _, d := range opts.Deployers {
		if !slices.Contains(DefaultDeployers, d) {
			return nil, fmt.Errorf("testenv: unknown deployer %q; known: %s", d, strings.Join(DefaultDeployers, ", "))
		}
	}
	l := &Landscaper{env: env, opts: opts, dir: opts.Dir}
	if l.dir == "" {
		if l.dir, err = os.MkdirTemp("", "landscaper-real-"); err != nil {
			return nil, err
		}
		l.ownDir = true
	}
	defer func() {
		if err != nil {
			_ = l.stop(true)
		}
	}()
	for _, sub := range []string{"logs", "config", "oci-cache", "blueprints", "helm"} {
		if err := os.MkdirAll(filepath.Join(l.dir, sub), 0o700); err != nil {
			return nil, err
		}
	}
	if l.binDir, err = landscaperBinaries.binaries(ctx, opts.BinDir, l.logPath("build")); err != nil {
		return nil, fmt.Errorf("landscaper binaries: %w", err)
	}
	if err := l.writeConfigs(); err != nil {
		return nil, err
	}
	if err := l.ensureNamespace(ctx); err != nil {
		return nil, err
	}

	central, err := l.start("landscaper-central", "landscaper-controller", "landscaper.yaml", "LANDSCAPER_MODE=central-landscaper")
	if err != nil {
		return nil, err
	}
	if err := central.waitReady(ctx, opts.StartTimeout, l.crdsEstablished); err != nil {
		return nil, err
	}
	started := []*process{central}
	main, err := l.start("landscaper-main", "landscaper-controller", "landscaper.yaml")
	if err != nil {
		return nil, err
	}
	started = append(started, main)
	for _, d := range opts.Deployers {
		p, err := l.start(d+"-deployer", d+"-deployer-controller", d+"-deployer.yaml")
		if err != nil {
			return nil, err
		}
		started = append(started, p)
	}
	// The processes start their workers in parallel; wait for each in turn.
	for _, p := range started {
		if err := p.waitReady(ctx, opts.StartTimeout, workersStarted(p.logPath)); err != nil {
			return nil, err
		}
	}
	env.addDependent(l.Stop)
	return l, nil
}

// Dir holds the configurations (config/), caches and logs (logs/).
func (l *Landscaper) Dir() string { return l.dir }

// Workers is the worker count each controller and deployer was given
// (LandscaperOptions.Workers, or its default).
func (l *Landscaper) Workers() int { return l.opts.Workers }

// Logs returns the log file of every process, by process name
// (landscaper-central, landscaper-main, manifest-deployer, ...).
func (l *Landscaper) Logs() map[string]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	logs := make(map[string]string, len(l.procs))
	for _, p := range l.procs {
		logs[p.name] = p.logPath
	}
	return logs
}

// PIDs returns the process ID of every process, by process name as in Logs.
func (l *Landscaper) PIDs() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	pids := make(map[string]int, len(l.procs))
	for _, p := range l.procs {
		pids[p.name] = p.cmd.Process.Pid
	}
	return pids
}

// Err returns an error naming every process that has exited, with the tail
// of its log; nil while all run, and after Stop.
func (l *Landscaper) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return nil
	}
	var errs []error
	for _, p := range l.procs {
		if p.exited() {
			errs = append(errs, p.exitError())
		}
	}
	return errors.Join(errs...)
}

// Stop ends every process, deployers first, and removes the directory
// StartLandscaper made unless a watched test failed. It is safe to call more
// than once.
func (l *Landscaper) Stop() error { return l.stop(false) }

func (l *Landscaper) stop(startFailed bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return nil
	}
	l.stopped = true
	var errs []error
	for i := len(l.procs) - 1; i >= 0; i-- {
		errs = append(errs, l.procs[i].stop(landscaperGrace))
	}
	if l.ownDir && !l.keep && !startFailed {
		errs = append(errs, os.RemoveAll(l.dir))
	}
	return errors.Join(errs...)
}

// start runs one of Landscaper's binaries with its configuration file and
// the env's kubeconfig, in an environment as its chart gives it.
func (l *Landscaper) start(name, bin, config string, extraEnv ...string) (*process, error) {
	args := []string{
		"--config=" + filepath.Join(l.dir, "config", config),
		"--kubeconfig=" + l.env.KubeconfigPath(),
		"-v=info",
	}
	p, err := startProcessEnv(name, filepath.Join(l.binDir, bin), args, l.processEnv(extraEnv), l.logPath(name))
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	l.procs = append(l.procs, p)
	l.mu.Unlock()
	return p, nil
}

// processEnv is the test binary's environment as a pod of Landscaper's
// chart would see it: MY_POD_NAMESPACE set and MY_POD_NAME unset, so that
// Landscaper's locker treats a lock's owner as alive instead of looking for
// a Pod that does not exist; helm's directories inside Dir.
func (l *Landscaper) processEnv(extra []string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "MY_POD_NAME", "MY_POD_NAMESPACE", "LANDSCAPER_MODE", "KUBECONFIG",
			"HELM_CACHE_HOME", "HELM_CONFIG_HOME", "HELM_DATA_HOME":
			continue
		}
		env = append(env, kv)
	}
	helm := filepath.Join(l.dir, "helm")
	env = append(env, "MY_POD_NAMESPACE="+LandscaperNamespace,
		"HELM_CACHE_HOME="+filepath.Join(helm, "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(helm, "config"),
		"HELM_DATA_HOME="+filepath.Join(helm, "data"))
	return append(env, extra...)
}

func (l *Landscaper) logPath(name string) string { return filepath.Join(l.dir, "logs", name+".log") }

// writeConfigs writes the controller's LandscaperConfiguration and each
// deployer's Configuration as Landscaper's chart renders them, with the
// caches in Dir.
func (l *Landscaper) writeConfigs() error {
	files := map[string]string{
		// lsDeployments is required: without it the central controller's
		// health check dereferences nil. The Deployments it names do not
		// exist here, so the LsHealthCheck object reports Failed; nothing
		// reads it.
		"landscaper.yaml": fmt.Sprintf(`apiVersion: config.landscaper.gardener.cloud/v1alpha1
kind: LandscaperConfiguration
controllers:
  syncPeriod: 1h
  installations: {workers: %[4]d}
  executions: {workers: %[4]d}
  deployItems: {workers: %[4]d}
  contexts:
    workers: 2
    config:
      default:
        disable: false
        excludedNamespaces: [kube-system]
registry:
  oci:
    allowPlainHttp: true
    insecureSkipVerify: true
    cache:
      path: %[1]s
blueprintStore:
  path: %[2]s
crdManagement:
  deployCrd: true
  forceUpdate: true
deployItemTimeouts:
  pickup: 5m
  abort: 5m
lsDeployments:
  lsController: landscaper
  lsMainController: landscaper-main
  webHook: landscaper-webhooks
  deploymentsNamespace: %[3]s
  lsHealthCheckName: landscaper-healthcheck
`, filepath.Join(l.dir, "oci-cache"), filepath.Join(l.dir, "blueprints"), LandscaperNamespace, l.opts.Workers),
		"manifest-deployer.yaml": fmt.Sprintf(`apiVersion: manifest.deployer.landscaper.gardener.cloud/v1alpha2
kind: Configuration
identity: manifest-deployer-testenv
controller: {workers: %d}
`, l.opts.Workers),
		"helm-deployer.yaml": fmt.Sprintf(`apiVersion: helm.deployer.landscaper.gardener.cloud/v1alpha1
kind: Configuration
identity: helm-deployer-testenv
oci:
  allowPlainHttp: true
  insecureSkipVerify: true
controller: {workers: %d}
`, l.opts.Workers),
		"mock-deployer.yaml": `apiVersion: mock.deployer.landscaper.gardener.cloud/v1alpha1
kind: Configuration
identity: mock-deployer-testenv
`,
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(l.dir, "config", name), []byte(content), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// ensureNamespace creates LandscaperNamespace unless it exists.
func (l *Landscaper) ensureNamespace(ctx context.Context) error {
	body := []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"` + LandscaperNamespace + `"}}`)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.env.Host()+"/api/v1/namespaces", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := l.env.HTTPClient().Do(req)
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusConflict {
		return fmt.Errorf("create namespace %s: %s", LandscaperNamespace, resp.Status)
	}
	return nil
}

// landscaperCRDs are the CRDs the tests need before anything else starts;
// the central controller installs them together with the rest.
var landscaperCRDs = []string{"installations", "executions", "deployitems", "targets", "dataobjects", "contexts"}

// crdsEstablished succeeds once every CRD of landscaperCRDs is Established.
func (l *Landscaper) crdsEstablished(ctx context.Context) error {
	for _, plural := range landscaperCRDs {
		body, err := get(ctx, l.env.HTTPClient(),
			l.env.Host()+"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"+plural+".landscaper.gardener.cloud")
		if err != nil {
			return err
		}
		var crd struct {
			Status struct {
				Conditions []struct{ Type, Status string } `json:"conditions"`
			} `json:"status"`
		}
		if err := json.Unmarshal([]byte(body), &crd); err != nil {
			return err
		}
		if !slices.ContainsFunc(crd.Status.Conditions, func(c struct{ Type, Status string }) bool {
			return c.Type == "Established" && c.Status == "True"
		}) {
			return fmt.Errorf("CRD %s.landscaper.gardener.cloud not Established", plural)
		}
	}
	return nil
}

// workersStarted succeeds once the log at path says a controller started
// its workers: controller-runtime's line once its caches synced. The
// processes serve no health endpoint (Landscaper turns metrics and probes
// off), so the log is the only sign.
func workersStarted(path string) func(context.Context) error {
	return func(context.Context) error {
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if !bytes.Contains(data, []byte("Starting workers")) {
			return errors.New("no controller has started its workers yet")
		}
		return nil
	}
}

// watchLines is how much of each process's log a failed test prints: the
// lines it wrote during the test, at most this many of the last.
const watchLines = 15

// watchLineBytes cuts longer log lines: Landscaper logs whole template
// inputs in one line.
const watchLineBytes = 600

// Watch ties Landscaper's logs to the test t: when t has failed by its end,
// the log directory is kept after Stop, and t's log names every process's log
// file with the last lines it wrote during t; a process that died during t
// fails it. A test that stops Landscaper in a cleanup registers that cleanup
// before it calls Watch: cleanups run last registered first, so Watch's then
// keeps the logs before Stop would remove them.
func (l *Landscaper) Watch(t testing.TB) {
	t.Helper()
	logs := l.Logs()
	offsets := make(map[string]int64, len(logs))
	for name, path := range logs {
		if st, err := os.Stat(path); err == nil {
			offsets[name] = st.Size()
		}
	}
	t.Cleanup(func() {
		if err := l.Err(); err != nil {
			t.Errorf("Landscaper's processes: %v", err)
		}
		if !t.Failed() {
			return
		}
		l.mu.Lock()
		l.keep = true
		l.mu.Unlock()
		names := slices.Sorted(maps.Keys(logs))
		var b strings.Builder
		fmt.Fprintf(&b, "Landscaper's logs (kept in %s):", filepath.Join(l.dir, "logs"))
		for _, name := range names {
			fmt.Fprintf(&b, "\n--- %s: %s", name, logs[name])
			if tail := tailSince(logs[name], offsets[name], watchLines); tail != "" {
				fmt.Fprintf(&b, ", last lines written during the test:\n%s", tail)
			}
		}
		t.Log(b.String())
	})
}

// tailSince returns the last n lines written to the file at path after
// offset, reading at most its last 64 KiB.
func tailSince(path string, offset int64, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer func() { _ = f.Close() }()
	st, err := f.Stat()
	if err != nil {
		return ""
	}
	offset = max(offset, st.Size()-64<<10)
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return ""
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return ""
	}
	lines := strings.Split(lastLines(data, n), "\n")
	for i, l := range lines {
		if len(l) > watchLineBytes {
			lines[i] = l[:watchLineBytes] + fmt.Sprintf(" [%d more bytes]", len(l)-watchLineBytes)
		}
	}
	return strings.Join(lines, "\n")
}
