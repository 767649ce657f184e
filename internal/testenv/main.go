//go:build unix

package testenv

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"
)

// setupTimeout bounds Main's Start, a cold build of the binaries included,
// which takes several minutes on a small machine.
const setupTimeout = 30 * time.Minute

// Main starts one environment for a test package, stores it in *env, runs
// the tests and stops the environment. Use it from TestMain:
//
//	var env *testenv.Env
//
//	func TestMain(m *testing.M) { os.Exit(testenv.Main(m, &env)) }
//
// If the environment cannot start, no test runs and the package fails with
// the reason on stderr: a missing environment is a failure, never a skip.
func Main(m *testing.M, env **Env) int {
	return MainWith(m, env, Options{})
}

// MainWith is Main with explicit options.
func MainWith(m *testing.M, env **Env, opts Options) int {
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	e, err := Start(ctx, opts)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: testenv: %v\n", err)
		return 1
	}
	*env = e
	code := m.Run()
	if err := e.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "testenv: stop: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}
