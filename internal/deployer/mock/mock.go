// Package mock implements Landscaper's mock deployer in-process: a deploy
// item of this type does nothing but report the outcome its config asks for.
//
// The config is Landscaper's whole mock ProviderConfiguration (apiVersion,
// kind, phase, initialPhase, providerStatus, export, continuousReconcile)
// plus a few extensions that let tests shape a run: duration,
// transientErrors and deletePhase. Unknown fields are rejected.
//
// The deployer is meant for tests and benchmarks, so a run without a duration
// does no more than decode its config: no goroutines, timers or locks.
package mock

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
)

// APIVersion and Kind are the values Landscaper uses for the mock deployer's
// provider configuration. A config may omit them; if it sets them they must
// match.
const (
	APIVersion = "mock.deployer.landscaper.gardener.cloud/v1alpha1"
	Kind       = "ProviderConfiguration"
)

// Phases a config may request for deletePhase; phase and initialPhase
// take any deploy item phase.
const (
	PhaseSucceeded = "Succeeded"
	PhaseFailed    = "Failed"
)

// deployItemPhases are the phases of Landscaper's deploy items, final or
// not. A mock left in a phase that is not final stays running, requeued,
// until its timeout, as in Landscaper.
var deployItemPhases = map[string]phaseKind{
	"Init": running, "Progressing": running, "Completing": running,
	"Succeeded": succeeded, "Failed": failed,
	"InitDelete": running, "Deleting": running, "DeleteFailed": failed,
}

type phaseKind int

const (
	succeeded phaseKind = iota
	failed
	running
)

// RequeueInterval is how often a mock left in a phase that is not final is
// looked at again, as Landscaper's deployers requeue such an item.
const RequeueInterval = 5 * time.Second

// Reasons of the errors this deployer returns.
const (
	// ReasonConfigurationProblem: the config is invalid (terminal, code
	// core.CodeConfigurationProblem).
	ReasonConfigurationProblem = "ConfigurationProblem"
	// ReasonFailed: the config asked Reconcile to end in a failed phase
	// (Failed or DeleteFailed).
	ReasonFailed = "MockFailed"
	// ReasonDeleteFailed: the config asked Delete to fail (deletePhase: Failed).
	ReasonDeleteFailed = "MockDeleteFailed"
	// ReasonTransient: one of the first transientErrors attempts of a job.
	ReasonTransient = "MockTransientError"
	// ReasonInterrupted: the context ended before the run's duration passed
	// (terminal, code core.CodeInterrupted).
	ReasonInterrupted = core.ReasonInterruptOperation
)

// Deployer is the mock deployer. Its zero value is not usable; call New.
type Deployer struct {
	mu sync.Mutex
	// attempts counts completed Reconcile attempts per item and job, only for
	// items whose config sets transientErrors > 0.
	attempts map[attemptKey]int
}

type attemptKey struct {
	execution, item, job string
}

var _ deployer.Deployer = (*Deployer)(nil)

// New returns a mock deployer.
func New() *Deployer {
	return &Deployer{attempts: map[attemptKey]int{}}
}

// config is the wire form of the config.
type config struct {
	APIVersion     string          `json:"apiVersion"`
	Kind           string          `json:"kind"`
	Phase          string          `json:"phase"`
	ProviderStatus json.RawMessage `json:"providerStatus"`
	Export         json.RawMessage `json:"export"`

	// Extensions of this provider.
	Duration        json.RawMessage `json:"duration"`
	TransientErrors int             `json:"transientErrors"`
	DeletePhase     string          `json:"deletePhase"`

	InitialPhase        string                   `json:"initialPhase"`
	ContinuousReconcile *continuousReconcileSpec `json:"continuousReconcile"`
}

// continuousReconcileSpec is Landscaper's schedule for continuous
// reconciliation. It is checked as Landscaper checks it and otherwise
// ignored: Terraform decides when an item is reconciled.
type continuousReconcileSpec struct {
	Cron  string `json:"cron"`
	Every string `json:"every"`
}

// spec is a validated config.
type spec struct {
	// phase is the phase a reconcile ends in: phase, else initialPhase,
	// else Succeeded, as Landscaper's mock sets it on an item that starts
	// a job in Init.
	phase           string
	kind            phaseKind
	deleteFailed    bool
	providerStatus  json.RawMessage
	export          json.RawMessage
	duration        time.Duration
	transientErrors int
}

