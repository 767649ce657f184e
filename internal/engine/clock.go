package engine

import "time"

// Clock is the engine's source of time, replaceable in tests so timeouts
// and backoff can be exercised without waiting.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
	// AfterFunc calls f once d has passed; stop cancels it.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

// RealClock is the wall clock.
type RealClock struct{}

func (RealClock) Now() time.Time                         { return time.Now() }
func (RealClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
func (RealClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}
