// Package rollout decides how a change reaches the members of a group
// (deploy items rendered alike, differing only by their target): a canary
// first, a bake during which the canary's health is watched, then the rest
// batch by batch. It is the ExtendedDaemonSet's canary workflow (auto-pause,
// auto-fail, manual pause) made to fit Terraform, where every step happens
// inside an apply.
//
// The package holds the strategy, the persisted state of a group's rollout,
// and the decision of which members an apply may move. It runs nothing: the
// engine runs members and reports back. It knows nothing of Terraform.
package rollout

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Phase is the phase of one group's rollout, as the ExtendedDaemonSet
// names its canary states.
type Phase string

// Phases of a rollout.
const (
	// PhaseCanary: the canary runs the new spec, or bakes.
	PhaseCanary Phase = "Canary"
	// PhaseCanaryPaused: the canary runs the new spec, the rest the old;
	// too many restarts (auto-pause) or a manual pause stopped it.
	PhaseCanaryPaused Phase = "CanaryPaused"
	// PhaseCanaryFailed: the canary failed (auto-fail, or its deployer
	// failed) and was reverted to the previous spec.
	PhaseCanaryFailed Phase = "CanaryFailed"
	// PhaseRollingOut: the canary passed; batches are moving.
	PhaseRollingOut Phase = "RollingOut"
	// PhaseCompleted: every member runs the new spec.
	PhaseCompleted Phase = "Completed"
)

// Reasons why a rollout stopped before completing.
const (
	ReasonManualPause   = "ManualPause"
	ReasonAutoPause     = "AutoPause"
	ReasonAutoFail      = "AutoFail"
	ReasonCanaryFailed  = "CanaryMemberFailed"
	ReasonBatchFailed   = "BatchMemberFailed"
	ReasonInterrupted   = "Interrupted"
	ReasonUnhealthy     = "Unhealthy"
	ReasonCompleted     = "Completed"
	ReasonCanaryHealthy = "CanaryHealthy"
)

// Step is one entry of batches: a share of the members that are not
// canaries (Percent) or a number of them (Count), cumulative: "25%" then
// "100%" moves a quarter, then the rest.
type Step struct {
	Percent int `json:"percent,omitempty"`
	Count   int `json:"count,omitempty"`
}

// ParseStep reads "25%" or "3".
func ParseStep(s string) (Step, error) {
	if p, ok := strings.CutSuffix(s, "%"); ok {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 100 {
			return Step{}, fmt.Errorf("%q is not a percentage from 1%% to 100%%", s)
		}
		return Step{Percent: n}, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return Step{}, fmt.Errorf("%q is neither a percentage (\"25%%\") nor a positive number of members", s)
	}
	return Step{Count: n}, nil
}

func (s Step) String() string {
	if s.Percent > 0 {
		return fmt.Sprintf("%d%%", s.Percent)
	}
	return strconv.Itoa(s.Count)
}

// upTo is how many of n members the step has moved in total.
func (s Step) upTo(n int) int {
	if s.Percent > 0 {
		return (s.Percent*n + 99) / 100
	}
	return min(s.Count, n)
}

// Health says how the canary's health is watched during the bake, beside
// what deployers report themselves (restarts of the pods of Kubernetes
// items): Command, when set, runs every Interval for each canary member;
// a failed run counts as one restart of that member.
type Health struct {
	Command  []string      `json:"command,omitempty"`
	Interval time.Duration `json:"interval,omitempty"`
}

// DefaultHealthInterval is how often health is looked at during a bake.
const DefaultHealthInterval = 10 * time.Second

// Strategy is what the user configured.
type Strategy struct {
	// Canary is chosen by name (CanaryMembers), else by CanaryCount, else
	// by CanaryPercent of the members (rounded up). None means no canary
	// stage and no bake.
	CanaryMembers []string
	CanaryCount   int
	CanaryPercent int
	// Duration is the bake after the canary is ready.
	Duration time.Duration
	// Batches move the rest; empty means all at once.
	Batches []Step
	// AutoPause and AutoFail are the restart thresholds (a member with more
	// restarts than this during the bake trips them); nil is off.
	AutoPause, AutoFail *int
	// Paused makes an apply stop after the stage it runs.
	Paused bool
	Health Health
}

