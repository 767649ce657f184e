//go:build unix

package testenv

import (
	"context"
	"errors"
	"sync"
	"testing"
)

// SharedLandscaper is a control plane of its own with Landscaper running
// against it, started by the first test of a package that asks for it and
// shared by the package's tests; a package whose tests never ask starts
// nothing. Tests keep apart by namespace. Stop it in TestMain:
//
//	var landscaper testenv.SharedLandscaper
//
//	func TestMain(m *testing.M) {
//		code := m.Run()
//		if err := landscaper.Stop(); err != nil && code == 0 {
//			code = 1
//		}
//		os.Exit(code)
//	}
//
//	func TestSomething(t *testing.T) {
//		env, ls := landscaper.Get(t)
//		...
//	}
type SharedLandscaper struct {
	// Options and LandscaperOptions configure the start; set them before the
	// first Get.
	Options           Options
	LandscaperOptions LandscaperOptions

	once sync.Once
	mu   sync.Mutex
	env  *Env
	ls   *Landscaper
	err  error
}

// Get starts the control plane and Landscaper on first use and returns them,
// watched for t (see Landscaper.Watch). If they cannot start, t fails, and
// so does every later test that asks.
func (s *SharedLandscaper) Get(t testing.TB) (*Env, *Landscaper) {
	t.Helper()
	s.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
		defer cancel()
		env, err := Start(ctx, s.Options)
		if err != nil {
			s.err = err
			return
		}
		ls, err := StartLandscaper(ctx, env, s.LandscaperOptions)
		if err != nil {
			s.err = errors.Join(err, env.Stop())
			return
		}
		s.mu.Lock()
		s.env, s.ls = env, ls
		s.mu.Unlock()
	})
	if s.err != nil {
		t.Fatalf("testenv with Landscaper: %v", s.err)
	}
	s.ls.Watch(t)
	return s.env, s.ls
}

// Stop stops Landscaper and the control plane if Get started them.
func (s *SharedLandscaper) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.env == nil {
		return nil
	}
	err := s.env.Stop()
	s.env, s.ls = nil, nil
	return err
}
