// Package engine is Landscaper's execution phase engine, run in-process.
//
// It holds the object model (an execution and its deploy items), the
// execution phases (Init, Progressing, Completing; InitDelete, Deleting),
// job IDs, and the classification of deploy items that decides what runs
// next. It knows nothing about Terraform: callers translate their state to
// these types and back.
package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"time"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/rollout"
)

// ItemSpec is the desired state of one deploy item.
type ItemSpec struct {
	Type string `json:"type"`
	// Config is the deployer configuration, normalised to JSON.
	Config    json.RawMessage `json:"config,omitempty"`
	DependsOn []string        `json:"dependsOn,omitempty"`
	// Timeout bounds one run of the item including retries; 0 means none.
	Timeout time.Duration `json:"timeout,omitempty"`
	// UpdateOnChangeOnly skips an item whose spec equals the spec of its
	// last successful run.
	UpdateOnChangeOnly bool `json:"updateOnChangeOnly,omitempty"`
	// Target is what the item acts on, or nil.
	Target *deployer.Target `json:"target,omitempty"`
	// TargetRef says where the target came from, for people to read:
	// "import", "import[key]", "import[index]" or a target's name. It is
	// not part of the hash: the target itself is.
	TargetRef string `json:"targetRef,omitempty"`
	// ComponentDescriptor and Content are the rest of Landscaper's
	// container contract (see deployer.Request), set by callers that have
	// them, such as installations. The component descriptor counts in the
	// hash: a new component version re-runs the item. Content is not
	// stored: it is the blueprint's files, given anew by every caller.
	ComponentDescriptor json.RawMessage `json:"componentDescriptor,omitempty"`
	Content             fs.FS           `json:"-"`
	// AtRest, when set, is what may be kept of Config wherever the status
	// is stored: Config with every value a secret influenced masked, for
	// callers that keep no secret at rest (they store AtRest as Config).
	// Hash then covers AtRest and AtRestKey in place of Config, so that a
	// stored status still tells whether the item changed. AtRestKey says
	// what else the masked values stand for (the inputs they were derived
	// from, without the secrets). Neither is stored.
	AtRest    json.RawMessage `json:"-"`
	AtRestKey string          `json:"-"`
	// Withheld says that the stored Config has values masked: a deployer
	// cannot be asked whether the item drifted, and only a
	// deployer.Sealer can delete it.
	Withheld bool `json:"withheld,omitempty"`
}

