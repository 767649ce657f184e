// Package deployer defines the contract between the phase engine and the
// code that actually installs or removes a deploy item, plus a registry that
// maps Landscaper type strings (and their short aliases) to implementations.
//
// A deployer owns exactly one deploy item per call: it may only report that
// item's outcome and never touches another item's status: every object is written only by its own controller.
package deployer

import (
	"context"
	"encoding/json"
	"io/fs"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
)

// Target is what a deploy item acts on, in Landscaper's shape: a target's
// type (such as landscaper.gardener.cloud/kubernetes-cluster) and its
// config, normalised to JSON. The config may hold credentials: it is never
// logged, shown in a diagnostic or put into a provider status.
type Target struct {
	// Name is the target's name where the user declared it.
	Name   string          `json:"name"`
	Type   string          `json:"type"`
	Config json.RawMessage `json:"config,omitempty"`
	// Labels and Annotations are the target's metadata, which templates
	// read. Left out of JSON when empty, so hashes of targets without
	// them stay what they were before they existed.
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	// Ref, when set, names a target the provider defines: Config is then
	// empty wherever the target is kept (the tree, hashes, stored
	// status), and the engine resolves it only for the deployer's call,
	// so credentials never reach stored state. Location says where such a
	// target points (a cluster's server, not a credential): a new
	// credential for the same place changes nothing, another place does.
	Ref      string `json:"ref,omitempty"`
	Location string `json:"location,omitempty"`
}

// Request carries everything a deployer may know about one run of one item.
type Request struct {
	Operation core.Operation
	// Execution and Item name the deploy item; JobID is the job that triggered it.
	Execution string
	Item      string
	JobID     string
	// Config is the item's configuration, normalised to JSON.
	Config json.RawMessage
	// Target is the item's target, or nil.
	Target *Target
	// State is the opaque state the deployer returned for this item last time
	// (nil on the first run). Deployers that keep no state ignore it.
	State []byte
	// Attempt counts the calls for this item in this run, from 1: retries
	// after transient errors and requeues count.
	Attempt int
	// ComponentDescriptor is the resolved component descriptor of the
	// item's installation as Landscaper serialises it for a container
	// (a component descriptor list as JSON), or nil outside one.
	ComponentDescriptor json.RawMessage
	// Content holds the blueprint's files, or nil outside an installation.
	Content fs.FS
	// Log receives free-form diagnostic lines (for example a process's output).
	// It may be nil.
	Log func(msg string)
	// Resources serves the resources of the component the item was
	// rendered from (an installation's component), or is nil when there is
	// none. It is not part of the item's spec: the engine hands it down
	// from the run.
	Resources ResourceResolver
	// Adopt, when set, names what a Landscaper deployer installed for the
	// DeployItem the item was imported from: a deployer that can adopt
	// takes those objects (or that helm release) over in place instead of
	// creating them anew. Deployers that cannot adopt ignore it.
	Adopt *Adoption
}

// Adoption is what a Landscaper deployer, or another Terraform provider's
// resource, left in the target for one deploy item, as the item must take
// it over: without downtime, so nothing is re-created.
type Adoption struct {
	// DeployItem is the Landscaper DeployItem object's name: the value of
	// its deployer's managed label on every object it installed. Empty
	// when the item was moved from another provider's resource.
	DeployItem string `json:"deployItem"`
	// Source is the resource type of another Terraform provider the item
	// was moved from (helm_release, kubernetes_manifest,
	// kubectl_manifest), or empty. Such objects carry no label of ours or
	// Landscaper's: Objects alone say which are adopted.
	Source string `json:"source,omitempty"`
	// Objects are the objects the DeployItem's provider status listed as
	// managed, or those the moved resource's state recorded. Those the item
	// no longer renders are its to delete.
	Objects []ObjectRef `json:"objects,omitempty"`
	// Release is the helm release a helm DeployItem installed, or nil.
	Release *ObjectRef `json:"release,omitempty"`
}