// Problem is a strategy error, about Field (a path below rollout, such as
// "canary.members" or "batches[1]").
type Problem struct {
	Field   string
	Message string
}

// Validate checks a strategy against the names of the members of every
// group (all), at plan time; what says what a member is, for messages
// about a name that is none ("a deploy item with a rollout_group").
func (s Strategy) Validate(all []string, what string) []Problem {
	var out []Problem
	for i, m := range s.CanaryMembers {
		if !slices.Contains(all, m) {
			out = append(out, Problem{fmt.Sprintf("canary.members[%d]", i), fmt.Sprintf("%q is not %s; members: %s", m, what, orNone(all))})
		}
		if slices.Contains(s.CanaryMembers[:i], m) {
			out = append(out, Problem{fmt.Sprintf("canary.members[%d]", i), fmt.Sprintf("%q is listed twice", m)})
		}
	}
	if s.CanaryPercent < 0 || s.CanaryPercent > 100 {
		out = append(out, Problem{"canary.percent", fmt.Sprintf("%d is not a percentage from 1 to 100", s.CanaryPercent)})
	}
	if s.CanaryCount < 0 {
		out = append(out, Problem{"canary.count", fmt.Sprintf("%d is not a positive number of members", s.CanaryCount)})
	}
	for i := 1; i < len(s.Batches); i++ {
		a, b := s.Batches[i-1], s.Batches[i]
		if (a.Percent > 0) == (b.Percent > 0) && a.Percent+a.Count >= b.Percent+b.Count {
			out = append(out, Problem{fmt.Sprintf("batches[%d]", i), fmt.Sprintf("batches are cumulative: %s must be more than %s before it", b, a)})
		}
	}
	if n := len(s.Batches); n > 0 && s.Batches[n-1].Percent != 100 {
		out = append(out, Problem{fmt.Sprintf("batches[%d]", n-1), fmt.Sprintf("the last batch must be \"100%%\", so every member is reached; it is %s", s.Batches[n-1])})
	}
	for _, t := range []struct {
		f string
		v *int
	}{{"auto_pause.max_restarts", s.AutoPause}, {"auto_fail.max_restarts", s.AutoFail}} {
		if t.v != nil && *t.v < 0 {
			out = append(out, Problem{t.f, "must not be negative"})
		}
	}
	if s.Duration < 0 {
		out = append(out, Problem{"duration", "must not be negative"})
	}
	return out
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "(none)"
	}
	return strings.Join(s, ", ")
}

// Condition is a Landscaper-style status condition: LastTransitionTime
// changes when Status does, LastUpdateTime whenever the condition is set.
type Condition struct {
	Type               string    `json:"type"`
	Status             string    `json:"status"`
	Reason             string    `json:"reason,omitempty"`
	Message            string    `json:"message,omitempty"`
	LastTransitionTime time.Time `json:"lastTransitionTime"`
	LastUpdateTime     time.Time `json:"lastUpdateTime"`
}

// Condition types.
const (
	ConditionCanary       = "Canary"
	ConditionCanaryPaused = "CanaryPaused"
	ConditionCanaryFailed = "CanaryFailed"
	ConditionPaused       = "Paused"
	ConditionCompleted    = "Completed"
)

// MemberStatus is what is known of one member.
type MemberStatus struct {
	// Revision is the short hash of the spec the member last ran
	// successfully; New says whether that is the spec being rolled out.
	Revision string `json:"revision,omitempty"`
	New      bool   `json:"new"`
	Canary   bool   `json:"canary,omitempty"`
	// Restarts counts restarts (or failed health commands) seen during the
	// bake, since it started or resumed.
	Restarts int `json:"restarts,omitempty"`
}

