package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/mock"
)

func benchItem(deps ...string) ItemSpec {
	return ItemSpec{Type: "mock", Config: json.RawMessage(`{}`), DependsOn: deps, Timeout: DefaultTimeout, UpdateOnChangeOnly: true}
}

func chain(n int) map[string]ItemSpec {
	items := make(map[string]ItemSpec, n)
	items["i0"] = benchItem()
	for i := 1; i < n; i++ {
		items[fmt.Sprintf("i%d", i)] = benchItem(fmt.Sprintf("i%d", i-1))
	}
	return items
}

func fanOut(n int) map[string]ItemSpec {
	items := make(map[string]ItemSpec, n)
	items["root"] = benchItem()
	for i := 1; i < n; i++ {
		items[fmt.Sprintf("i%d", i)] = benchItem("root")
	}
	return items
}

// Layered builds layers of width items; each item depends on deg items of
// the layer before, spread over it.
func Layered(layers, width, deg int) map[string]ItemSpec {
	items := make(map[string]ItemSpec, layers*width)
	for l := range layers {
		for w := range width {
			var deps []string
			if l > 0 {
				for k := range deg {
					deps = append(deps, fmt.Sprintf("l%d-%d", l-1, (w+k*width/deg)%width))
				}
			}
			items[fmt.Sprintf("l%d-%d", l, w)] = benchItem(deps...)
		}
	}
	return items
}

// BenchmarkSchedule reports engine overhead per deploy item (ns/item) for
// 10,000 zero-latency items; the target is under 25µs per item. B/op per
// item stays the same from 1,000 to 10,000 items: memory is linear.
func BenchmarkSchedule(b *testing.B) {
	shapes := []struct {
		name  string
		items map[string]ItemSpec
	}{
		{"chain1k", chain(1000)}, // with chain, shows memory is linear in items
		{"chain", chain(10000)},
		{"fanout", fanOut(10000)},
		{"layered100x100", Layered(100, 100, 3)},
	}
	for _, s := range shapes {
		b.Run(s.name, func(b *testing.B) {
			reg := deployer.NewRegistry()
			reg.Register(mock.New(), "mock") // zero-latency: no duration set
			e := New(reg, 10)
			ex := Execution{Name: "bench", Items: s.items}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				st := e.Reconcile(context.Background(), ex, Status{}, Run{JobID: "job"})
				if !st.Succeeded() {
					b.Fatalf("phase %s: %v", st.Phase, st.LastError)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(s.items)), "ns/item")
		})
	}
}
