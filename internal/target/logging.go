package target

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/go-logr/logr"
	"github.com/hashicorp/go-hclog"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
)

var getOptions = metav1.GetOptions{}

// maxKlogVerbosity caps the klog verbosity passed on. client-go logs request
// and response bodies, which may hold Secret data, and headers from
// verbosity 6 up; nothing at those levels is ever written.
const maxKlogVerbosity = 4

var (
	logger    atomic.Pointer[hclog.Logger]
	klogSetup sync.Once
)

func init() {
	l := hclog.Default().Named("kubernetes")
	logger.Store(&l)
}

// SetLogger makes l receive client-go's log output (klog and API
// warnings), all at DEBUG. client-go writes to stderr by default; once a
// cluster client is built, nothing of it reaches stderr or stdout except
// through l. Messages never contain credentials: client-go does not log
// them at the verbosity let through.
func SetLogger(l hclog.Logger) {
	logger.Store(&l)
	routeKlog()
}

func currentLogger() hclog.Logger { return *logger.Load() }

// Logger returns the logger SetLogger set last, for other libraries that
// talk to clusters (helm) to log where client-go does.
func Logger() hclog.Logger { return currentLogger() }

// routeKlog points klog, which client-go logs through, at the current
// logger. klog is process-global, so this happens once; the sink looks the
// logger up on each message, so a later SetLogger still takes effect.
func routeKlog() {
	klogSetup.Do(func() {
		klog.SetLogger(logr.New(&klogSink{}))
		// klog drops V(n) lines above its own -v before the sink sees
		// them; let through what the sink passes on.
		fs := flag.NewFlagSet("klog", flag.ContinueOnError)
		klog.InitFlags(fs)
		_ = fs.Set("v", strconv.Itoa(maxKlogVerbosity))
	})
}

// klogSink is a logr.LogSink writing to the current hclog logger at DEBUG.
type klogSink struct {
	name   string
	values []any
}

func (s *klogSink) Init(logr.RuntimeInfo) {}

func (s *klogSink) Enabled(level int) bool {
	return level <= maxKlogVerbosity && currentLogger().IsDebug()
}

func (s *klogSink) Info(level int, msg string, kv ...any) {
	if !s.Enabled(level) {
		return
	}
	currentLogger().Debug(s.prefix()+msg, append(append([]any{}, s.values...), kv...)...)
}

func (s *klogSink) Error(err error, msg string, kv ...any) {
	l := currentLogger()
	if !l.IsDebug() {
		return
	}
	args := append(append([]any{}, s.values...), kv...)
	l.Debug(s.prefix()+msg, append(args, "error", fmt.Sprint(err))...)
}

func (s *klogSink) WithValues(kv ...any) logr.LogSink {
	return &klogSink{name: s.name, values: append(append([]any{}, s.values...), kv...)}
}

func (s *klogSink) WithName(name string) logr.LogSink {
	n := name
	if s.name != "" {
		n = s.name + "/" + name
	}
	return &klogSink{name: n, values: s.values}
}

func (s *klogSink) prefix() string {
	if s.name == "" {
		return ""
	}
	return s.name + ": "
}

// warningHandler passes the API server's warnings (deprecated APIs,
// unknown fields) to the logger instead of client-go's default, stderr.
type warningHandler struct{}

func (warningHandler) HandleWarningHeader(code int, agent, text string) {
	if code != 299 || text == "" {
		return
	}
	currentLogger().Debug("API server warning", "warning", text)
}

// HandleWarningHeaderWithContext is the contextual form client-go prefers.
func (h warningHandler) HandleWarningHeaderWithContext(_ context.Context, code int, agent, text string) {
	h.HandleWarningHeader(code, agent, text)
}
