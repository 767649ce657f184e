//go:build unix

// Command testenv-serve runs the test environment's control plane (etcd,
// kube-apiserver, kube-controller-manager) and, with -landscaper, Landscaper's
// own controllers against it, until it gets SIGTERM or SIGINT; then it stops
// them all. It is what `make cluster` and `make landscaper-up` start in the
// background (scripts/testenv-up.sh), for people who want a cluster, or a
// real Landscaper, to try things against.
//
//	testenv-serve -dir DIR [-landscaper]
//
// DIR receives the control plane's data and logs (cluster/), Landscaper's
// (landscaper/), a kubeconfig of an admin (kubeconfig) and, once everything
// is ready, the file ready; it must not hold an environment already. The
// binaries come from $LANDSCAPER_TESTENV_BIN and $LANDSCAPER_CONTROLLERS_BIN,
// else from the repository's bin/, built when missing: run it inside the
// repository.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/testenv"
)

func main() {
	dir := flag.String("dir", "", "directory for data, logs and the kubeconfig (required)")
	withLandscaper := flag.Bool("landscaper", false, "also run Landscaper's controllers")
	flag.Parse()
	if *dir == "" || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*dir, *withLandscaper); err != nil {
		fmt.Fprintf(os.Stderr, "testenv-serve: %v\n", err)
		os.Exit(1)
	}
}

func run(dir string, withLandscaper bool) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-signals
		cancel()
	}()

	start := time.Now()
	env, err := testenv.Start(ctx, testenv.Options{Dir: filepath.Join(dir, "cluster"), KeepDir: true})
	if err != nil {
		return err
	}
	fmt.Printf("control plane ready after %s: %s\n", time.Since(start).Round(time.Millisecond), env.Host())
	if withLandscaper {
		ls, err := testenv.StartLandscaper(ctx, env, testenv.LandscaperOptions{Dir: filepath.Join(dir, "landscaper")})
		if err != nil {
			return errors.Join(err, env.Stop())
		}
		fmt.Printf("Landscaper ready after %s; logs in %s\n", time.Since(start).Round(time.Millisecond), filepath.Join(ls.Dir(), "logs"))
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	ready := filepath.Join(dir, "ready")
	err = errors.Join(os.WriteFile(kubeconfig, []byte(env.Kubeconfig()), 0o600),
		os.WriteFile(ready, []byte("KUBECONFIG="+kubeconfig+"\n"), 0o600))
	if err == nil {
		fmt.Printf("KUBECONFIG=%s\n", kubeconfig)
		<-ctx.Done()
		fmt.Println("stopping")
	}
	if rerr := os.Remove(ready); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
		err = errors.Join(err, rerr)
	}
	return errors.Join(err, env.Stop())
}
