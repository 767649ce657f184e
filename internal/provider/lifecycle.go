package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
)

// jobRun is one apply of a resource, as both resources run it: f is the
// planned value's attributes (the prior's for a destroy), saved its decoded
// private state.
type jobRun[S any] struct {
	ctx     context.Context
	engine  *engine.Engine
	prior   tftypes.Value
	private []byte
	saved   S
	f       map[string]tftypes.Value
}

// failed ends a run before its job started: state stays as it was.
func (r *jobRun[S]) failed(ps problems) (tftypes.Value, []byte, problems) {
	return r.prior, r.private, ps
}

// applyJob is the lifecycle both resources share around their own work:
// the provider must be configured; a create starts without private state
// (Terraform hands over the replaced object's on a replacement); stored
// private state must decode; a null plan is a destroy; and the job runs
// where Ctrl-C reaches it (process.track), bounded by the resource's
// timeout for the operation.
func applyJob[S any](ctx context.Context, e *engine.Engine, prior, planned tftypes.Value, private []byte,
	decode func([]byte) (S, error), apply, destroy func(*jobRun[S]) (tftypes.Value, []byte, problems),
) (tftypes.Value, []byte, problems) {
	var ps problems
	if e == nil {
		ps.add(nil, "Provider not configured", "The landscaper provider was not configured before use.")
		return prior, private, ps
	}
	if prior.IsNull() {
		private = nil
	}
	saved, err := decode(private)
	if err != nil {
		ps.add(nil, "Corrupt private state", err.Error())
		return prior, private, ps
	}
	op, f, run := "update", fields(planned), apply
	switch {
	case planned.IsNull():
		op, f, run = "delete", fields(prior), destroy
	case prior.IsNull():
		op = "create"
	}
	ctx, done := process.track(ctx)
	defer done()
	ctx, cancel := context.WithTimeout(ctx, operationTimeout(f["timeouts"], op))
	defer cancel()
	return run(&jobRun[S]{ctx: ctx, engine: e, prior: prior, private: private, saved: saved, f: f})
}
