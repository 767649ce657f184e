package provider

import (
	"context"
	"os"
	"sync"
	"time"
)

// Terraform starts the provider as its child and stops it when done. When
// terraform itself is killed (SIGKILL: an OOM killer, a CI timeout), nobody
// stops the provider: go-plugin keeps serving a socket no one will use, and
// deploy items would go on running. The gRPC request contexts usually end
// with the connection, but the process would linger. lifetime closes that
// gap: once the provider is orphaned, every running job is stopped (its
// items get their usual SIGTERM, then SIGKILL after the grace period) and
// the process exits when they are done.

// lifetime is the provider process's own context and its running jobs.
type lifetime struct {
	ctx    context.Context
	cancel context.CancelFunc
	jobs   sync.WaitGroup
}

func newLifetime() *lifetime {
	ctx, cancel := context.WithCancel(context.Background())
	return &lifetime{ctx: ctx, cancel: cancel}
}

// process is the lifetime of this provider process.
var process = newLifetime()

// track derives a job's context from ctx that also ends with the process,
// and counts the job as running until done is called.
func (l *lifetime) track(ctx context.Context) (context.Context, func()) {
	l.jobs.Add(1)
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(l.ctx, cancel)
	return ctx, func() {
		stop()
		cancel()
		l.jobs.Done()
	}
}

// end stops every running job and waits for them, at most grace.
func (l *lifetime) end(grace time.Duration) {
	l.cancel()
	done := make(chan struct{})
	go func() { l.jobs.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace):
	}
}

// watchParent calls orphaned once parent() no longer returns what it
// returned at the start: the process that started this one has died and
// this one was handed to another.
func watchParent(parent func() int, every time.Duration, orphaned func()) {
	start := parent()
	for range time.Tick(every) {
		if parent() != start {
			orphaned()
			return
		}
	}
}

// ExitWhenOrphaned makes the provider stop its jobs and exit once the
// process that started it (terraform) has died. Only the provider binary
// calls it; tests serve the provider inside their own process.
func ExitWhenOrphaned() {
	go watchParent(os.Getppid, 500*time.Millisecond, func() {
		// Long enough for an exec item's SIGTERM, grace period and SIGKILL.
		process.end(30 * time.Second)
		os.Exit(1)
	})
}