// State is a group's rollout as persisted between applies.
type State struct {
	Phase Phase `json:"phase"`
	// Revision identifies the set of member specs being rolled out.
	Revision string `json:"revision"`
	Canary   []string
	// Stage is the stage in progress or next: 0 the canary, i batch i.
	Stage int `json:"stage"`
	// BakeStart is when the bake of the canary began (zero: not yet);
	// Baked says it ended well.
	BakeStart time.Time `json:"bakeStart,omitzero"`
	Baked     bool      `json:"baked,omitempty"`
	// Reason says why the rollout stopped, if it did; Trigger is the
	// reconcile trigger it stopped under (a new one lifts a pause).
	Reason     string                   `json:"reason,omitempty"`
	Message    string                   `json:"message,omitempty"`
	Trigger    string                   `json:"trigger,omitempty"`
	Members    map[string]*MemberStatus `json:"members,omitempty"`
	Conditions []Condition              `json:"conditions,omitempty"`
	// RestartBase is each member's restart count reported by its deployer
	// when a bake resumed after an auto-pause (Rebake); counts are relative
	// to it. A first bake counts from zero: the canary's pods are new.
	RestartBase map[string]int `json:"restartBase,omitempty"`
	// Rebake is set when an auto-pause was lifted: the bake counts
	// restarts from what they are when it starts again, not from zero.
	Rebake bool `json:"rebake,omitempty"`
	// HealthFailures counts each member's failed health commands during
	// the bake.
	HealthFailures map[string]int `json:"healthFailures,omitempty"`
}

// Clone returns a copy that shares nothing mutable with s.
func (s State) Clone() State {
	c := s
	c.Canary = slices.Clone(s.Canary)
	c.Conditions = slices.Clone(s.Conditions)
	c.Members = make(map[string]*MemberStatus, len(s.Members))
	for k, v := range s.Members {
		m := *v
		c.Members[k] = &m
	}
	c.RestartBase = maps.Clone(s.RestartBase)
	c.HealthFailures = maps.Clone(s.HealthFailures)
	return c
}

// SetCondition sets a condition the Landscaper way.
func (s *State) SetCondition(now time.Time, typ, status, reason, msg string) {
	for i := range s.Conditions {
		c := &s.Conditions[i]
		if c.Type != typ {
			continue
		}
		if c.Status != status {
			c.LastTransitionTime = now
		}
		c.Status, c.Reason, c.Message, c.LastUpdateTime = status, reason, msg, now
		return
	}
	s.Conditions = append(s.Conditions, Condition{Type: typ, Status: status, Reason: reason, Message: msg, LastTransitionTime: now, LastUpdateTime: now})
	slices.SortFunc(s.Conditions, func(a, b Condition) int { return strings.Compare(a.Type, b.Type) })
}

// Stopped reports whether the rollout is held until the user acts: an
// auto-pause or a failure, lifted by a new reconcile trigger. A manual
// pause holds nothing by itself: it stops each apply after one stage.
func (s *State) Stopped(trigger string) bool {
	switch s.Reason {
	case ReasonAutoPause, ReasonAutoFail, ReasonCanaryFailed:
		return trigger == s.Trigger
	}
	return false
}

// Member is one member as a decision sees it.
type Member struct {
	Name string
	// Current: the member runs its desired spec, successfully.
	Current bool
}

// Stage is one step of a rollout: the members it covers, of which Run
// still need to run the new spec. Canary stages bake.
type Stage struct {
	Index   int
	Members []string
	Run     []string
	Canary  bool
}

// Decision is what an apply may do with one group.
type Decision struct {
	// State is the rollout state to continue from: prev, or a new one
	// when the specs changed (Fresh).
	State *State
	Fresh bool
	// Stages are the stages this apply may run, in order.
	Stages []Stage
	// Hold lists members that need the new spec but stay as they are in
	// this apply; Why says why.
	Hold []string
	Why  string
}

// Move lists the members the decision may run, sorted.
func (d Decision) Move() []string {
	var out []string
	for _, s := range d.Stages {
		out = append(out, s.Run...)
	}
	slices.Sort(out)
	return out
}

