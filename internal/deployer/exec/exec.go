// Package exec implements the "exec" deployer: Landscaper's container
// deployer contract (OPERATION, IMPORTS_PATH, EXPORTS_PATH, STATE_PATH, and
// where the request carries them TARGET_PATH, CONTENT_PATH and
// COMPONENT_DESCRIPTOR_PATH), fulfilled by a local process instead of a pod.
package exec

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
)

// Type is the deploy item type this package implements.
const Type = "exec"

// Reasons reported in *core.Error.
const (
	ReasonConfigurationProblem = "ConfigurationProblem"
	ReasonCommandFailed        = "CommandFailed"
	ReasonTransientFailure     = "TransientFailure"
	ReasonInterrupted          = core.ReasonInterruptOperation
	ReasonInvalidExport        = "InvalidExport"
	ReasonStateTooLarge        = "StateTooLarge"
	ReasonInvalidState         = "InvalidState"
	ReasonInternalProblem      = "InternalProblem"
)

// containerOperation maps an operation to the value of OPERATION in
// Landscaper's container deployer contract.
var containerOperation = map[core.Operation]string{
	core.OperationReconcile: "RECONCILE",
	core.OperationDelete:    "DELETE",
}

// exitTempFail is EX_TEMPFAIL from sysexits.h: the command asks to be retried.
const exitTempFail = 75

// Options tunes a Deployer. Zero values select the defaults.
type Options struct {
	// GracePeriod is how long a canceled command may take to exit after
	// SIGTERM before its process group is killed. Default 5s.
	GracePeriod time.Duration
	// BaseEnv is the environment every command starts from. Nil means
	// os.Environ(); an empty non-nil slice means an empty environment.
	BaseEnv []string
	// DefaultWorkingDir is used when the config names none, and relative
	// working directories are resolved against it. Default: the current one.
	DefaultWorkingDir string
	// MaxStateBytes caps the compressed size of an item's state. Default 1 MiB.
	MaxStateBytes int
}

// Deployer runs deploy items of type "exec".
type Deployer struct {
	opts Options
}

var _ deployer.Deployer = (*Deployer)(nil)

// New returns a Deployer with opts' zero values replaced by defaults.
func New(opts Options) *Deployer {
	if opts.GracePeriod <= 0 {
		opts.GracePeriod = 5 * time.Second
	}
	if opts.BaseEnv == nil {
		opts.BaseEnv = os.Environ()
	}
	if opts.DefaultWorkingDir == "" {
		// On failure "" remains, which makes the process's own directory the default.
		opts.DefaultWorkingDir, _ = os.Getwd()
	}
	if opts.MaxStateBytes <= 0 {
		opts.MaxStateBytes = 1 << 20
	}
	return &Deployer{opts: opts}
}

type config struct {
	Command []string `json:"command"`
	// Args follow Command, as a container's args follow its command.
	Args         []string          `json:"args"`
	Env          map[string]string `json:"env"`
	WorkingDir   string            `json:"workingDir"`
	ImportValues json.RawMessage   `json:"importValues"`
	// CleanEnv starts the command from PATH and HOME alone instead of the
	// provider's environment, as a container starts from its image.
	CleanEnv bool `json:"cleanEnv"`
}

// providerStatus is what an exec item reports as its provider status.
type providerStatus struct {
	// LastOperation is the OPERATION of the last run, as in the provider
	// status of Landscaper's container deployer.
	LastOperation string `json:"lastOperation"`
	// ExitCode is the command's exit code; -1 when it did not exit by
	// itself (not started, or killed by a signal).
	ExitCode int `json:"exitCode"`
	// Duration is how long the command ran, as a Go duration.
	Duration string `json:"duration"`
	// Attempts counts the runs of the command in this job for the item,
	// retries included.
	Attempts int `json:"attempts"`
}

func configProblem(format string, args ...any) *core.Error {
	return core.Terminal(ReasonConfigurationProblem, fmt.Sprintf(format, args...), core.CodeConfigurationProblem)
}

