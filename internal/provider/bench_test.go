package provider

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
)

// layeredItems is bench/e2e.sh's DAG: layers of width zero-latency mock
// items, each depending on fanIn items of the layer before.
func layeredItems(layers, width, fanIn int) map[string]any {
	items := map[string]any{}
	for l := range layers {
		for w := range width {
			item := map[string]any{"type": "mock"}
			if l > 0 {
				var deps []string
				for k := range fanIn {
					deps = append(deps, fmt.Sprintf("l%d-%d", l-1, (w+k*width/fanIn)%width))
				}
				item["depends_on"] = deps
			}
			items[fmt.Sprintf("l%d-%d", l, w)] = item
		}
	}
	return items
}

// BenchmarkRPC measures the provider's share of terraform plan and apply
// for the 400-item DAG of bench/e2e.sh, at the protocol level: decoding,
// the work, and encoding, without Terraform or process start-up.
func BenchmarkRPC(b *testing.B) {
	ctx := context.Background()
	r := newRPCFixture(b, layeredItems(10, 40, 4))
	s, config, dv, null, create, planned, applied := r.s, r.config, r.dv, r.null, r.create, r.planned, r.applied

	b.Run("validate", func(b *testing.B) {
		for range b.N {
			if r, _ := s.ValidateResourceConfig(ctx, &tfprotov6.ValidateResourceConfigRequest{TypeName: executionType, Config: dv(config)}); len(r.Diagnostics) > 0 {
				b.Fatal(r.Diagnostics[0].Detail)
			}
		}
	})
	b.Run("plan-noop", func(b *testing.B) {
		req := &tfprotov6.PlanResourceChangeRequest{TypeName: executionType, PriorState: applied.NewState,
			ProposedNewState: applied.NewState, Config: dv(config), PriorPrivate: applied.Private}
		for range b.N {
			if r, _ := s.PlanResourceChange(ctx, req); len(r.Diagnostics) > 0 {
				b.Fatal(r.Diagnostics[0].Detail)
			}
		}
	})
	b.Run("plan-create", func(b *testing.B) {
		for range b.N {
			_, _ = s.PlanResourceChange(ctx, create)
		}
	})
	b.Run("apply-create", func(b *testing.B) {
		req := &tfprotov6.ApplyResourceChangeRequest{TypeName: executionType, PriorState: null, PlannedState: planned.PlannedState, Config: dv(config)}
		for range b.N {
			if r, _ := s.ApplyResourceChange(ctx, req); len(r.Diagnostics) > 0 {
				b.Fatal(r.Diagnostics[0].Detail)
			}
		}
	})
}

// rpcFixture is a configured server and one 400-item execution created
// through it, as Terraform would: plan, then apply.
type rpcFixture struct {
	s       *server
	x       *executions
	config  tftypes.Value
	dv      func(tftypes.Value) *tfprotov6.DynamicValue
	null    *tfprotov6.DynamicValue
	create  *tfprotov6.PlanResourceChangeRequest
	planned *tfprotov6.PlanResourceChangeResponse
	applied *tfprotov6.ApplyResourceChangeResponse
}

func newRPCFixture(tb testing.TB, items map[string]any) rpcFixture {
	ctx := context.Background()
	p := newProvider("test")
	p.engine.Store(engine.New(p.deployers, DefaultMaxParallelism))
	r := rpcFixture{s: &server{routes: p.routes()}, x: p.executions}
	r.config = fill(r.x.vt.resource, map[string]any{"name": "dag", "deploy_items": items})
	r.dv = func(v tftypes.Value) *tfprotov6.DynamicValue {
		d, err := tfprotov6.NewDynamicValue(r.x.vt.resource, v)
		if err != nil {
			tb.Fatal(err)
		}
		return &d
	}
	r.null = r.dv(tftypes.NewValue(r.x.vt.resource, nil))
	r.create = &tfprotov6.PlanResourceChangeRequest{TypeName: executionType, PriorState: r.null,
		ProposedNewState: r.dv(r.config), Config: r.dv(r.config)}
	r.planned, _ = r.s.PlanResourceChange(ctx, r.create)
	r.applied, _ = r.s.ApplyResourceChange(ctx, &tfprotov6.ApplyResourceChangeRequest{TypeName: executionType,
		PriorState: r.null, PlannedState: r.planned.PlannedState, Config: r.dv(r.config)})
	if len(r.applied.Diagnostics) > 0 {
		tb.Fatal(r.applied.Diagnostics[0].Detail)
	}
	return r
}

// BenchmarkFrameworkCost keeps on record why landscaper_execution's data
// RPCs are served at the protocol level: the same validate and create plan
// of the 400-item DAG through terraform-plugin-framework's own server
// (which does no work of ours: no deploy item is even looked at) and
// through ours (which validates and plans every item).
func BenchmarkFrameworkCost(b *testing.B) {
	ctx := context.Background()
	r := newRPCFixture(b, layeredItems(10, 40, 4))
	fw, err := providerserver.NewProtocol6WithError(New("test")())()
	if err != nil {
		b.Fatal(err)
	}
	if _, err := fw.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{}); err != nil {
		b.Fatal(err)
	}
	validate := &tfprotov6.ValidateResourceConfigRequest{TypeName: executionType, Config: r.dv(r.config)}
	for _, s := range []struct {
		name string
		srv  tfprotov6.ProviderServer
	}{{"framework", fw}, {"protocol", r.s}} {
		b.Run("validate/"+s.name, func(b *testing.B) {
			for range b.N {
				if resp, _ := s.srv.ValidateResourceConfig(ctx, validate); len(resp.Diagnostics) > 0 {
					b.Fatal(resp.Diagnostics[0].Detail)
				}
			}
		})
		b.Run("plan-create/"+s.name, func(b *testing.B) {
			for range b.N {
				if resp, _ := s.srv.PlanResourceChange(ctx, r.create); len(resp.Diagnostics) > 0 {
					b.Fatal(resp.Diagnostics[0].Detail)
				}
			}
		})
	}
}
