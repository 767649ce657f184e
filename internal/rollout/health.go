package rollout

import (
	"bytes"
	"context"
	"fmt"
	"os"
	osexec "os/exec"
	"strings"
	"time"
)

// RunCommand runs a health command once, with env added to the
// provider's environment, and reports its failure: a non-zero exit, or
// no exit within limit. The error carries the end of its output.
func RunCommand(ctx context.Context, command []string, env []string, limit time.Duration) error {
	if len(command) == 0 {
		return nil
	}
	if limit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, limit)
		defer cancel()
	}
	cmd := osexec.CommandContext(ctx, command[0], command[1:]...)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		tail := strings.TrimSpace(out.String())
		if len(tail) > 500 {
			tail = "…" + tail[len(tail)-500:]
		}
		if tail != "" {
			return fmt.Errorf("%w: %s", err, tail)
		}
		return err
	}
	return nil
}

// CommandRunner runs a health command once (RunCommand outside tests).
type CommandRunner func(ctx context.Context, command, env []string, limit time.Duration) error

// ItemHealth is what a deployer reported of one of a member's items.
type ItemHealth struct {
	// Key names the item in State.RestartBase.
	Key      string
	Restarts int
	Ready    bool
	Message  string
}

// HealthEnv is what a health command learns of the member it checks.
type HealthEnv struct {
	Execution, Group, Member, Export string
	Items                            []string
}

// MemberHealth judges a canary member once during a bake: its restarts
// since the bake began are its sickest item's (relative to
// st.RestartBase) plus the failed runs of the health command, which runs
// now if there is one; it is ready when all its items are. It records the
// count in st.Members and returns it with why (for messages) and the
// command's error, if it failed now.
func (s Strategy) MemberHealth(ctx context.Context, st *State, items []ItemHealth, run CommandRunner, env HealthEnv) (restarts int, why string, ready bool, err error) {
	ready = true
	for i, it := range items {
		if r := max(0, it.Restarts-st.RestartBase[it.Key]); i == 0 || r > restarts {
			restarts, why = r, ""
			if it.Message != "" {
				why = ": " + it.Message
			}
		}
		ready = ready && it.Ready
	}
	if cmd := s.Health.Command; len(cmd) > 0 && ctx.Err() == nil {
		limit := s.Health.Interval
		if limit <= 0 {
			limit = DefaultHealthInterval
		}
		if run == nil {
			run = RunCommand
		}
		vars := []string{"LANDSCAPER_EXECUTION=" + env.Execution, "LANDSCAPER_ROLLOUT_GROUP=" + env.Group,
			"LANDSCAPER_MEMBER=" + env.Member, "LANDSCAPER_MEMBER_EXPORT=" + env.Export,
			"LANDSCAPER_MEMBER_ITEMS=" + strings.Join(env.Items, ",")}
		if err = run(ctx, cmd, vars, limit); err != nil && ctx.Err() == nil {
			if st.HealthFailures == nil {
				st.HealthFailures = map[string]int{}
			}
			st.HealthFailures[env.Member]++
			why = fmt.Sprintf(" (last health command: %v)", err)
		} else {
			err = nil
		}
		restarts += st.HealthFailures[env.Member]
	}
	if st.Members == nil {
		st.Members = map[string]*MemberStatus{}
	}
	ms := st.Members[env.Member]
	if ms == nil {
		ms = &MemberStatus{}
		st.Members[env.Member] = ms
	}
	ms.Restarts = restarts
	return restarts, why, ready, err
}
