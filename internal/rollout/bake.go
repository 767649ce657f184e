package rollout

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Clock is what a bake needs of time; tests replace it.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

// Bake is one group's canary bake, as its runner (the engine for deploy
// items, the installation tree for sub-installations) hands it over.
type Bake struct {
	State   *State
	Members []string
	// Probe looks at a canary member once: its restarts since the bake
	// began, why (for messages, ": ..." or ""), and whether it is ready.
	Probe func(ctx context.Context, member string) (restarts int, why string, ready bool)
	// Stop ends the group's rollout for this apply; Pass moves it past
	// its canary. Exactly one of them is called.
	Stop func(phase Phase, reason, msg string)
	Pass func()
}

// RunBakes watches the canaries of bakes together, every
// s.Health.Interval, until each bake's Duration (from State.BakeStart) is
// over, its health trips auto-pause or auto-fail, or ctx ends.
func RunBakes(ctx context.Context, clock Clock, s Strategy, bakes []*Bake) {
	interval := s.Health.Interval
	if interval <= 0 {
		interval = DefaultHealthInterval
	}
	left := slices.Clone(bakes)
	for len(left) > 0 {
		now := clock.Now()
		wait := interval
		left = slices.DeleteFunc(left, func(b *Bake) bool {
			worst, who, why := 0, "", ""
			var unready []string
			for _, m := range b.Members {
				n, msg, ready := b.Probe(ctx, m)
				if n > worst || who == "" {
					worst, who, why = n, m, msg
				}
				if !ready {
					unready = append(unready, m+msg)
				}
			}
			if verdict := s.Judge(worst); verdict != "" {
				msg := fmt.Sprintf("canary member %s restarted %d times during the bake%s", who, worst, why)
				phase := PhaseCanaryPaused
				if verdict == ReasonAutoFail {
					phase = PhaseCanaryFailed
				}
				b.Stop(phase, verdict, msg)
				return true
			}
			end := b.State.BakeStart.Add(s.Duration)
			if !now.Before(end) {
				if len(unready) > 0 {
					// A canary whose workloads are not ready when the
					// bake ends is not promoted.
					b.Stop(PhaseCanaryPaused, ReasonAutoPause, "canary not ready at the end of the bake: "+strings.Join(unready, "; "))
					return true
				}
				b.Pass()
				return true
			}
			wait = min(wait, end.Sub(now))
			return false
		})
		if len(left) == 0 {
			return
		}
		select {
		case <-clock.After(wait):
		case <-ctx.Done():
			for _, b := range left {
				b.Stop(PhaseCanary, ReasonInterrupted, "the apply was stopped (interrupted or out of time) during the canary's bake; the next apply bakes on")
			}
			return
		}
	}
}