// Hash identifies what the item does. Type, config and target (for a
// provider's target, where it points) count:
// changing a timeout or an edge of the graph does not change what the
// deployer would install, so it must not re-run the item. An item without
// a target hashes as it did before targets existed.
func (s ItemSpec) Hash() string {
	h := sha256.New()
	h.Write([]byte(s.Type))
	h.Write([]byte{0})
	if s.AtRest != nil {
		h.Write(canonical(s.AtRest))
	} else {
		h.Write(canonical(s.Config))
	}
	if s.AtRestKey != "" {
		h.Write([]byte{3})
		h.Write([]byte(s.AtRestKey))
	}
	if t := s.Target; t != nil {
		h.Write([]byte{0})
		h.Write([]byte(t.Type))
		h.Write([]byte{0})
		if t.Ref != "" {
			// A provider's target counts by where it points: a rotated
			// credential is no reason to run the item again.
			h.Write([]byte{2})
			h.Write([]byte(t.Location))
		} else {
			h.Write(canonical(t.Config))
		}
	}
	if len(s.ComponentDescriptor) > 0 {
		h.Write([]byte{1})
		h.Write(canonical(s.ComponentDescriptor))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// canonical re-encodes JSON with sorted keys so that formatting and key
// order in the user's config text do not count as a change.
func canonical(raw json.RawMessage) []byte {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // keep big integers exact
	var v any
	if err := dec.Decode(&v); err != nil {
		return raw
	}
	out, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	return out
}

// Execution is the desired state: a named set of deploy items.
type Execution struct {
	Name  string
	Items map[string]ItemSpec
	// ReconcileTrigger is any value; whenever it differs from the one an
	// item last succeeded with, the item runs again, whatever its spec
	// hash or UpdateOnChangeOnly say. It plays the part of Landscaper's
	// reconcile annotation, which starts a job that re-runs every item.
	ReconcileTrigger string
	// Groups puts items into rollout groups (item name -> group name);
	// Rollout is the strategy every group follows. Both nil: no rollout,
	// every item runs as soon as its dependencies allow.
	Groups  map[string]string
	Rollout *rollout.Strategy
	// Members names the member an item belongs to within its group (item
	// name -> member name), where a member is more than one item: an
	// installation's member is a target key, and every item the node
	// renders for that key. Absent: the item is a member by itself.
	Members map[string]string
}

// ItemStatus is what is known about one deploy item. Only the item's
// deployer run (through the engine) writes it.
type ItemStatus struct {
	Phase core.Phase `json:"phase"`
	// JobIDFinished is the job in which the item last finished a run.
	JobIDFinished string `json:"jobIDFinished,omitempty"`
	// LastError is the error of the item's last run, nil after a success;
	// FirstError the first error of that run (kept after a success that
	// followed retries), as Landscaper keeps both per job.
	LastError      *core.Error     `json:"lastError,omitempty"`
	FirstError     *core.Error     `json:"firstError,omitempty"`
	ProviderStatus json.RawMessage `json:"providerStatus,omitempty"`
	Export         json.RawMessage `json:"export,omitempty"`
	// AppliedHash is the Hash of the spec of the last successful reconcile.
	AppliedHash string `json:"appliedHash,omitempty"`
	// AppliedTrigger is the execution's ReconcileTrigger at the item's
	// last success.
	AppliedTrigger string `json:"appliedTrigger,omitempty"`
	// State is the deployer's opaque state for this item.
	State []byte `json:"state,omitempty"`
	// Drift, when set, says what a refresh found changed outside Terraform
	// since the item's last success; the next job runs the item again.
	Drift string `json:"drift,omitempty"`
	// Spec is the spec the item was last given; deleting an item that has
	// left the desired state needs it (type, config, order).
	Spec ItemSpec `json:"spec"`
	// ExportWithheld says that the stored Export is masked (a caller that
	// keeps no secret at rest kept it so): it is not the item's export,
	// and whoever needs that must run the item again.
	ExportWithheld bool `json:"exportWithheld,omitempty"`
	// Adopt is set on an item imported from a Landscaper cluster until it
	// has once run successfully: its deployer takes over what Landscaper's
	// deployer installed instead of installing anew (deployer.Request.Adopt).
	Adopt *deployer.Adoption `json:"adopt,omitempty"`
}

// triggered reports whether a deployer ever worked on the item. Items that
// were only declared have nothing to clean up.
func (s *ItemStatus) triggered() bool {
	return s.JobIDFinished != "" || (s.Phase != "" && s.Phase != core.PhaseInit)
}

// DeletedOnDestroy lists, sorted, the items a delete job (Destroy) calls a
// deployer for: those a deployer ever worked on. The rest are forgotten.
func (s Status) DeletedOnDestroy() []string {
	var out []string
	for n, is := range s.Items {
		if is.triggered() {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// Status is the observed state of an execution.
type Status struct {
	Phase         core.Phase             `json:"phase,omitempty"`
	JobID         string                 `json:"jobID,omitempty"`
	JobIDFinished string                 `json:"jobIDFinished,omitempty"`
	LastError     *core.Error            `json:"lastError,omitempty"`
	Items         map[string]*ItemStatus `json:"items,omitempty"`
	// Rollouts is the rollout of each group, by group name.
	Rollouts map[string]*RolloutStatus `json:"rollouts,omitempty"`
}

// RolloutStatus is one group's rollout: its decision state, the job that
// last moved it, and the specs its canary members ran before the
// rollout, to revert them to on auto-fail.
type RolloutStatus struct {
	rollout.State
	JobID    string              `json:"jobID,omitempty"`
	Previous map[string]ItemSpec `json:"previous,omitempty"`
}

func (r *RolloutStatus) clone() *RolloutStatus {
	c := *r
	c.State = r.Clone()
	c.Previous = maps.Clone(r.Previous)
	return &c
}

// Succeeded reports whether the last job ran to its end with success.
func (s Status) Succeeded() bool {
	return s.Phase == core.PhaseSucceeded && s.JobID == s.JobIDFinished
}

// Drifted reports whether a refresh found any item changed outside.
func (s Status) Drifted() bool {
	for _, is := range s.Items {
		if is.Drift != "" {
			return true
		}
	}
	return false
}

// Clone returns a deep enough copy for the engine to mutate.
func (s Status) Clone() Status {
	out := s
	out.Items = make(map[string]*ItemStatus, len(s.Items))
	for k, v := range s.Items {
		c := *v
		out.Items[k] = &c
	}
	if s.Rollouts != nil {
		out.Rollouts = make(map[string]*RolloutStatus, len(s.Rollouts))
		for k, v := range s.Rollouts {
			out.Rollouts[k] = v.clone()
		}
	}
	return out
}

// ParseTimeout reads an item timeout: a Go duration, or "none".
func ParseTimeout(s string) (time.Duration, error) {
	if s == "none" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf(`timeout %q is neither a Go duration (such as "90s" or "10m") nor "none"`, s)
	}
	if d <= 0 {
		return 0, fmt.Errorf(`timeout %q must be positive; use "none" for no timeout`, s)
	}
	return d, nil
}

// DefaultTimeout is Landscaper's default deploy item timeout.
const DefaultTimeout = 10 * time.Minute
