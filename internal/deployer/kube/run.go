package kube

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/target"
)

// Spec is everything Reconcile, Delete and Drift need to know about a
// deploy item's Kubernetes objects.
type Spec struct {
	Manifests       []Manifest
	UpdateStrategy  UpdateStrategy
	ReadinessChecks ReadinessCheckConfiguration
	// DefaultCheckWorkloadsOnly limits the default readiness check to the
	// kinds it knows (helm's behaviour). When false every managed object
	// must also exist (the manifest deployer's behaviour).
	DefaultCheckWorkloadsOnly bool
	Exports                   *Exports
	// DeletionGroups order Delete; DeletionGroupsDuringUpdate order the
	// deletion of objects no longer in the manifests.
	DeletionGroups             []DeletionGroupDefinition
	DeletionGroupsDuringUpdate []DeletionGroupDefinition
	// DefaultNamespace: see ApplyOptions.
	DefaultNamespace string
	// ManagedLabel and Owner: see ApplyOptions. Owner is required.
	ManagedLabel string
	Owner        string
	// AdoptFrom and AdoptObjects: see ApplyOptions.
	AdoptFrom    string               `json:",omitempty"`
	AdoptObjects []deployer.ObjectRef `json:",omitempty"`
	// Labels are added to every object.
	Labels map[string]string
}

func (s *Spec) applyOptions() ApplyOptions {
	return ApplyOptions{
		ManagedLabel: s.ManagedLabel, Owner: s.Owner, AdoptFrom: s.AdoptFrom, AdoptObjects: s.AdoptObjects, Labels: s.Labels,
		UpdateStrategy: s.UpdateStrategy, DefaultNamespace: s.DefaultNamespace,
		DeletionGroupsDuringUpdate: s.DeletionGroupsDuringUpdate,
	}
}

// hash identifies a spec, so a run resumed after a requeue knows it is
// still working on the same spec.
func (s *Spec) hash() string {
	b, _ := json.Marshal(s)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12])
}

// State is what Reconcile and Delete keep between calls: the managed
// objects, their fingerprints for drift detection, and the progress of a
// run waiting for readiness, exports or the deletion of removed objects.
// It holds references and hashes, never object content.
type State struct {
	Managed      ManagedResourceStatusList `json:"managed,omitempty"`
	Fingerprints map[string]string         `json:"fingerprints,omitempty"`
	Pending      *Pending                  `json:"pending,omitempty"`
}

// Pending is a run that applied its manifests and waits.
type Pending struct {
	Job   string    `json:"job"`
	Spec  string    `json:"spec"`
	Since time.Time `json:"since"`
	// Tries counts the checks so far, for the delay before the next.
	Tries int `json:"tries,omitempty"`
	// Orphans are objects no longer in the manifests, still to be deleted.
	Orphans ManagedResourceStatusList `json:"orphans,omitempty"`
	// Patches are the keys of objects whose patchAfterDeployment is due.
	Patches      []string          `json:"patches,omitempty"`
	Fingerprints map[string]string `json:"fingerprints,omitempty"`
}

// DecodeState reads a State; empty input is the empty state.
func DecodeState(b []byte) (State, error) {
	var s State
	if len(b) == 0 {
		return s, nil
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return State{}, core.Terminal(core.CodeInternalProblem, "the stored state of the deploy item cannot be read: "+err.Error(), core.CodeInternalProblem)
	}
	return s, nil
}

// Encode writes the state; the empty state is nil.
func (s State) Encode() []byte {
	if len(s.Managed) == 0 && len(s.Fingerprints) == 0 && s.Pending == nil {
		return nil
	}
	b, _ := json.Marshal(s)
	return b
}

// SealState is a stored state without what was derived from the values
// the item applied: the fingerprints (digests of the fields each object
// got) and a pending run (which holds a digest of the spec). What Delete
// needs, the managed objects, stays; a pending run's orphans are among
// them. The next Reconcile applies again and fingerprints anew.
func SealState(b []byte) []byte {
	st, err := DecodeState(b)
	if err != nil {
		return nil
	}
	st.Fingerprints, st.Pending = nil, nil
	return st.Encode()
}

// Outcome is what a Reconcile or Delete call did.
type Outcome struct {
	State State
	// Export is the merged value of the exports, or nil.
	Export map[string]any
	// RequeueAfter, when positive, asks to be called again (with the same
	// job ID and State) after this long: the objects are not ready yet,
	// exports cannot be read yet, or deleted objects are not gone yet.
	RequeueAfter time.Duration
	// Waiting says what the run waits for when RequeueAfter is set.
	Waiting string
	// TimeoutCodes are the codes a timeout ending this wait adds to
	// ERR_TIMEOUT (see deployer.Result).
	TimeoutCodes []string
}

