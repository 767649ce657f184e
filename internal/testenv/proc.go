//go:build unix

package testenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
)

// process is one running control-plane binary. Its stdout and stderr go to
// logPath (appended to across restarts), never to the test's output.
type process struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	done    chan struct{} // closed when the process has exited
	waitErr error         // valid after done is closed
}

// startProcess runs bin with args in its own process group. The child is
// killed if the test binary dies, see sysProcAttr.
func startProcess(name, bin string, args []string, logPath string) (*process, error) {
	return startProcessEnv(name, bin, args, nil, logPath)
}

// startProcessEnv is startProcess with the environment env instead of the
// test binary's (nil: the test binary's).
func startProcessEnv(name, bin string, args, env []string, logPath string) (*process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(logFile, "\n==== %s: starting %s %s\n", time.Now().Format(time.RFC3339), bin, strings.Join(args, " "))

	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = sysProcAttr()
	onSpawnThread(func() { err = cmd.Start() })
	if err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{name: name, logPath: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		_ = logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// spawner runs every cmd.Start on one OS thread that never exits. Linux
// sends the parent-death signal when the thread that forked the child ends,
// not the process; a Go runtime thread may end earlier, which would kill a
// control-plane process in the middle of the tests.
var spawner struct {
	once sync.Once
	reqs chan func()
}

func onSpawnThread(f func()) {
	spawner.once.Do(func() {
		spawner.reqs = make(chan func())
		go func() {
			runtime.LockOSThread() // never unlocked: the thread lives as long as the process
			for req := range spawner.reqs {
				req()
			}
		}()
	})
	done := make(chan struct{})
	spawner.reqs <- func() {
		defer close(done)
		f()
	}
	<-done
}

// exited reports whether the process has ended.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM to the process group and escalates to SIGKILL after
// grace. It returns once the process has been reaped.
func (p *process) stop(grace time.Duration) error {
	if p.exited() {
		return nil
	}
	pgid := p.cmd.Process.Pid
	if err := syscall.Kill(-pgid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("terminate %s: %w", p.name, err)
	}
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-p.done:
		return nil
	case <-timer.C:
	}
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill %s: %w", p.name, err)
	}
	<-p.done
	return nil
}

// exitError describes how the process ended, with the tail of its log.
func (p *process) exitError() error {
	return fmt.Errorf("%s exited (%v)%s", p.name, p.waitErr, logTail(p.logPath))
}

// waitReady polls check until it succeeds, the process exits, ctx ends or
// timeout passes. Failures carry the last check error and the log tail, which
// is where the reason (a bad flag, a port in use) usually is.
func (p *process) waitReady(ctx context.Context, timeout time.Duration, check func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ticker := time.NewTicker(100 * time.Millisecond)
	defer ticker.Stop()
	var last error
	for {
		checkCtx, checkCancel := context.WithTimeout(ctx, 5*time.Second)
		last = check(checkCtx)
		checkCancel()
		if last == nil {
			return nil
		}
		select {
		case <-p.done:
			return p.exitError()
		case <-ctx.Done():
			return fmt.Errorf("%s not ready after %s: %w (last check: %v)%s", p.name, timeout, ctx.Err(), last, logTail(p.logPath))
		case <-ticker.C:
		}
	}
}

// tailLines is how much of a log an error carries: enough for a Go panic's
// first frames or a flag error with its usage hint, little enough to read.
const tailLines = 40

// logTail returns the last lines of the log at path, formatted for
// appending to an error message.
func logTail(path string) string {
	tail, err := readTail(path, tailLines)
	if err != nil || tail == "" {
		return ""
	}
	return fmt.Sprintf("\n--- last lines of %s ---\n%s", path, tail)
}

// readTail returns at most n trailing lines of the file, reading no more
// than its last 64 KiB.
func readTail(path string, n int) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer func() { _ = f.Close() }()
	const maxBytes = 64 << 10
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	if st.Size() > maxBytes {
		if _, err := f.Seek(-maxBytes, io.SeekEnd); err != nil {
			return "", err
		}
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return "", err
	}
	return lastLines(data, n), nil
}

// lastLines returns the final n lines of data without a trailing newline.
func lastLines(data []byte, n int) string {
	data = bytes.TrimRight(data, "\n")
	if len(data) == 0 || n <= 0 {
		return ""
	}
	lines := bytes.Split(data, []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}
