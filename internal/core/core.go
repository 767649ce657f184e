// Package core holds the vocabulary every other package shares: Landscaper's
// phases, operations, status errors and error codes. It is a leaf: the
// engine, the deployers and the provider all import it, and it imports
// nothing of theirs, so each word is defined exactly once.
package core

import (
	"errors"
	"fmt"
	"net"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Phase is a Landscaper phase string, shown to users exactly as written.
type Phase string

// Phases of installations, executions and deploy items.
const (
	PhaseInit            Phase = "Init"
	PhaseCleanupOrphaned Phase = "CleanupOrphaned"
	PhaseObjectsCreated  Phase = "ObjectsCreated"
	PhaseProgressing     Phase = "Progressing"
	PhaseCompleting      Phase = "Completing"
	PhaseSucceeded       Phase = "Succeeded"
	PhaseFailed          Phase = "Failed"
	PhaseInitDelete      Phase = "InitDelete"
	PhaseTriggerDelete   Phase = "TriggerDelete"
	PhaseDeleting        Phase = "Deleting"
	PhaseDeleteFailed    Phase = "DeleteFailed"
)

// Operation names what was being done, as Landscaper's status errors name it.
type Operation string

// Operations.
const (
	OperationReconcile Operation = "Reconcile"
	OperationDelete    Operation = "Delete"
)

// Error codes. All but CodeInterrupted are Landscaper's own. Landscaper
// marks an interrupted item with the reason InterruptOperation and no code;
// a Terraform run can be stopped far more often (Ctrl-C, an expired
// operation timeout), so ours add a code in Landscaper's style that
// scripts can match.
const (
	CodeTimeout              = "ERR_TIMEOUT"
	CodeConfigurationProblem = "ERR_CONFIGURATION_PROBLEM"
	CodeCyclicDependencies   = "ERR_CYCLIC_DEPENDENCIES"
	CodeInternalProblem      = "ERR_INTERNAL_PROBLEM"
	CodeUnauthorized         = "ERR_UNAUTHORIZED"
	// CodeForInfoOnly is what Landscaper's execution controller puts on an
	// execution that cannot go on: failed items, or pending items none of
	// which can start.
	CodeForInfoOnly = "ERR_FOR_INFO_ONLY"
	CodeInterrupted = "ERR_INTERRUPTED"
)

// Reasons the engine gives, in Landscaper's words.
const (
	// ReasonProgressingTimeout: a deploy item did not finish in time.
	ReasonProgressingTimeout = "ProgressingTimeout"
	// ReasonInterruptOperation: the run was stopped while the item ran.
	ReasonInterruptOperation = "InterruptOperation"
)

// UnrecoverableCodes are the codes Landscaper's deployers treat as final:
// an error carrying one fails its item at once instead of being retried.
var UnrecoverableCodes = []string{
	CodeConfigurationProblem,
	CodeInternalProblem,
	CodeTimeout,
	CodeUnauthorized,
	CodeCyclicDependencies,
}

// Unrecoverable reports whether codes hold one of UnrecoverableCodes.
func Unrecoverable(codes []string) bool {
	return slices.ContainsFunc(codes, func(c string) bool { return slices.Contains(UnrecoverableCodes, c) })
}

// Error is Landscaper's status error shape. Deployers return it to classify
// a failure; the engine stores it in statuses.
type Error struct {
	Operation Operation `json:"operation"`
	Reason    string    `json:"reason"`
	Message   string    `json:"message"`
	Codes     []string  `json:"codes,omitempty"`
	// LastTransitionTime is when an error of this operation was first
	// recorded in the current run; LastUpdateTime when its content last
	// changed. Landscaper's errors carry the same pair. Deployers leave
	// them zero; the engine stamps them (see Stamp).
	LastTransitionTime time.Time `json:"lastTransitionTime,omitzero"`
	LastUpdateTime     time.Time `json:"lastUpdateTime,omitzero"`
	// Transient marks an error the deployer expects to pass without a spec
	// change (a temporary failure); errors without it are final, the way a
	// Landscaper deployer sets its item to Failed. Whether the engine
	// retries is decided by Retryable. It only steers the run that returned
	// the error, so it is not stored.
	Transient bool `json:"-"`
	// Unreachable marks a transient error whose cause is a host that does
	// not resolve or refuses connections (see Unreachable): the engine
	// retries it for a grace period only, not until the item's timeout.
	Unreachable bool `json:"-"`
}

// Unreachable reports whether err says that a host does not resolve (no
// such host) or refuses connections. Such a host is seldom back within an
// item's timeout: a name with a typo, a cluster that is gone. The text is
// looked at too, since helm and client-go flatten some errors into text.
func Unreachable(err error) bool {
	if err == nil {
		return false
	}
	var dns *net.DNSError
	if errors.As(err, &dns) && dns.IsNotFound || errors.Is(err, syscall.ECONNREFUSED) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "no such host") || strings.Contains(msg, "connection refused")
}