// ReadinessTimeoutCodes are the codes Landscaper's readiness check gives
// when it times out: ERR_FOR_INFO_ONLY besides ERR_TIMEOUT.
var ReadinessTimeoutCodes = []string{core.CodeForInfoOnly}

// requeueDelay grows with the number of checks: objects of a fresh
// install are often ready within a second, slow ones are not polled
// harder than Landscaper's five-second interval.
func requeueDelay(tries int) time.Duration {
	d := 500 * time.Millisecond << min(tries, 4)
	return min(d, 5*time.Second)
}

var now = time.Now

// Reconcile brings the objects to the spec as Landscaper's manifest
// deployer does: apply the manifests (Apply), delete objects no longer in
// them (DeleteManaged with DeletionGroupsDuringUpdate), wait until the
// objects are ready (CheckReadiness), read the exports (ReadExports), apply
// the patchAfterDeployment patches, and record fingerprints for Drift.
//
// Waiting is not done here: when something is not ready the outcome asks
// to be called again, and a call with the same job and spec resumes where
// the previous one stopped instead of applying again. Errors are
// *core.Error; the outcome's State is valid with and without an error.
func Reconcile(ctx context.Context, cl *target.Cluster, spec *Spec, job string, st State) (Outcome, error) {
	if spec.Owner == "" {
		return Outcome{State: st}, errors.New("kube: Spec.Owner is required")
	}
	h := spec.hash()
	p := st.Pending
	var fresh map[string]*unstructured.Unstructured
	if p == nil || job == "" || p.Job != job || p.Spec != h {
		applied, err := Apply(ctx, cl, spec.applyOptions(), spec.Manifests, st.Managed)
		if err != nil {
			st.Managed, st.Pending = applied.Managed, nil
			return Outcome{State: st}, err
		}
		var orphans ManagedResourceStatusList
		for _, mr := range st.Managed {
			if !containsRef(applied.Managed, mr.Resource) {
				orphans = append(orphans, mr)
			}
		}
		desired, err := desiredObjects(cl, spec)
		if err != nil {
			return Outcome{State: st}, err
		}
		p = &Pending{Job: job, Spec: h, Since: now(), Orphans: orphans, Patches: applied.Patches,
			Fingerprints: fingerprints(desired, applied.Written, nil)}
		st.Managed = union(applied.Managed, orphans)
		st.Pending = p
		fresh = applied.Written
	}
	waitFor := func(why string) (Outcome, error) {
		d := requeueDelay(p.Tries)
		p.Tries++
		return Outcome{State: st, RequeueAfter: d, Waiting: why}, nil
	}

	if len(p.Orphans) > 0 {
		// Deleting orphans takes time; what was written may change meanwhile.
		fresh = nil
		rem, err := DeleteManaged(ctx, cl, DeleteOptions{ManagedLabel: spec.ManagedLabel, Owner: spec.Owner,
			AdoptFrom: spec.AdoptFrom, AdoptObjects: spec.AdoptObjects, Groups: spec.DeletionGroupsDuringUpdate}, p.Orphans)
		st.Managed = without(st.Managed, p.Orphans, rem)
		p.Orphans = rem
		if err != nil {
			return Outcome{State: st}, reason(err, ReasonCleanup)
		}
		if len(rem) > 0 {
			return waitFor(fmt.Sprintf("%s to be deleted", refString(rem[0].Resource)))
		}
	}

	if err := checkReadiness(ctx, cl, spec.ReadinessChecks, st.Managed, !spec.DefaultCheckWorkloadsOnly, fresh); err != nil {
		var nr *NotReadyError
		if !asNotReady(err, &nr) {
			return Outcome{State: st}, Classify(err, ReasonReadiness, "")
		}
		if t := readinessTimeout(spec.ReadinessChecks); t > 0 && now().Sub(p.Since) > t {
			st.Pending = nil
			return Outcome{State: st}, core.Terminal(ReasonReadiness,
				fmt.Sprintf("readiness check timed out after %s: %s", t, nr.Error()),
				append([]string{core.CodeTimeout}, ReadinessTimeoutCodes...)...)
		}
		out, err := waitFor(nr.Error())
		out.TimeoutCodes = ReadinessTimeoutCodes
		return out, err
	}

	exp, err := ReadExports(ctx, cl, spec.Exports)
	if err != nil {
		var ee *ExportError
		if errors.As(err, &ee) {
			return waitFor(ee.Error())
		}
		return Outcome{State: st}, Classify(err, ReasonExport, "")
	}

	if len(p.Patches) > 0 {
		written, err := PatchAfterDeployment(ctx, cl, spec.Manifests, spec.DefaultNamespace, p.Patches)
		if err != nil {
			return Outcome{State: st}, reason(err, ReasonPatch)
		}
		desired, err := desiredObjects(cl, spec)
		if err != nil {
			return Outcome{State: st}, err
		}
		p.Fingerprints = fingerprints(desired, written, p.Fingerprints)
		p.Patches = nil
	}

	st.Fingerprints, st.Pending = p.Fingerprints, nil
	return Outcome{State: st, Export: exp}, nil
}

