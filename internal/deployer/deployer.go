// Package deployer defines the contract between the phase engine and the
// code that actually installs or removes a deploy item, plus a registry that
// maps Landscaper type strings (and their short aliases) to implementations.
//
// A deployer owns exactly one deploy item per call: it may only report that
// item's outcome and never touches another item's status (DESIGN.md §2).
package deployer

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
)

// Operation is what the engine asks a deployer to do. The strings are the
// values of the OPERATION variable of Landscaper's container deployer.
type Operation string

const (
	OperationReconcile Operation = "RECONCILE"
	OperationDelete    Operation = "DELETE"
)

// Request carries everything a deployer may know about one run of one item.
type Request struct {
	Operation Operation
	// Execution and Item name the deploy item; JobID is the job that triggered it.
	Execution string
	Item      string
	JobID     string
	// Config is the item's configuration, normalised to JSON.
	Config json.RawMessage
	// State is the opaque state the deployer returned for this item last time
	// (nil on the first run). Deployers that keep no state ignore it.
	State []byte
	// Log receives free-form diagnostic lines (for example a process's output).
	// It may be nil.
	Log func(msg string)
}

// Result is what a successful (or partially successful) run reports.
type Result struct {
	// ProviderStatus is deployer-specific JSON shown to users, or nil.
	ProviderStatus json.RawMessage
	// Export is the item's export as JSON, or nil when it exported nothing.
	Export json.RawMessage
	// State replaces the item's stored state. It is kept even when the run
	// returns an error, so a deployer can record partial progress.
	State []byte
}

// Deployer installs and removes deploy items of one type.
type Deployer interface {
	// Validate checks a config at plan time. It must not have side effects.
	// Errors should be *Error with Reason "ConfigurationProblem"-like detail;
	// plain errors are reported as they are.
	Validate(config json.RawMessage) error
	// Reconcile brings the item to its desired state.
	Reconcile(ctx context.Context, req Request) (Result, error)
	// Delete removes whatever Reconcile created.
	Delete(ctx context.Context, req Request) (Result, error)
}

// Error is a classified deployer error, shaped like Landscaper's status error.
type Error struct {
	// Transient errors may resolve without a spec change and are retried with
	// backoff; terminal ones fail the item at once.
	Transient bool
	Reason    string
	Message   string
	Codes     []string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s", e.Reason, e.Message)
}

// Transient builds a retryable error.
func Transient(reason, message string, codes ...string) *Error {
	return &Error{Transient: true, Reason: reason, Message: message, Codes: codes}
}

// Terminal builds an error that fails the item without retries.
func Terminal(reason, message string, codes ...string) *Error {
	return &Error{Reason: reason, Message: message, Codes: codes}
}

// Error codes. All but CodeInterrupted are Landscaper's own
// (apis/core/v1alpha1/types_shared.go). Landscaper has no code for a
// stopped operation because its controllers are never stopped mid-run;
// Terraform can be (Ctrl-C), so we add one in the same style.
const (
	CodeTimeout              = "ERR_TIMEOUT"
	CodeConfigurationProblem = "ERR_CONFIGURATION_PROBLEM"
	CodeCyclicDependencies   = "ERR_CYCLIC_DEPENDENCIES"
	CodeInternalProblem      = "ERR_INTERNAL_PROBLEM"
	CodeInterrupted          = "ERR_INTERRUPTED"
)

// Registry maps type strings to deployers.
type Registry struct {
	mu     sync.RWMutex
	byType map[string]Deployer
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{byType: map[string]Deployer{}}
}

// Register makes d available under every given name (full type and aliases).
func (r *Registry) Register(d Deployer, names ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range names {
		r.byType[n] = d
	}
}

// Get returns the deployer for a type string.
func (r *Registry) Get(typ string) (Deployer, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	d, ok := r.byType[typ]
	return d, ok
}

// Types lists the registered names, sorted, for error messages.
func (r *Registry) Types() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.byType))
	for n := range r.byType {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