// TransientCause builds a retryable error caused by cause, marked
// Unreachable when cause says a host is.
func TransientCause(reason, message string, cause error, codes ...string) *Error {
	e := Transient(reason, message, codes...)
	e.Unreachable = Unreachable(cause)
	return e
}

// Retryable reports whether the engine retries after e, as Landscaper
// decides it: an error with an unrecoverable code fails at once even when
// the deployer called it transient, and so does one the deployer declared
// final.
func (e *Error) Retryable() bool {
	return e.Transient && !Unrecoverable(e.Codes)
}

// Stamp sets e's times as Landscaper updates an error that replaces prev
// (nil for the first error of a run): the transition time is kept while
// the operation stays the same, the update time while nothing changed.
func (e *Error) Stamp(prev *Error, now time.Time) {
	if prev == nil {
		e.LastTransitionTime, e.LastUpdateTime = now, now
		return
	}
	e.LastTransitionTime, e.LastUpdateTime = prev.LastTransitionTime, prev.LastUpdateTime
	if prev.Operation != e.Operation || prev.LastTransitionTime.IsZero() {
		e.LastTransitionTime = now
	}
	if prev.Operation != e.Operation || prev.Reason != e.Reason || prev.Message != e.Message ||
		!slices.Equal(prev.Codes, e.Codes) || prev.LastUpdateTime.IsZero() {
		e.LastUpdateTime = now
	}
}

func (e *Error) Error() string {
	if e.Operation == "" {
		return fmt.Sprintf("%s: %s", e.Reason, e.Message)
	}
	return fmt.Sprintf("%s %s: %s", e.Operation, e.Reason, e.Message)
}

// Clone returns a copy that shares nothing with e.
func (e *Error) Clone() *Error {
	if e == nil {
		return nil
	}
	c := *e
	c.Codes = slices.Clone(e.Codes)
	return &c
}

// Transient builds a retryable error.
func Transient(reason, message string, codes ...string) *Error {
	return &Error{Transient: true, Reason: reason, Message: message, Codes: codes}
}

// Terminal builds an error that fails at once, without retries.
func Terminal(reason, message string, codes ...string) *Error {
	return &Error{Reason: reason, Message: message, Codes: codes}
}

// ConfigurationProblem is the terminal error of a config a deployer rejects.
func ConfigurationProblem(format string, args ...any) *Error {
	return Terminal("ConfigurationProblem", fmt.Sprintf(format, args...), CodeConfigurationProblem)
}

// MaxNameLength is the longest name Landscaper's objects can carry: names
// end up in Kubernetes label values, which are limited to 63 characters.
const MaxNameLength = 63

var namePattern = regexp.MustCompile(`^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`)

// NameRule states the rule ValidName enforces, for messages.
const NameRule = "at most 63 characters: letters, digits, '-', '_' and '.', starting and ending with a letter or digit"

// ValidName checks a name of an installation, execution or deploy item
// against the rule of Landscaper's objects (a Kubernetes label value that
// must not be empty). It also keeps "<path>/<item>" keys unambiguous,
// since '/' is not allowed.
func ValidName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("the name is empty; a name has %s", NameRule)
	case len(name) > MaxNameLength:
		return fmt.Errorf("%q has %d characters; a name has %s", name, len(name), NameRule)
	case !namePattern.MatchString(name):
		return fmt.Errorf("%q is not a valid name; a name has %s", name, NameRule)
	}
	return nil
}