// Validate checks a config without side effects.
func (d *Deployer) Validate(cfg json.RawMessage) error {
	if _, err := parse(cfg); err != nil {
		return err
	}
	return nil
}

// Reconcile reports the outcome the config asks for: after the configured
// duration, a transient error for each of the first transientErrors attempts
// of the job, then success (phase Succeeded, with providerStatus and export),
// a terminal MockFailed error (Failed, DeleteFailed), or, for a phase that
// is not final, a request to look again in RequeueInterval, so the item
// keeps running until its timeout.
func (d *Deployer) Reconcile(ctx context.Context, req deployer.Request) (deployer.Result, error) {
	s, err := parse(req.Config)
	if err != nil && !deployer.IsWarning(err) {
		return deployer.Result{}, err
	}
	if err := wait(ctx, s.duration); err != nil {
		return deployer.Result{}, err
	}
	if s.transientErrors > 0 {
		if n := d.countAttempt(req); n <= s.transientErrors {
			return deployer.Result{}, core.Transient(ReasonTransient,
				"mock config requested "+strconv.Itoa(s.transientErrors)+
					" transient errors; this is attempt "+strconv.Itoa(n)+" of job "+strconv.Quote(req.JobID))
		}
	}
	switch s.kind {
	case failed:
		// Landscaper's mock sets the provider status whatever the phase, so
		// it is reported here too; an export is only reported on success.
		return deployer.Result{ProviderStatus: s.providerStatus},
			core.Terminal(ReasonFailed, fmt.Sprintf("mock config requested phase %q", s.phase))
	case running:
		if req.Log != nil && req.Attempt <= 1 {
			req.Log(fmt.Sprintf("mock config requested phase %q, which is not final: the item keeps running until its timeout", s.phase))
		}
		return deployer.Result{ProviderStatus: s.providerStatus, RequeueAfter: RequeueInterval}, nil
	}
	return deployer.Result{ProviderStatus: s.providerStatus, Export: s.export}, nil
}

// Delete succeeds after the configured duration, or fails terminally with
// MockDeleteFailed when the config sets deletePhase: Failed. The reconcile
// phase plays no part: an item with phase Failed can be deleted.
func (d *Deployer) Delete(ctx context.Context, req deployer.Request) (deployer.Result, error) {
	s, err := parse(req.Config)
	if err != nil && !deployer.IsWarning(err) {
		return deployer.Result{}, err
	}
	if err := wait(ctx, s.duration); err != nil {
		return deployer.Result{}, err
	}
	if s.deleteFailed {
		return deployer.Result{}, core.Terminal(ReasonDeleteFailed, `mock config requested deletePhase "Failed"`)
	}
	return deployer.Result{}, nil
}

// Seal keeps nothing: the mock deployer has no state, and its Delete
// reads only duration and deletePhase.
func (d *Deployer) Seal([]byte) []byte { return nil }

// countAttempt records one more completed Reconcile attempt of the request's
// item in its job and returns the attempt's number, starting at 1.
func (d *Deployer) countAttempt(req deployer.Request) int {
	k := attemptKey{execution: req.Execution, item: req.Item, job: req.JobID}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.attempts == nil {
		d.attempts = map[attemptKey]int{}
	}
	n := d.attempts[k] + 1
	d.attempts[k] = n
	return n
}

// wait lets a run take dur, returning an Interrupted error if ctx ends first.
// It starts no timer for a zero duration.
func wait(ctx context.Context, dur time.Duration) error {
	if ctx.Err() != nil {
		return interrupted(ctx)
	}
	if dur <= 0 {
		return nil
	}
	t := time.NewTimer(dur)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return interrupted(ctx)
	}
}

func interrupted(ctx context.Context) error {
	return core.Terminal(ReasonInterrupted,
		"mock run interrupted: "+context.Cause(ctx).Error(), core.CodeInterrupted)
}

