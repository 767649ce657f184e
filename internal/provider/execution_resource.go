package provider

import (
	"context"
	"encoding/json"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

var (
	_ resource.ResourceWithValidateConfig = (*executionResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*executionResource)(nil)
	_ resource.ResourceWithImportState    = (*executionResource)(nil)
)

// executionResource is landscaper_execution for the framework: its schema,
// import, and adapters from the framework's requests to executions. In
// production the provider's protocol layer serves the hot RPCs without
// the framework (protocol.go); these adapters serve plain framework
// servers and keep both paths one implementation.
type executionResource struct {
	x *executions
}

func (r *executionResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_execution"
}

func (r *executionResource) ValidateConfig(_ context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	resp.Diagnostics.Append(diagnostics(r.x.validate(req.Config.Raw))...)
}

func (r *executionResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	planned, replace, ps := r.x.plan(req.State.Raw, req.Plan.Raw, getPrivate(ctx, req.Private, &resp.Diagnostics))
	resp.Diagnostics.Append(diagnostics(ps)...)
	resp.Plan.Raw = planned
	for _, p := range replace {
		resp.RequiresReplace = append(resp.RequiresReplace, frameworkPath(p))
	}
}

func (r *executionResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	null := tftypes.NewValue(r.x.vt.resource, nil)
	state, priv, ps := r.x.apply(ctx, null, req.Plan.Raw, nil)
	resp.State.Raw = state
	setPrivate(ctx, resp.Private, priv, &resp.Diagnostics)
	resp.Diagnostics.Append(diagnostics(ps)...)
}

func (r *executionResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	state, priv, ps := r.x.apply(ctx, req.State.Raw, req.Plan.Raw, getPrivate(ctx, req.Private, &resp.Diagnostics))
	resp.State.Raw = state
	setPrivate(ctx, resp.Private, priv, &resp.Diagnostics)
	resp.Diagnostics.Append(diagnostics(ps)...)
}

func (r *executionResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	null := tftypes.NewValue(r.x.vt.resource, nil)
	state, priv, ps := r.x.apply(ctx, req.State.Raw, null, getPrivate(ctx, req.Private, &resp.Diagnostics))
	resp.State.Raw = state
	setPrivate(ctx, resp.Private, priv, &resp.Diagnostics)
	resp.Diagnostics.Append(diagnostics(ps)...)
}

// Read has nothing to refresh: everything lives in this state.
func (r *executionResource) Read(context.Context, resource.ReadRequest, *resource.ReadResponse) {}

func (r *executionResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("name"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
}

type privateGetter interface {
	GetKey(ctx context.Context, key string) ([]byte, diag.Diagnostics)
}

type privateSetter interface {
	SetKey(ctx context.Context, key string, value []byte) diag.Diagnostics
}

// getPrivate returns the framework's private state in its wire format,
// which is the format executions reads.
func getPrivate(ctx context.Context, p privateGetter, diags *diag.Diagnostics) []byte {
	raw, d := p.GetKey(ctx, privateKey)
	diags.Append(d...)
	if len(raw) == 0 {
		return nil
	}
	out, _ := json.Marshal(map[string][]byte{privateKey: raw})
	return out
}

func setPrivate(ctx context.Context, p privateSetter, private []byte, diags *diag.Diagnostics) {
	raw, err := privateValue(private)
	if err != nil || raw == nil {
		return
	}
	diags.Append(p.SetKey(ctx, privateKey, raw)...)
}

func diagnostics(ps problems) diag.Diagnostics {
	var diags diag.Diagnostics
	for _, p := range ps {
		if p.path == nil {
			diags.AddError(p.summary, p.detail)
		} else {
			diags.AddAttributeError(frameworkPath(p.path), p.summary, p.detail)
		}
	}
	return diags
}

func frameworkPath(p *tftypes.AttributePath) path.Path {
	out := path.Empty()
	for _, s := range p.Steps() {
		switch s := s.(type) {
		case tftypes.AttributeName:
			out = out.AtName(string(s))
		case tftypes.ElementKeyString:
			out = out.AtMapKey(string(s))
		case tftypes.ElementKeyInt:
			out = out.AtListIndex(int(s))
		}
	}
	return out
}