// From names where what is adopted came from, for messages: Landscaper's
// DeployItem, or the moved resource.
func (a *Adoption) From() string {
	if a.Source != "" {
		return "the moved " + a.Source
	}
	return "Landscaper's DeployItem " + a.DeployItem
}

// ObjectRef names a Kubernetes object (or, for a helm release, only
// Namespace and Name).
type ObjectRef struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
}

// ResourceRef names a resource of a component: either by Key, a key made
// by the getResourceKey function of a blueprint's templates (Landscaper's
// resourceRef), or by Name in the component ComponentName at Version
// (both empty: the item's own component).
type ResourceRef struct {
	Key           string
	ComponentName string
	Version       string
	Name          string
}

// ResourceResolver fetches the content of a component's resource. Errors
// for references that cannot be resolved are configuration problems.
type ResourceResolver interface {
	Resource(ctx context.Context, ref ResourceRef) (data []byte, mediaType string, err error)
}

// SignedContent is what the ResourceResolver of an installation that
// verifies signatures also offers: the digests the verified components
// sign. A deployer that fetches content from anywhere else (a chart by
// OCI reference or URL) checks what it fetched against them before use,
// since a reference or URL is not signed, only digests are.
type SignedContent interface {
	// SignedArtifact names the resource whose signed OCI artifact digest
	// is digest (a manifest digest, "sha256:<hex>"), or reports false.
	SignedArtifact(digest string) (resource string, ok bool)
	// SignedBlob names the resource whose signed blob digest
	// (genericBlobDigest/v1) is digest ("sha256:<hex>"), or reports false.
	SignedBlob(digest string) (resource string, ok bool)
}

// Verifying returns the SignedContent of a resolver when its
// installation verifies signatures, and nil otherwise.
func Verifying(r ResourceResolver) SignedContent {
	type verifying interface {
		SignedContent
		Verifying() bool
	}
	if v, ok := r.(verifying); ok && v.Verifying() {
		return v
	}
	return nil
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
	// RequeueAfter, when positive on a run without error, says the work is
	// under way but not done (objects not ready yet): the engine calls the
	// deployer again after this long, within the item's timeout. Waiting
	// is not an error, and the item holds no max_parallelism slot meanwhile.
	RequeueAfter time.Duration
	// Waiting says, with RequeueAfter, what the item waits for, in a
	// user's words: each object not ready and why. The engine reports it
	// while the item waits and names it when a timeout ends the wait.
	Waiting string
	// TimeoutCodes are the codes, besides ERR_TIMEOUT, of the error when a
	// timeout ends this wait: Landscaper marks a readiness check that timed
	// out ERR_FOR_INFO_ONLY too.
	TimeoutCodes []string
}

// Deployer installs and removes deploy items of one type.
type Deployer interface {
	// Validate checks a config at plan time. It must not have side effects.
	// A *core.Error's message is shown as it is; other errors too.
	Validate(config json.RawMessage) error
	// Reconcile brings the item to its desired state.
	Reconcile(ctx context.Context, req Request) (Result, error)
	// Delete removes whatever Reconcile created.
	Delete(ctx context.Context, req Request) (Result, error)
}

// Sealer is implemented by deployers whose items can be kept at rest
// without the values a secret influenced in their config: Delete works
// from a config with those values masked (what it removes is named by the
// item's state and target), and Seal returns an item's state without
// anything derived from the config's values (digests of what was
// applied, exports), keeping what Delete needs. Items of other deployers
// whose config a kept-nowhere secret influenced cannot be deleted.
type Sealer interface {
	Seal(state []byte) []byte
}

// TargetUser is implemented by deployers that act on a target. An item of
// such a type without a target, or with a target of another type, is
// rejected at plan time.
type TargetUser interface {
	TargetTypes() []string
}

// AdoptionChecker is implemented by deployers that can tell from an item's
// config alone that it cannot adopt what it is to take over (a helm config
// naming another release), so a plan refuses it before anything runs.
type AdoptionChecker interface {
	CheckAdoption(config json.RawMessage, a *Adoption) error
}