// Decide says which members an apply may move. members is sorted by name;
// revision identifies their desired specs; trigger is the execution's
// reconcile trigger. prev is the state left by the last apply, or nil.
func Decide(s Strategy, prev *State, members []Member, revision, trigger string) Decision {
	names := make([]string, len(members))
	current := map[string]bool{}
	var pending []string
	for i, m := range members {
		names[i] = m.Name
		current[m.Name] = m.Current
		if !m.Current {
			pending = append(pending, m.Name)
		}
	}
	d := Decision{State: prev}
	if prev == nil || prev.Revision != revision {
		if len(pending) == 0 {
			// Nothing to roll out: the members already run these specs
			// (an import, or a rollout added to a settled group).
			d.State = &State{Phase: PhaseCompleted, Revision: revision, Stage: len(s.Batches) + 1, Baked: true}
			return d
		}
		d.State = &State{Phase: PhaseCanary, Revision: revision, Canary: pickCanary(s, names, pending)}
		d.Fresh = true
	} else {
		c := prev.Clone()
		d.State = &c
	}
	st := d.State
	if st.Phase == PhaseCompleted && len(pending) == 0 {
		return d
	}
	if st.Stopped(trigger) {
		d.Hold, d.Why = pending, st.Reason
		return d
	}
	if st.Reason == ReasonAutoFail || st.Reason == ReasonCanaryFailed {
		// Lifted by a new trigger: the canary tries the new spec again.
		st.Stage, st.Baked, st.BakeStart = 0, false, time.Time{}
	}
	if st.Reason == ReasonAutoPause {
		// Lifted: the canary bakes again, restarts counted afresh.
		st.Baked, st.BakeStart, st.Rebake = false, time.Time{}, true
	}
	if st.Reason == ReasonAutoFail || st.Reason == ReasonCanaryFailed || st.Reason == ReasonAutoPause {
		st.Reason, st.Message = "", ""
	}
	stages := Stages(s, st.Canary, names)
	for i := range stages {
		stg := &stages[i]
		for _, m := range stg.Members {
			if !current[m] {
				stg.Run = append(stg.Run, m)
			}
		}
	}
	if d.Fresh && (len(stages) == 0 || !stages[0].Canary || len(stages[0].Run) == 0) {
		st.Baked = true // no canary, or one whose spec does not change: nothing to bake
	}
	// Stages run in order; a stage whose members fell behind again (a
	// member failed) runs again. A paused rollout runs one stage per apply.
	var chosen []Stage
	for _, stg := range stages {
		if len(stg.Run) == 0 && (!stg.Canary || st.Baked) {
			continue
		}
		chosen = append(chosen, stg)
		if s.Paused {
			break
		}
	}
	d.Stages = chosen
	moved := map[string]bool{}
	for _, m := range d.Move() {
		moved[m] = true
	}
	for _, m := range pending {
		if !moved[m] {
			d.Hold = append(d.Hold, m)
		}
	}
	if len(d.Hold) > 0 && s.Paused {
		d.Why = ReasonManualPause
	}
	return d
}

// Stages partitions members (sorted) into the canary stage and the
// batches. A stage with no members is left out.
func Stages(s Strategy, canary, members []string) []Stage {
	var out []Stage
	var rest []string
	var inCanary []string
	for _, m := range members {
		if slices.Contains(canary, m) {
			inCanary = append(inCanary, m)
		} else {
			rest = append(rest, m)
		}
	}
	if len(inCanary) > 0 {
		out = append(out, Stage{Index: 0, Members: inCanary, Canary: true})
	}
	batches := s.Batches
	if len(batches) == 0 {
		batches = []Step{{Percent: 100}}
	}
	done := 0
	for i, b := range batches {
		n := b.upTo(len(rest))
		if i == len(batches)-1 {
			n = len(rest)
		}
		if n > done {
			out = append(out, Stage{Index: i + 1, Members: rest[done:n]})
			done = n
		}
	}
	return out
}

// pickCanary chooses the canary: the named members, else the first
// CanaryCount or CanaryPercent of the members (sorted), preferring those
// whose spec changes.
func pickCanary(s Strategy, names, pending []string) []string {
	if len(s.CanaryMembers) > 0 {
		var out []string
		for _, m := range s.CanaryMembers {
			if slices.Contains(names, m) {
				out = append(out, m)
			}
		}
		slices.Sort(out)
		return out
	}
	n := s.CanaryCount
	if n == 0 && s.CanaryPercent > 0 {
		n = max(1, (s.CanaryPercent*len(names)+99)/100)
	}
	n = min(n, len(pending))
	out := slices.Clone(pending[:n])
	return out
}

// Judge judges restarts during the bake: the reason to stop, or "".
// Without auto_pause and auto_fail, any restart pauses: a canary is not
// promoted past a crash unnoticed.
func (s Strategy) Judge(restarts int) string {
	switch {
	case s.AutoFail != nil && restarts > *s.AutoFail:
		return ReasonAutoFail
	case s.AutoPause != nil && restarts > *s.AutoPause:
		return ReasonAutoPause
	case s.AutoFail == nil && s.AutoPause == nil && restarts > 0:
		return ReasonAutoPause
	}
	return ""
}
