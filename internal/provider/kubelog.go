package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/terraform-plugin-log/tflog"
)

// subsystemKubernetes carries client-go's and helm's own log lines.
const subsystemKubernetes = "kubernetes"

// tflogLogger is an hclog.Logger that writes to the provider's log through
// tflog, so the output of libraries that log globally (client-go through
// klog, helm) reaches TF_LOG like the provider's own lines: as JSON on the
// stderr the plugin had at start, which Terraform reads, or into the
// acceptance tests' log sink. Never stdout, which go-plugin owns.
//
// Every line is written at DEBUG (TRACE stays TRACE): these are details of
// how a deploy item talks to its cluster, not progress. The logger keeps
// the context it was made from only for the logger tflog stored in it; the
// subsystem does not carry that context's request fields.
type tflogLogger struct {
	hclog.Logger // a null logger, for what tflog has no counterpart of

	ctx  context.Context
	name string
	args []any
}

var _ hclog.Logger = (*tflogLogger)(nil)

func newTFLogLogger(ctx context.Context) *tflogLogger {
	return &tflogLogger{Logger: hclog.NewNullLogger(), ctx: tflog.NewSubsystem(ctx, subsystemKubernetes)}
}

func (l *tflogLogger) fields(args []any) map[string]any {
	all := append(append([]any{}, l.args...), args...)
	out := make(map[string]any, len(all)/2+1)
	if l.name != "" {
		out["logger"] = l.name
	}
	for i := 0; i < len(all); i += 2 {
		key := fmt.Sprint(all[i])
		if i+1 == len(all) {
			out[key] = "(missing value)"
			break
		}
		out[key] = all[i+1]
	}
	return out
}

func (l *tflogLogger) Log(level hclog.Level, msg string, args ...any) {
	if level == hclog.Trace {
		tflog.SubsystemTrace(l.ctx, subsystemKubernetes, msg, l.fields(args))
		return
	}
	tflog.SubsystemDebug(l.ctx, subsystemKubernetes, msg, l.fields(args))
}

func (l *tflogLogger) Trace(msg string, args ...any) { l.Log(hclog.Trace, msg, args...) }
func (l *tflogLogger) Debug(msg string, args ...any) { l.Log(hclog.Debug, msg, args...) }
func (l *tflogLogger) Info(msg string, args ...any)  { l.Log(hclog.Info, msg, args...) }
func (l *tflogLogger) Warn(msg string, args ...any)  { l.Log(hclog.Warn, msg, args...) }
func (l *tflogLogger) Error(msg string, args ...any) { l.Log(hclog.Error, msg, args...) }

// The levels are decided by tflog's sink (TF_LOG, TF_LOG_PROVIDER), which
// cannot be asked; DEBUG lines are always handed over.
func (l *tflogLogger) IsTrace() bool { return false }
func (l *tflogLogger) IsDebug() bool { return true }
func (l *tflogLogger) IsInfo() bool  { return true }
func (l *tflogLogger) IsWarn() bool  { return true }
func (l *tflogLogger) IsError() bool { return true }

func (l *tflogLogger) GetLevel() hclog.Level { return hclog.Debug }

func (l *tflogLogger) ImpliedArgs() []any { return l.args }

func (l *tflogLogger) With(args ...any) hclog.Logger {
	c := *l
	c.args = append(append([]any{}, l.args...), args...)
	return &c
}

func (l *tflogLogger) Name() string { return l.name }

func (l *tflogLogger) Named(name string) hclog.Logger {
	c := *l
	if c.name != "" {
		name = c.name + "." + name
	}
	c.name = name
	return &c
}

func (l *tflogLogger) ResetNamed(name string) hclog.Logger {
	c := *l
	c.name = name
	return &c
}
