//go:build unix

package manifest

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
)

// benchItems builds n items of m ConfigMaps each in a fresh namespace.
func benchItems(b *testing.B, n, m int) []*item {
	t := &testing.T{}
	ns := fmt.Sprintf("bench-%d", seq.Add(1))
	create(t, "apiVersion: v1\nkind: Namespace\nmetadata: {name: "+ns+"}\n")
	items := make([]*item, n)
	for i := range items {
		var sb strings.Builder
		for j := range m {
			sb.WriteString(cm(ns, fmt.Sprintf("i%d-c%d", i, j), fmt.Sprintf("{k: v%d}", j)))
		}
		items[i] = newItem(t, config("manifests:"+sb.String()))
	}
	if t.Failed() {
		b.Fatal("setup failed")
	}
	return items
}

func parallel(b *testing.B, items []*item, f func(*item) error) {
	var wg sync.WaitGroup
	errs := make([]error, len(items))
	for i, it := range items {
		wg.Go(func() { errs[i] = f(it) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkApply20x10 measures applying 20 items of 10 ConfigMaps each,
// run concurrently as the engine runs independent items: every iteration
// after the first updates objects that are already in place.
func BenchmarkApply20x10(b *testing.B) {
	items := benchItems(b, 20, 10)
	b.ResetTimer()
	for b.Loop() {
		parallel(b, items, func(it *item) error {
			_, err := it.run(core.OperationReconcile)
			return err
		})
	}
}

// BenchmarkCreateDelete20x10 measures creating and deleting 20 items of 10
// ConfigMaps each.
func BenchmarkCreateDelete20x10(b *testing.B) {
	items := benchItems(b, 20, 10)
	b.ResetTimer()
	for b.Loop() {
		parallel(b, items, func(it *item) error {
			if _, err := it.run(core.OperationReconcile); err != nil {
				return err
			}
			_, err := it.run(core.OperationDelete)
			return err
		})
	}
}

// BenchmarkDrift20x10 measures the no-op drift check of 20 applied items
// of 10 ConfigMaps each, as a refresh runs it.
func BenchmarkDrift20x10(b *testing.B) {
	items := benchItems(b, 20, 10)
	parallel(b, items, func(it *item) error {
		_, err := it.run(core.OperationReconcile)
		return err
	})
	b.ResetTimer()
	for b.Loop() {
		parallel(b, items, func(it *item) error {
			if d := it.drift(); d != "" {
				return fmt.Errorf("unexpected drift: %s", d)
			}
			return nil
		})
	}
}

// BenchmarkDelete200x1 measures deleting 200 items of one ConfigMap each,
// 10 at a time as the engine's default max_parallelism runs them: the
// provider's share of destroying BenchmarkConfigMaps200 (bench/kubernetes).
func BenchmarkDelete200x1(b *testing.B) {
	items := benchItems(b, 200, 1)
	for b.Loop() {
		b.StopTimer()
		parallel(b, items, func(it *item) error {
			_, err := it.run(core.OperationReconcile)
			return err
		})
		b.StartTimer()
		slots := make(chan struct{}, 10)
		parallel(b, items, func(it *item) error {
			slots <- struct{}{}
			defer func() { <-slots }()
			_, err := it.run(core.OperationDelete)
			return err
		})
	}
}
