package rollout

import (
	"fmt"
	"strings"
	"time"
)

// How a group's state moves through one apply, whoever runs its members.

// Begin announces a new rollout (a Fresh decision's state): its canary
// runs the new revision first.
func (s *State) Begin(now time.Time) {
	s.SetCondition(now, ConditionCanary, "True", "NewSpec",
		fmt.Sprintf("revision %s: canary %s runs it first", s.Revision, strings.Join(s.Canary, ", ")))
	s.SetCondition(now, ConditionCompleted, "False", "NewSpec", "revision "+s.Revision+" is rolling out")
}

// KeepsRevert reports whether a job continues old's rollout, so the
// specs its canary ran before stay what a revert goes back to; after a
// completed rollout, what the canary runs now is.
func (d Decision) KeepsRevert(old *State) bool {
	return old != nil && !d.Fresh && old.Phase != PhaseCompleted
}

// BeginBake starts the canary's bake, or resumes one an earlier apply
// began. base is asked for the restart counts the canary's items show
// now, by item key, when the bake starts again after an auto-pause: a
// first bake counts from zero, as the canary's workloads are new.
func (s *State) BeginBake(now time.Time, duration time.Duration, base func() map[string]int) {
	if s.BakeStart.IsZero() {
		s.BakeStart = now
		s.RestartBase, s.HealthFailures = map[string]int{}, map[string]int{}
		if s.Rebake {
			s.RestartBase = base()
		}
		s.Rebake = false
	}
	s.Phase = PhaseCanary
	s.SetCondition(now, ConditionCanary, "True", "Baking",
		fmt.Sprintf("the canary bakes for %s from %s", duration, s.BakeStart.UTC().Format(time.RFC3339)))
}

// Stop records that the rollout stops short in this apply, with the
// conditions that say why.
func (s *State) Stop(now time.Time, phase Phase, reason, msg string) {
	s.Phase, s.Reason, s.Message = phase, reason, msg
	switch reason {
	case ReasonCanaryFailed, ReasonAutoFail:
		s.SetCondition(now, ConditionCanaryFailed, "True", reason, msg)
		s.SetCondition(now, ConditionCanary, "False", reason, "the canary failed and is reverted where it can be")
	case ReasonAutoPause:
		s.SetCondition(now, ConditionCanaryPaused, "True", reason, msg)
	case ReasonManualPause:
		s.SetCondition(now, ConditionPaused, "True", reason, msg)
		if phase == PhaseCanaryPaused {
			s.SetCondition(now, ConditionCanaryPaused, "True", reason, msg)
		}
	}
}

// StageName names a stage in messages.
func StageName(st Stage) string {
	if st.Canary {
		return "the canary"
	}
	return fmt.Sprintf("batch %d", st.Index)
}

// StageDone moves past a stage that went well. A rollout paused by hand
// with members left stops there; StageDone reports whether it did.
func (s *State) StageDone(now time.Time, st Stage, paused, left bool) bool {
	s.Stage = st.Index + 1
	s.Phase, s.Reason, s.Message = PhaseRollingOut, "", ""
	if st.Canary {
		s.Baked = true
		s.SetCondition(now, ConditionCanary, "False", ReasonCanaryHealthy, "the canary ran the new spec and stayed healthy")
		s.SetCondition(now, ConditionCanaryPaused, "False", ReasonCanaryHealthy, "")
		s.SetCondition(now, ConditionCanaryFailed, "False", ReasonCanaryHealthy, "")
	}
	if !paused || !left {
		return false
	}
	phase := PhaseRollingOut
	if st.Canary {
		phase = PhaseCanaryPaused
	}
	s.Stop(now, phase, ReasonManualPause, "paused by hand (paused = true) after "+StageName(st))
	return true
}

// Finish records the outcome of an apply: completion when every member
// runs the new spec (allNew), else why the rollout is short. stopped says
// whether the apply stopped it (Stop); a rollout the decision held before
// it moved says so again. It returns "" on completion, else a sentence
// for diagnostics about group.
func (s *State) Finish(now time.Time, group string, allNew bool, d Decision, stopped bool, trigger string) string {
	if allNew {
		s.Phase, s.Reason, s.Message, s.Baked = PhaseCompleted, "", "", true
		s.SetCondition(now, ConditionCompleted, "True", ReasonCompleted, "every member runs revision "+s.Revision)
		s.SetCondition(now, ConditionPaused, "False", ReasonCompleted, "")
		return ""
	}
	if s.Reason == "" && len(d.Hold) > 0 && d.Why != "" {
		s.Reason = d.Why
	}
	if s.Reason == "" {
		s.Reason = ReasonInterrupted
	}
	if s.Message == "" {
		s.Message = "the rollout is held: " + heldWhy(s.Reason)
	}
	if !stopped {
		// Held before it moved: say so again, with the same times.
		s.SetCondition(now, conditionOf(s.Reason), "True", s.Reason, s.Message)
	}
	s.Trigger = trigger
	return fmt.Sprintf("rollout of group %s is %s (%s): %s", group, s.Phase, s.Reason, s.Message)
}

func conditionOf(reason string) string {
	switch reason {
	case ReasonAutoFail, ReasonCanaryFailed:
		return ConditionCanaryFailed
	case ReasonAutoPause:
		return ConditionCanaryPaused
	}
	return ConditionPaused
}

func heldWhy(reason string) string {
	switch reason {
	case ReasonAutoFail, ReasonCanaryFailed:
		return "the canary failed; change the spec, or set a new reconcile_trigger to try the canary again"
	case ReasonAutoPause:
		return "the canary restarted too often; set a new reconcile_trigger to bake it again and go on"
	case ReasonManualPause:
		return "paused by hand; the next apply runs the next stage (paused = false: all of them)"
	}
	return "the next apply goes on"
}
