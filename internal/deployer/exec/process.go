package exec

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
)

const (
	// maxLineBytes bounds the memory one output line may take; longer
	// lines are forwarded in pieces.
	maxLineBytes = 64 << 10
	// The stderr tail quoted in error messages.
	maxTailLines = 20
	maxTailBytes = 2 << 10
	// pipeDrainTimeout is how long output may keep flowing after the process
	// group is gone, which only a process that left the group can cause.
	pipeDrainTimeout = time.Second
)

// runCommand runs argv in its own process group and makes sure nothing of
// that group survives it. It returns the exit code, -1 when the command did
// not exit by itself.
func (d *Deployer) runCommand(ctx context.Context, argv []string, dir string, env []string, logf func(string)) (int, *core.Error) {
	path, err := lookPath(argv[0], env)
	if err != nil {
		return -1, core.Terminal(ReasonCommandFailed, "cannot start the command: "+err.Error())
	}
	// Own pipes rather than exec's copying goroutines: Wait must not depend
	// on the pipes closing, as a grandchild may hold them open.
	outR, outW, err := os.Pipe()
	if err != nil {
		return -1, internalProblem("cannot create a pipe: %v", err)
	}
	defer func() { _ = outR.Close() }()
	errR, errW, err := os.Pipe()
	if err != nil {
		_ = outW.Close()
		return -1, internalProblem("cannot create a pipe: %v", err)
	}
	defer func() { _ = errR.Close() }()

	cmd := &osexec.Cmd{
		Path:   path,
		Args:   argv,
		Dir:    dir,
		Env:    env,
		Stdout: outW,
		Stderr: errW,
		// Pdeathsig: should this process die without stopping the command
		// (SIGKILL), the kernel kills the command too. It fires when the
		// starting thread ends, so that thread stays locked to this
		// goroutine until the command is gone.
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL},
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	err = cmd.Start()
	// The child has its own copies; ours must go so that readers see EOF.
	_ = outW.Close()
	_ = errW.Close()
	if err != nil {
		return -1, core.Terminal(ReasonCommandFailed, "cannot start the command: "+err.Error())
	}
	pgid := cmd.Process.Pid

	var stderr tail
	var readers sync.WaitGroup
	readers.Go(func() { forward(outR, "stdout: ", logf, nil) })
	readers.Go(func() { forward(errR, "stderr: ", logf, &stderr) })

	signals, waitErr := d.wait(ctx, cmd, pgid)
	// Whatever the command left running in its group must not outlive the
	// run. The group's id cannot be reused while any member exists.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	drain(&readers, outR, errR)

	if len(signals) > 0 {
		msg := "the run was canceled: sent SIGTERM to the command's process group"
		if len(signals) > 1 {
			msg += fmt.Sprintf(", then SIGKILL as it had not exited after %s", d.opts.GracePeriod)
		}
		return -1, core.Terminal(ReasonInterrupted, withTail(msg, stderr.String()), core.CodeInterrupted)
	}
	if waitErr == nil {
		return 0, nil
	}
	var exitErr *osexec.ExitError
	if !errors.As(waitErr, &exitErr) {
		return -1, core.Terminal(ReasonCommandFailed, "waiting for the command: "+waitErr.Error())
	}
	// A command that exits non-zero fails its item at once, as a failed
	// pod fails it in Landscaper's container deployer; only EX_TEMPFAIL
	// asks for a retry.
	code := exitErr.ExitCode()
	if code == exitTempFail {
		return code, core.Transient(ReasonTransientFailure,
			withTail(fmt.Sprintf("exit code %d (temporary failure)", code), stderr.String()))
	}
	desc := fmt.Sprintf("exit code %d", code)
	if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		desc = fmt.Sprintf("terminated by signal %d (%v)", int(ws.Signal()), ws.Signal())
	}
	return code, core.Terminal(ReasonCommandFailed, withTail(desc, stderr.String()))
}

// wait waits for the command, and on cancellation signals its process group:
// SIGTERM first, SIGKILL after the grace period. It returns the signals sent.
func (d *Deployer) wait(ctx context.Context, cmd *osexec.Cmd, pgid int) ([]string, error) {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return nil, err
	case <-ctx.Done():
	}
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	timer := time.NewTimer(d.opts.GracePeriod)
	defer timer.Stop()
	select {
	case err := <-done:
		return []string{"SIGTERM"}, err
	case <-timer.C:
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	return []string{"SIGTERM", "SIGKILL"}, <-done
}

// drain lets the readers finish, but stops them if something outside the
// process group still holds the pipes open.
func drain(readers *sync.WaitGroup, pipes ...*os.File) {
	done := make(chan struct{})
	go func() {
		readers.Wait()
		close(done)
	}()
	select {
	case <-done:
		return
	case <-time.After(pipeDrainTimeout):
	}
	for _, p := range pipes {
		_ = p.SetReadDeadline(time.Now())
	}
	<-done
}

// forward passes r's lines to logf as they arrive and keeps them in t.
func forward(r io.Reader, prefix string, logf func(string), t *tail) {
	br := bufio.NewReaderSize(r, maxLineBytes)
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 {
			line := strings.TrimRight(string(chunk), "\r\n")
			logf(prefix + line)
			if t != nil {
				t.add(line)
			}
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}

// serialized makes logf safe for the two output readers, and a no-op if nil.
func serialized(logf func(string)) func(string) {
	if logf == nil {
		return func(string) {}
	}
	var mu sync.Mutex
	return func(msg string) {
		mu.Lock()
		defer mu.Unlock()
		logf(msg)
	}
}

// tail keeps the last lines of a stream within fixed bounds.
type tail struct {
	lines []string
}

func (t *tail) add(line string) {
	if len(line) > maxTailBytes {
		line = line[len(line)-maxTailBytes:]
	}
	if len(t.lines) == maxTailLines {
		copy(t.lines, t.lines[1:])
		t.lines = t.lines[:maxTailLines-1]
	}
	t.lines = append(t.lines, line)
}

func (t *tail) String() string {
	start, size := len(t.lines), 0
	for start > 0 && size+len(t.lines[start-1]) <= maxTailBytes {
		start--
		size += len(t.lines[start]) + 1
	}
	// Cutting long lines may have split a UTF-8 sequence.
	return strings.ToValidUTF8(strings.TrimSpace(strings.Join(t.lines[start:], "\n")), "")
}

func withTail(msg, stderr string) string {
	if stderr == "" {
		return msg
	}
	return msg + "; stderr:\n" + stderr
}