// parse decodes and validates a config. Errors are terminal
// ConfigurationProblem *core.Error values.
func parse(cfg json.RawMessage) (spec, error) {
	s := spec{}
	trimmed := bytes.TrimSpace(cfg)
	// Fast path for the most common config in large test setups.
	if len(trimmed) == 0 || string(trimmed) == "{}" {
		return s, nil
	}
	if trimmed[0] != '{' {
		return s, configError("config must be a JSON object")
	}
	if !json.Valid(trimmed) {
		return s, configError("config is not valid JSON")
	}
	var raw config
	warning := deployer.DecodeStrict(trimmed, &raw)
	if warning != nil && !deployer.IsWarning(warning) {
		return s, configError(warning.Error())
	}

	if raw.APIVersion != "" && raw.APIVersion != APIVersion {
		return s, configError(fmt.Sprintf("apiVersion must be %q, got %q", APIVersion, raw.APIVersion))
	}
	if raw.Kind != "" && raw.Kind != Kind {
		return s, configError(fmt.Sprintf("kind must be %q, got %q", Kind, raw.Kind))
	}
	if err := checkContinuousReconcile(raw.ContinuousReconcile); err != nil {
		return s, err
	}

	s.phase = PhaseSucceeded
	for _, p := range []struct{ field, value string }{{"initialPhase", raw.InitialPhase}, {"phase", raw.Phase}} {
		if p.value == "" {
			continue
		}
		kind, ok := deployItemPhases[p.value]
		if !ok {
			return s, configError(fmt.Sprintf("%s must be a deploy item phase (%s), got %q", p.field, phaseList(), p.value))
		}
		s.phase, s.kind = p.value, kind
	}
	var err error
	if s.deleteFailed, err = finalPhase("deletePhase", raw.DeletePhase); err != nil {
		return s, err
	}
	if s.duration, err = parseDuration(raw.Duration); err != nil {
		return s, err
	}
	if raw.TransientErrors < 0 {
		return s, configError(fmt.Sprintf("transientErrors must be 0 or more, got %d", raw.TransientErrors))
	}
	s.transientErrors = raw.TransientErrors
	if present(raw.ProviderStatus) {
		s.providerStatus = raw.ProviderStatus
	}
	if present(raw.Export) {
		s.export = raw.Export
	}
	// Unknown fields only warn: the spec is good, and Validate says so.
	return s, warning
}

// finalPhase checks deletePhase, this provider's extension, and reports
// whether it is Failed. Empty means the default, Succeeded.
func finalPhase(field, phase string) (isFailed bool, err error) {
	switch phase {
	case "", PhaseSucceeded:
		return false, nil
	case PhaseFailed:
		return true, nil
	default:
		return false, configError(fmt.Sprintf("%s must be %q or %q, got %q", field, PhaseSucceeded, PhaseFailed, phase))
	}
}

func phaseList() string {
	return "Init, Progressing, Completing, Succeeded, Failed, InitDelete, Deleting or DeleteFailed"
}

// checkContinuousReconcile checks a schedule as Landscaper does: empty, or
// exactly one of a standard cron expression and a positive duration.
func checkContinuousReconcile(c *continuousReconcileSpec) error {
	if c == nil || (c.Cron == "" && c.Every == "") {
		return nil
	}
	if c.Cron != "" && c.Every != "" {
		return configError("continuousReconcile: set exactly one of cron and every")
	}
	if c.Cron != "" {
		if _, err := cron.ParseStandard(c.Cron); err != nil {
			return configError(fmt.Sprintf("continuousReconcile.cron %q: %v", c.Cron, err))
		}
		return nil
	}
	if d, err := time.ParseDuration(c.Every); err != nil || d <= 0 {
		return configError(fmt.Sprintf("continuousReconcile.every %q must be a positive duration such as \"1h\"", c.Every))
	}
	return nil
}

// parseDuration parses the duration field: absent, null or "" mean zero.
func parseDuration(raw json.RawMessage) (time.Duration, error) {
	if !present(raw) {
		return 0, nil
	}
	var text string
	if err := json.Unmarshal(raw, &text); err != nil {
		return 0, configError(fmt.Sprintf(`duration must be a Go duration string such as "200ms", got %s`, raw))
	}
	if text == "" {
		return 0, nil
	}
	dur, err := time.ParseDuration(text)
	if err != nil {
		return 0, configError(fmt.Sprintf(`duration %q is not a Go duration such as "200ms" or "1m30s"`, text))
	}
	if dur < 0 {
		return 0, configError(fmt.Sprintf("duration must not be negative, got %q", text))
	}
	return dur, nil
}

// present reports whether a raw field was set to something other than null.
func present(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null"
}

func configError(msg string) *core.Error {
	return core.Terminal(ReasonConfigurationProblem, msg, core.CodeConfigurationProblem)
}