func parseConfig(raw json.RawMessage) (*config, error) {
	// Checked up front because decoding null or an array into a struct
	// either succeeds silently or fails with a message about Go types.
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		return nil, configProblem("config must be an object with at least a command")
	}
	var c config
	warning := deployer.DecodeStrict(raw, &c)
	if warning != nil && !deployer.IsWarning(warning) {
		// The decoder speaks of Go types; spell out what is expected instead.
		return nil, configProblem("%v (fields: command, args: lists of strings; env: object with string values; workingDir: string; importValues: any value; cleanEnv: boolean)", warning)
	}
	if len(c.Command) == 0 {
		return nil, configProblem("command is required%s: list the program and its arguments, e.g. [\"sh\", \"-c\", \"...\"]",
			deployer.Lookalike("command", warning))
	}
	if c.Command[0] == "" {
		return nil, configProblem("command[0], the program to run, must not be empty")
	}
	for k := range c.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return nil, configProblem("env: invalid variable name %q", k)
		}
	}
	// Unknown fields only warn: returned with the config, for Validate.
	return &c, warning
}

// Validate checks the config without touching the file system.
func (d *Deployer) Validate(config json.RawMessage) error {
	_, err := parseConfig(config)
	return err
}

// Reconcile runs the command with OPERATION=RECONCILE and returns its export.
func (d *Deployer) Reconcile(ctx context.Context, req deployer.Request) (deployer.Result, error) {
	return d.run(ctx, core.OperationReconcile, req)
}

// Delete runs the command with OPERATION=DELETE; exports are ignored.
func (d *Deployer) Delete(ctx context.Context, req deployer.Request) (deployer.Result, error) {
	return d.run(ctx, core.OperationDelete, req)
}

func (d *Deployer) run(ctx context.Context, op core.Operation, req deployer.Request) (deployer.Result, error) {
	// Until a new state has been packed, returning the old one loses nothing.
	keep := deployer.Result{State: req.State}
	cfg, err := parseConfig(req.Config)
	if err != nil && !deployer.IsWarning(err) {
		return keep, err
	}
	dir, err := d.workingDir(cfg.WorkingDir)
	if err != nil {
		return keep, err
	}
	if ctx.Err() != nil {
		return keep, core.Terminal(ReasonInterrupted, "the run was canceled before the command started", core.CodeInterrupted)
	}

	tmp, err := os.MkdirTemp("", "landscaper-exec-")
	if err != nil {
		return keep, internalProblem("cannot create a temporary directory: %v", err)
	}
	defer removeAll(tmp)
	var (
		importsPath = filepath.Join(tmp, "imports.json")
		exportsPath = filepath.Join(tmp, "exports")
		stateDir    = filepath.Join(tmp, "state")
	)
	imports := cfg.ImportValues
	if len(imports) == 0 {
		imports = json.RawMessage("{}")
	}
	if err := os.WriteFile(importsPath, imports, 0o600); err != nil {
		return keep, internalProblem("cannot write the imports file: %v", err)
	}
	if err := os.Mkdir(stateDir, 0o700); err != nil {
		return keep, internalProblem("cannot create the state directory: %v", err)
	}
	if err := unpackState(req.State, stateDir); err != nil {
		msg := fmt.Sprintf("cannot restore the state saved by the previous run: %v", err)
		if op != core.OperationDelete {
			return keep, core.Terminal(ReasonInvalidState, msg, core.CodeInternalProblem)
		}
		// A broken state must not make an item undeletable: the command
		// runs with an empty STATE_PATH and is told so in the log.
		if req.Log != nil {
			req.Log(msg + "; running DELETE with an empty STATE_PATH")
		}
		if err := os.RemoveAll(stateDir); err != nil || os.Mkdir(stateDir, 0o700) != nil {
			return keep, internalProblem("cannot reset the state directory: %v", err)
		}
	}

	contract := []string{
		"OPERATION=" + containerOperation[op],
		"IMPORTS_PATH=" + importsPath,
		"EXPORTS_PATH=" + exportsPath,
		"STATE_PATH=" + stateDir,
		"DEPLOY_ITEM_NAME=" + req.Item,
		"EXECUTION_NAME=" + req.Execution,
		"JOB_ID=" + req.JobID,
	}
	more, err := writeContract(tmp, req)
	if err != nil {
		return keep, err
	}
	contract = append(contract, more...)

	// exec.Cmd keeps the last of duplicate variables, which gives the
	// precedence base < config env < contract.
	env := d.baseEnv(cfg.CleanEnv)
	for _, k := range slices.Sorted(maps.Keys(cfg.Env)) {
		env = append(env, k+"="+cfg.Env[k])
	}
	env = append(env, contract...)

	logf := serialized(req.Log)
	argv := append(slices.Clone(cfg.Command), cfg.Args...)
	started := time.Now()
	exitCode, runErr := d.runCommand(ctx, argv, dir, env, logf)
	status, _ := json.Marshal(providerStatus{
		LastOperation: containerOperation[op], ExitCode: exitCode,
		Duration: time.Since(started).Round(time.Millisecond).String(), Attempts: max(req.Attempt, 1),
	})

	res := deployer.Result{ProviderStatus: status}
	if op == core.OperationDelete && runErr == nil {
		// The item is gone, and its state with it: nothing to save.
		return res, nil
	}
	state, stateErr := d.saveState(stateDir, logf)
	if stateErr != nil {
		res.State = req.State
		if runErr != nil {
			// The command's own failure is what users need to see first.
			runErr.Message += "; in addition the state was not saved: " + stateErr.Message
			return res, runErr
		}
		return res, stateErr
	}
	res.State = state
	if runErr != nil {
		return res, runErr
	}
	if op == core.OperationReconcile {
		if res.Export, err = readExport(exportsPath); err != nil {
			return res, core.Terminal(ReasonInvalidExport, err.Error())
		}
	}
	return res, nil
}

