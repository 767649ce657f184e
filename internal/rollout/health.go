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
