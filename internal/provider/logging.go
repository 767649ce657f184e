package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/installation"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/masking"
)

// Log subsystems: the engine's phase transitions, and deployer output.
const (
	subsystemEngine   = "engine"
	subsystemDeployer = "deployer"
)

// jobLogger turns engine events into tflog lines. Phase transitions are
// INFO, so TF_LOG=INFO reads as a progress log; deployer output is DEBUG.
// Values never appear above DEBUG, and known sensitive export strings are
// replaced by *** at every level.
type jobLogger struct {
	ctx       context.Context
	sensitive map[string]bool
	mu        sync.Mutex
	secrets   masking.Secrets
	// held keeps the output of items with a sensitive export until their
	// export is known, so the export can be masked in their own output.
	held map[string][]string
}

// newJobLogger masks the prior exports of the items in sensitive from the
// start; exports produced by the job are added as they appear.
func newJobLogger(ctx context.Context, sensitive map[string]bool, prev engine.Status) *jobLogger {
	ctx = tflog.NewSubsystem(ctx, subsystemEngine)
	ctx = tflog.NewSubsystem(ctx, subsystemDeployer)
	l := &jobLogger{ctx: ctx, sensitive: sensitive, held: map[string][]string{}}
	for n, is := range prev.Items {
		if sensitive[n] {
			l.addSecrets(is.Export)
		}
	}
	return l
}

// addSecrets records the leaves of an export as secrets.
func (l *jobLogger) addSecrets(raw json.RawMessage) { l.secrets.AddJSON(raw) }

// addSecretList records secret texts found elsewhere (masking by derivation).
func (l *jobLogger) addSecretList(list []string) {
	for _, x := range list {
		l.secrets.Add(x)
	}
}

func (l *jobLogger) masked(s string) string { return l.secrets.Text(s) }

// redact masks known sensitive export strings in the error messages of a
// job's result. Those messages quote command output (exec's stderr tail)
// and end up in state and diagnostics, neither of which is sensitive.
func (l *jobLogger) redact(st engine.Status) engine.Status {
	l.mu.Lock()
	defer l.mu.Unlock()
	redactError := func(e *core.Error) *core.Error {
		if e == nil {
			return nil
		}
		c := *e
		c.Message = l.masked(c.Message)
		return &c
	}
	st.LastError = redactError(st.LastError)
	for _, is := range st.Items {
		is.LastError = redactError(is.LastError)
		is.FirstError = redactError(is.FirstError)
	}
	return st
}

func (l *jobLogger) observe(ev engine.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	// Names too: a template may name an item after a secret. The real
	// name keys what the logger keeps per item.
	name := ev.Item
	ev.Execution, ev.Item = l.masked(ev.Execution), l.masked(ev.Item)
	fields := map[string]any{"execution": ev.Execution, "job_id": ev.JobID}
	if ev.Item != "" {
		fields["deploy_item"] = ev.Item
	}
	switch {
	case ev.Output != "":
		line := ev.Output
		if l.sensitive[name] {
			l.held[name] = append(l.held[name], line)
			return
		}
		tflog.SubsystemDebug(l.ctx, subsystemDeployer, l.masked(line), fields)
	case ev.Retry > 0:
		// INFO, with the message (which names the object, registry or
		// URL) and when the next attempt is, so a long apply says why
		// while it retries, not only once it gives up.
		fields["retry_in"] = ev.Retry.String()
		fields["retry_at"] = ev.RetryAt.Format(time.RFC3339)
		fields["attempt"] = ev.Attempt
		fields["reason"] = ev.Err.Reason
		tflog.SubsystemInfo(l.ctx, subsystemEngine, fmt.Sprintf("deploy item %q: attempt %d failed, retrying at %s (in %s): %s: %s",
			ev.Item, ev.Attempt, ev.RetryAt.Format(time.TimeOnly), ev.Retry, ev.Err.Reason, l.masked(ev.Err.Message)), fields)
	case ev.Waiting != nil:
		// Names of objects and why they are not ready, never values:
		// INFO, so a long wait never goes quiet.
		fields["elapsed"] = round(ev.Elapsed).String()
		msg := fmt.Sprintf("deploy item %q: still waiting after %s", ev.Item, round(ev.Elapsed))
		if *ev.Waiting != "" {
			msg += " for: " + l.masked(*ev.Waiting)
		}
		tflog.SubsystemInfo(l.ctx, subsystemEngine, msg, fields)
	case ev.Requeue > 0:
		fields["requeue_in"] = ev.Requeue.String()
		tflog.SubsystemDebug(l.ctx, subsystemEngine, fmt.Sprintf("deploy item %q: not ready yet, looking again in %s", ev.Item, ev.Requeue), fields)
	case ev.Item == "" && ev.Gone:
		tflog.SubsystemInfo(l.ctx, subsystemEngine, fmt.Sprintf("execution %q: deleted after %s", ev.Execution, round(ev.Elapsed)), fields)
	case ev.Item == "":
		fields["phase"] = string(ev.Phase)
		tflog.SubsystemInfo(l.ctx, subsystemEngine, fmt.Sprintf("execution %q: %s after %s", ev.Execution, ev.Phase, round(ev.Elapsed))+
			errorSuffix(ev.Err), fields)
	default:
		l.itemEvent(ev, name, fields)
	}
}