// readinessTimeout is the smallest legacy readiness timeout, or zero.
func readinessTimeout(c ReadinessCheckConfiguration) time.Duration {
	var t time.Duration
	pick := func(d *Duration) {
		if d != nil && d.Duration > 0 && (t == 0 || d.Duration < t) {
			t = d.Duration
		}
	}
	pick(c.Timeout)
	for _, cc := range c.CustomReadinessChecks {
		if !cc.Disabled {
			pick(cc.Timeout)
		}
	}
	return t
}

// without removes from l the records of removed that are not in kept.
func without(l, removed, kept ManagedResourceStatusList) ManagedResourceStatusList {
	var out ManagedResourceStatusList
	for _, mr := range l {
		if containsRef(removed, mr.Resource) && !containsRef(kept, mr.Resource) {
			continue
		}
		out = append(out, mr)
	}
	return out
}

// reason sets the reason of a core error that has none of its own step.
func reason(err error, r string) error {
	var ce *core.Error
	if errors.As(err, &ce) {
		c := ce.Clone()
		if c.Reason == ReasonDelete || c.Reason == ReasonApply {
			c.Reason = r
		}
		return c
	}
	return Classify(err, r, "")
}

// Delete removes the managed objects in the spec's deletion groups and
// waits, by asking to be called again, until they are gone.
func Delete(ctx context.Context, cl *target.Cluster, spec *Spec, st State) (Outcome, error) {
	st.Pending, st.Fingerprints = nil, nil
	if len(st.Managed) == 0 {
		return Outcome{State: st}, nil
	}
	rem, err := DeleteManaged(ctx, cl, DeleteOptions{ManagedLabel: spec.ManagedLabel, Owner: spec.Owner,
		AdoptFrom: spec.AdoptFrom, AdoptObjects: spec.AdoptObjects, Groups: spec.DeletionGroups}, st.Managed)
	st.Managed = rem
	if err != nil {
		return Outcome{State: st}, err
	}
	if len(rem) > 0 {
		return Outcome{State: st, RequeueAfter: time.Second, Waiting: refString(rem[0].Resource) + " to be deleted"}, nil
	}
	return Outcome{State: st}, nil
}

// Adopted returns st seeded, on an imported item's first run, with the
// objects the Landscaper DeployItem it takes over recorded as managed, so
// that those the item no longer renders are deleted as orphans instead of
// being forgotten. The records have policy fallback: an object is deleted
// only while it carries the DeployItem's label or the item's own.
func Adopted(st State, a *deployer.Adoption) State {
	if a == nil || len(st.Managed) > 0 {
		return st
	}
	for _, o := range a.Objects {
		st.Managed = append(st.Managed, ManagedResourceStatus{Policy: PolicyFallback, Resource: corev1.ObjectReference{
			APIVersion: o.APIVersion, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name,
		}})
	}
	return st
}

var labelValue = regexp.MustCompile(`^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`)

// OwnerFor returns the managed label's value for a deploy item: its
// execution and item name when they form a valid label value, else a
// shortened form with a hash that keeps it unique.
func OwnerFor(execution, item string) string {
	v := execution + "." + item
	if len(v) <= 63 && labelValue.MatchString(v) {
		return v
	}
	sum := sha256.Sum256([]byte(execution + "\x00" + item))
	suffix := hex.EncodeToString(sum[:5])
	clean := []byte{}
	for _, c := range []byte(v) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
			clean = append(clean, c)
		default:
			clean = append(clean, '-')
		}
	}
	if len(clean) > 52 {
		clean = clean[:52]
	}
	for len(clean) > 0 && !isAlnum(clean[0]) {
		clean = clean[1:]
	}
	if len(clean) == 0 {
		return suffix
	}
	return string(clean) + "-" + suffix
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// ProviderStatus is Landscaper's provider status of the Kubernetes
// deployers: the managed objects (never their content).
type ProviderStatus struct {
	APIVersion       string                    `json:"apiVersion"`
	Kind             string                    `json:"kind"`
	ManagedResources ManagedResourceStatusList `json:"managedResources,omitempty"`
}

// NewProviderStatus renders the provider status for the managed objects.
func NewProviderStatus(apiVersion string, managed ManagedResourceStatusList) json.RawMessage {
	b, _ := json.Marshal(ProviderStatus{APIVersion: apiVersion, Kind: "ProviderStatus", ManagedResources: managed.ForStatus()})
	return b
}
