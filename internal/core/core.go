// Package core holds the vocabulary every other package shares: Landscaper's
// phases, operations, status errors and error codes. It is a leaf: the
// engine, the deployers and the provider all import it, and it imports
// nothing of theirs, so each word is defined exactly once.
package core

import (
	"fmt"
	"slices"
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

// Error codes. All but CodeInterrupted are Landscaper's own. Landscaper has
// no code for a stopped operation because its controllers are never stopped
// mid-run; Terraform can be (Ctrl-C), so we add one in the same style.
const (
	CodeTimeout              = "ERR_TIMEOUT"
	CodeConfigurationProblem = "ERR_CONFIGURATION_PROBLEM"
	CodeCyclicDependencies   = "ERR_CYCLIC_DEPENDENCIES"
	CodeInternalProblem      = "ERR_INTERNAL_PROBLEM"
	CodeUnauthorized         = "ERR_UNAUTHORIZED"
	CodeInterrupted          = "ERR_INTERRUPTED"
)

// Error is Landscaper's status error shape. Deployers return it to classify
// a failure; the engine stores it in statuses.
type Error struct {
	Operation Operation `json:"operation"`
	Reason    string    `json:"reason"`
	Message   string    `json:"message"`
	Codes     []string  `json:"codes,omitempty"`
	// Transient errors may resolve without a spec change and are retried
	// with backoff; the others fail at once. It only steers the run that
	// returned the error, so it is not stored.
	Transient bool `json:"-"`
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
