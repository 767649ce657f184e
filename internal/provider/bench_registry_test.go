package provider

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/ocitest"
)

// BenchmarkInstallationRegistry compares, for the 1,000-item blueprint
// tree of testdata/installation/bench (50 sub-installations × 20 mock
// items), a create plan (validate + plan) with the component from its
// constructor file, and from a loopback registry with a cold cache (every
// descriptor and blueprint downloaded) and a warm one (one manifest
// request per version, nothing downloaded). Goals: cold within 2× of the
// constructor plan, warm within 10 %.
func BenchmarkInstallationRegistry(b *testing.B) {
	cc, err := filepath.Abs(filepath.Join("testdata", "installation", "bench", "component-constructor.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	reg := ocitest.Start(b, ocitest.Options{})
	acctest.Push(b, reg, ocitest.OCM, acctest.Publish(b, false, cc))
	repo := map[string]any{"type": "OCIRegistry", "baseUrl": reg.Host + "/ocm"}
	component := func(fromRegistry bool) map[string]any {
		c := map[string]any{"name": "example.com/bench", "version": "v1.0.0"}
		if !fromRegistry {
			c["constructors"] = []string{cc}
		}
		return c
	}
	plan := func(b *testing.B, p *Provider, fromRegistry bool) {
		b.Helper()
		s := &server{routes: p.routes()}
		x := p.installations
		obj := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"subs": tftypes.Number, "items": tftypes.Number, "tag": tftypes.String}}
		config := fill(x.t, map[string]any{
			"name":      "bench",
			"blueprint": map[string]any{"ref": "root"},
			"component": component(fromRegistry),
			"imports": tftypes.NewValue(obj, map[string]tftypes.Value{
				"subs": tftypes.NewValue(tftypes.Number, 50), "items": tftypes.NewValue(tftypes.Number, 20), "tag": tftypes.NewValue(tftypes.String, "a")}),
		})
		dv, err := tfprotov6.NewDynamicValue(x.t, config)
		if err != nil {
			b.Fatal(err)
		}
		null, _ := tfprotov6.NewDynamicValue(x.t, tftypes.NewValue(x.t, nil))
		ctx := context.Background()
		_, _ = s.ValidateResourceConfig(ctx, &tfprotov6.ValidateResourceConfigRequest{TypeName: installationType, Config: &dv})
		r, _ := s.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{TypeName: installationType, PriorState: &null, ProposedNewState: &dv, Config: &dv})
		if len(r.Diagnostics) > 0 {
			b.Fatal(r.Diagnostics[0].Summary, ": ", r.Diagnostics[0].Detail)
		}
	}
	provider := func(b *testing.B, cacheDir string) *Provider {
		b.Helper()
		p := newProvider("test")
		p.engine.Store(engine.New(p.deployers, DefaultMaxParallelism))
		c, err := newComponents(componentsConfig{repositoryContext: repo, cacheDir: cacheDir}, "test")
		if err != nil {
			b.Fatal(err)
		}
		p.components.Store(c)
		return p
	}
	b.Run("constructor", func(b *testing.B) {
		dir := b.TempDir()
		for range b.N {
			// A new provider process, as every terraform command starts.
			b.StopTimer()
			p := provider(b, dir)
			b.StartTimer()
			plan(b, p, false)
		}
	})
	b.Run("registry-cold", func(b *testing.B) {
		for range b.N {
			// A new provider process with an empty cache.
			b.StopTimer()
			p := provider(b, b.TempDir())
			b.StartTimer()
			plan(b, p, true)
		}
	})
	b.Run("registry-warm", func(b *testing.B) {
		dir := b.TempDir()
		plan(b, provider(b, dir), true)
		reg.ResetCounts()
		for range b.N {
			// A new provider process (as every terraform command starts
			// one) with the cache the first one filled.
			b.StopTimer()
			p := provider(b, dir)
			b.StartTimer()
			plan(b, p, true)
		}
		n := reg.Counts()
		b.ReportMetric(float64(n["manifest"])/float64(b.N), "manifests/op")
		b.ReportMetric(float64(n["blob"])/float64(b.N), "blobs/op")
	})
}