func internalProblem(format string, args ...any) *core.Error {
	// Landscaper counts ERR_INTERNAL_PROBLEM as unrecoverable: the item
	// fails at once, and the next apply tries again.
	return core.Terminal(ReasonInternalProblem, fmt.Sprintf(format, args...), core.CodeInternalProblem)
}

// baseEnv is the environment a command starts from: the provider's, or
// with cleanEnv only its PATH and HOME, as a container starts from its
// image's environment and not from the host's.
func (d *Deployer) baseEnv(clean bool) []string {
	if !clean {
		return slices.Clone(d.opts.BaseEnv)
	}
	var env []string
	for _, kv := range d.opts.BaseEnv {
		if strings.HasPrefix(kv, "PATH=") || strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	return env
}

// workingDir is checked at run time only, so plans stay free of side effects
// and may name directories that an earlier item creates.
func (d *Deployer) workingDir(dir string) (string, error) {
	switch {
	case dir == "":
		dir = d.opts.DefaultWorkingDir
	case !filepath.IsAbs(dir):
		dir = filepath.Join(d.opts.DefaultWorkingDir, dir)
	}
	if dir == "" {
		return "", nil
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", configProblem("working directory %q does not exist", dir)
	case err != nil:
		return "", configProblem("cannot use working directory: %v", err)
	case !fi.IsDir():
		return "", configProblem("working directory %q is not a directory", dir)
	}
	return dir, nil
}

// saveState packs the state directory, or explains why it cannot be kept.
func (d *Deployer) saveState(dir string, logf func(string)) ([]byte, *core.Error) {
	state, size, err := packState(dir, d.opts.MaxStateBytes, logf)
	if err != nil {
		return nil, core.Terminal(ReasonInvalidState, fmt.Sprintf("cannot save the state directory: %v", err), core.CodeInternalProblem)
	}
	if size > d.opts.MaxStateBytes {
		return nil, core.Terminal(ReasonStateTooLarge, fmt.Sprintf(
			"the state directory compresses to %d bytes, more than the allowed %d bytes; the previous state is kept",
			size, d.opts.MaxStateBytes))
	}
	return state, nil
}

// readExport accepts any JSON or YAML value. An absent, empty or null export
// means the item exported nothing.
func readExport(path string) (json.RawMessage, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read the export file: %w", err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	var out []byte
	if json.Valid(data) {
		// Not via YAML, which would round large numbers through float64.
		var buf bytes.Buffer
		if err := json.Compact(&buf, data); err != nil {
			return nil, fmt.Errorf("export is not valid JSON: %w", err)
		}
		out = buf.Bytes()
	} else if out, err = yaml.YAMLToJSON(data); err != nil {
		return nil, fmt.Errorf("export is neither JSON nor YAML: %w", err)
	}
	if string(out) == "null" {
		return nil, nil
	}
	return out, nil
}

// removeAll also copes with directories the command made read-only, which
// os.RemoveAll alone cannot empty.
func removeAll(dir string) {
	if os.RemoveAll(dir) == nil {
		return
	}
	_ = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err == nil && e.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	_ = os.RemoveAll(dir)
}

// lookPath resolves a bare program name with the command's own PATH, which
// the config may have changed, rather than with this process's PATH.
func lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil // exec.Cmd resolves relative paths against Dir
	}
	var pathEnv string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathEnv = v
		}
	}
	for _, dir := range filepath.SplitList(pathEnv) {
		// Relative entries would find programs in the working directory by
		// accident; os/exec refuses them for the same reason.
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%q not found in PATH %q", name, pathEnv)
}