func (l *jobLogger) itemEvent(ev engine.Event, name string, fields map[string]any) {
	if ev.Phase == core.PhaseSucceeded && l.sensitive[name] && ev.Export != nil {
		l.addSecrets(ev.Export)
	}
	if ev.Phase != core.PhaseProgressing && ev.Phase != core.PhaseDeleting {
		for _, line := range l.held[name] {
			tflog.SubsystemDebug(l.ctx, subsystemDeployer, l.masked(line), fields)
		}
		delete(l.held, name)
	}
	fields["phase"] = string(ev.Phase)
	fields["elapsed"] = round(ev.Elapsed).String()
	msg := fmt.Sprintf("deploy item %q: %s", ev.Item, ev.Phase)
	switch {
	case ev.Gone:
		fields["phase"] = "Deleted"
		msg = fmt.Sprintf("deploy item %q: deleted after %s", ev.Item, round(ev.Elapsed))
	case ev.Phase == core.PhaseProgressing || ev.Phase == core.PhaseDeleting:
		delete(fields, "elapsed")
	default:
		msg += " after " + round(ev.Elapsed).String() + errorSuffix(ev.Err)
	}
	tflog.SubsystemInfo(l.ctx, subsystemEngine, msg, fields)
}

// errorSuffix names an error's reason and codes; its message may quote
// output and so stays out of INFO lines (it reaches the user as a
// diagnostic instead).
func errorSuffix(e *core.Error) string {
	if e == nil {
		return ""
	}
	if len(e.Codes) == 0 {
		return fmt.Sprintf(" (%s)", e.Reason)
	}
	return fmt.Sprintf(" (%s, %s)", e.Reason, strings.Join(e.Codes, ","))
}

func round(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(10 * time.Millisecond)
}

// observeInstallation logs an installation's events: its phase
// transitions at INFO, and its execution's events as an execution's, with
// deploy items named by their path in the tree.
func (l *jobLogger) observeInstallation(ev installation.Event) {
	if ev.Item != nil {
		item := *ev.Item
		if item.Item != "" {
			item.Item = installation.Join(ev.Path, item.Item)
		}
		l.observe(item)
		return
	}
	name := l.masked(ev.Path)
	if name == "" {
		name = "(root)"
	}
	fields := map[string]any{"installation": l.masked(ev.Path), "job_id": ev.JobID}
	if ev.Gone {
		tflog.SubsystemInfo(l.ctx, subsystemEngine, fmt.Sprintf("installation %s: deleted after %s", name, round(ev.Elapsed)), fields)
		return
	}
	fields["phase"] = string(ev.Phase)
	tflog.SubsystemInfo(l.ctx, subsystemEngine, fmt.Sprintf("installation %s: %s after %s", name, ev.Phase, round(ev.Elapsed))+errorSuffix(ev.Err), fields)
}
