package provider

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// Ending the lifetime stops tracked jobs and waits for them.
func TestLifetimeEndStopsJobs(t *testing.T) {
	l := newLifetime()
	ctx, done := l.track(context.Background())
	var finished atomic.Bool
	go func() {
		<-ctx.Done()
		finished.Store(true)
		done()
	}()
	l.end(time.Minute)
	if !finished.Load() {
		t.Fatal("end returned before the job finished")
	}
	// A job that ends on its own leaves nothing behind.
	l2 := newLifetime()
	ctx2, done2 := l2.track(context.Background())
	done2()
	if ctx2.Err() == nil {
		t.Fatal("done did not release the job's context")
	}
	l2.end(time.Minute)
}

// The watcher fires once the parent changes, not before.
func TestWatchParent(t *testing.T) {
	var ppid atomic.Int64
	ppid.Store(100)
	fired := make(chan struct{})
	go watchParent(func() int { return int(ppid.Load()) }, time.Millisecond, func() { close(fired) })
	select {
	case <-fired:
		t.Fatal("fired while the parent lives")
	case <-time.After(20 * time.Millisecond):
	}
	ppid.Store(1)
	<-fired
}