// DriftChecker is implemented by deployers that can tell, without changing
// anything, whether what a successful Reconcile left is still in place.
// Refresh asks it, so a plan can show that an item must run again.
type DriftChecker interface {
	// Drift returns a description of what changed outside Terraform, or ""
	// when everything is as the last run left it. req.Operation is Reconcile.
	Drift(ctx context.Context, req Request, last Result) (string, error)
}

// Previewer is implemented by deployers that can tell, without changing
// anything, what a Reconcile of req would do to its target: a dry run
// against the cluster. A plan shows it when asked to (plan_cluster_changes).
type Previewer interface {
	Preview(ctx context.Context, req Request) ([]ObjectChange, error)
}

// ObjectChange is what a run would do to one object on the target.
type ObjectChange struct {
	// Object names it as kubectl does: "apps/v1 Deployment default/web".
	Object string
	// Summary is "create", "delete", "unchanged" or "update: " and the
	// paths of the fields that change, never their values.
	Summary string
}

// HealthChecker is implemented by deployers whose items run workloads
// that can crash after a successful Reconcile (pods of a Kubernetes
// item). A rollout asks it during the canary's bake.
type HealthChecker interface {
	// Health reports the item's workloads as they are now. req.Operation
	// is Reconcile; State is what the last Reconcile returned.
	Health(ctx context.Context, req Request) (Health, error)
}

// Health is what a HealthChecker saw: restarts counted as the
// ExtendedDaemonSet counts them (the highest restart count of a container
// of any of the item's pods), and whether every pod is ready.
type Health struct {
	Restarts int
	Ready    bool
	Message  string
}

// Registry maps type strings to deployers, and target type strings to
// the checks of their configs.
type Registry struct {
	mu      sync.RWMutex
	byType  map[string]Deployer
	targets map[string]TargetCheck
	// canonical maps every registered name to the first name its
	// deployer was registered under (Landscaper's full type name).
	canonical map[string]string
	locators  map[string]TargetLocator
}

// TargetLocator tells where a target of one type points, from its config
// (normalised to JSON): a cluster's server URL, say. Its result is kept
// in state, so it must never hold a credential.
type TargetLocator func(config json.RawMessage) string

// TargetCheck validates a target's config (normalised to JSON) at plan
// time. Its error must not quote the config: configs hold credentials.
type TargetCheck func(config json.RawMessage) error

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{byType: map[string]Deployer{}, targets: map[string]TargetCheck{},
		canonical: map[string]string{}, locators: map[string]TargetLocator{}}
}

// RegisterTargetLocator says how to tell where a target of type typ
// points (see Target.Location).
func (r *Registry) RegisterTargetLocator(typ string, loc TargetLocator) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.locators[typ] = loc
}

// TargetLocation is where a target of type typ with config points; ""
// for types without a locator.
func (r *Registry) TargetLocation(typ string, config json.RawMessage) string {
	r.mu.RLock()
	loc := r.locators[typ]
	r.mu.RUnlock()
	if loc == nil {
		return ""
	}
	return loc(config)
}

// Canonical returns the name a deployer type was first registered under
// (its full type name) for any of its names; ok is false for unknown types.
func (r *Registry) Canonical(typ string) (string, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	c, ok := r.canonical[typ]
	return c, ok
}

// RegisterTargetType makes a target type known.
func (r *Registry) RegisterTargetType(typ string, check TargetCheck) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.targets[typ] = check
}

// TargetType returns the check of a known target type.
func (r *Registry) TargetType(typ string) (TargetCheck, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	c, ok := r.targets[typ]
	return c, ok
}

// TargetTypes lists the known target types, sorted.
func (r *Registry) TargetTypes() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Sorted(maps.Keys(r.targets))
}

// Register makes d available under every given name (full type and aliases).
func (r *Registry) Register(d Deployer, names ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range names {
		r.byType[n] = d
		r.canonical[n] = names[0]
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
	return slices.Sorted(maps.Keys(r.byType))
}
