package provider

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

const executionType = "landscaper_execution"

// NewServer returns the provider's protocol server: the framework serves
// schemas, provider configuration and import, while the hot RPCs of
// landscaper_execution go straight to executions on tftypes values.
//
// Why: an execution of a few hundred items is thousands of nested values,
// and the framework's generic per-value processing (schema lookups per
// value, reflection, defaults and plan modifiers per element) took around
// a second per RPC where the work itself takes milliseconds. Everything
// the framework did for this resource is done in executions instead.
func NewServer(version string) func() (tfprotov6.ProviderServer, error) {
	return func() (tfprotov6.ProviderServer, error) {
		p := newProvider(version)
		fw, err := providerserver.NewProtocol6WithError(p)()
		if err != nil {
			return nil, err
		}
		return &server{ProviderServer: fw, x: p.executions}, nil
	}
}

type server struct {
	tfprotov6.ProviderServer
	x *executions
}

func (s *server) decode(v *tfprotov6.DynamicValue) (tftypes.Value, []*tfprotov6.Diagnostic) {
	if v == nil {
		return tftypes.NewValue(s.x.vt.resource, nil), nil
	}
	val, err := v.Unmarshal(s.x.vt.resource)
	if err != nil {
		return val, errorDiagnostics("Cannot decode value", err)
	}
	return val, nil
}

func (s *server) encode(v tftypes.Value) (*tfprotov6.DynamicValue, []*tfprotov6.Diagnostic) {
	dv, err := tfprotov6.NewDynamicValue(s.x.vt.resource, v)
	if err != nil {
		return nil, errorDiagnostics("Cannot encode value", err)
	}
	return &dv, nil
}

func (s *server) ValidateResourceConfig(ctx context.Context, req *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, error) {
	if req.TypeName != executionType {
		return s.ProviderServer.ValidateResourceConfig(ctx, req)
	}
	cfg, diags := s.decode(req.Config)
	if diags == nil {
		diags = protocolDiagnostics(s.x.validate(cfg))
	}
	return &tfprotov6.ValidateResourceConfigResponse{Diagnostics: diags}, nil
}

func (s *server) UpgradeResourceState(ctx context.Context, req *tfprotov6.UpgradeResourceStateRequest) (*tfprotov6.UpgradeResourceStateResponse, error) {
	if req.TypeName != executionType || req.Version != 0 || req.RawState == nil || req.RawState.JSON == nil {
		return s.ProviderServer.UpgradeResourceState(ctx, req)
	}
	// Schema version 0 is the only one. State with exactly the schema's
	// attributes goes back as it is: Terraform accepts JSON here.
	if s.x.vt.hasExactAttributes(req.RawState.JSON) {
		return &tfprotov6.UpgradeResourceStateResponse{UpgradedState: &tfprotov6.DynamicValue{JSON: req.RawState.JSON}}, nil
	}
	v, err := req.RawState.UnmarshalWithOpts(s.x.vt.resource, tfprotov6.UnmarshalOpts{
		ValueFromJSONOpts: tftypes.ValueFromJSONOpts{IgnoreUndefinedAttributes: true},
	})
	if err != nil {
		return &tfprotov6.UpgradeResourceStateResponse{Diagnostics: errorDiagnostics("Cannot read state", err)}, nil
	}
	dv, diags := s.encode(v)
	return &tfprotov6.UpgradeResourceStateResponse{UpgradedState: dv, Diagnostics: diags}, nil
}

// ReadResource returns the state as it is: everything lives in it.
func (s *server) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	if req.TypeName != executionType {
		return s.ProviderServer.ReadResource(ctx, req)
	}
	return &tfprotov6.ReadResourceResponse{NewState: req.CurrentState, Private: req.Private}, nil
}

func (s *server) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	if req.TypeName != executionType {
		return s.ProviderServer.PlanResourceChange(ctx, req)
	}
	// The common case, a plan with nothing to do: the configuration leaves
	// the state as it is (Terraform encodes equal values to equal bytes)
	// and the last job succeeded, so nothing will run and the planned
	// state is the prior state. executions.plan would compute the same.
	if req.PriorState != nil && req.ProposedNewState != nil && len(req.PriorState.MsgPack) > 0 &&
		bytes.Equal(req.PriorState.MsgPack, req.ProposedNewState.MsgPack) && settled(req.PriorPrivate) {
		return &tfprotov6.PlanResourceChangeResponse{PlannedState: req.PriorState, PlannedPrivate: req.PriorPrivate}, nil
	}
	prior, d1 := s.decode(req.PriorState)
	proposed, d2 := s.decode(req.ProposedNewState)
	if diags := append(d1, d2...); diags != nil {
		return &tfprotov6.PlanResourceChangeResponse{Diagnostics: diags}, nil
	}
	planned, replace, ps := s.x.plan(prior, proposed, req.PriorPrivate)
	dv, diags := s.encode(planned)
	// Passed on even when planning a create: for a replacement, Terraform
	// hands this private state to the delete of the replaced object too.
	return &tfprotov6.PlanResourceChangeResponse{
		PlannedState:    dv,
		RequiresReplace: replace,
		PlannedPrivate:  req.PriorPrivate,
		Diagnostics:     append(diags, protocolDiagnostics(ps)...),
	}, nil
}

func (s *server) ApplyResourceChange(ctx context.Context, req *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	if req.TypeName != executionType {
		return s.ProviderServer.ApplyResourceChange(ctx, req)
	}
	prior, d1 := s.decode(req.PriorState)
	planned, d2 := s.decode(req.PlannedState)
	if diags := append(d1, d2...); diags != nil {
		return &tfprotov6.ApplyResourceChangeResponse{NewState: req.PriorState, Diagnostics: diags}, nil
	}
	state, priv, ps := s.x.apply(ctx, prior, planned, req.PlannedPrivate)
	dv, diags := s.encode(state)
	return &tfprotov6.ApplyResourceChangeResponse{
		NewState:    dv,
		Private:     priv,
		Diagnostics: append(diags, protocolDiagnostics(ps)...),
	}, nil
}

func protocolDiagnostics(ps problems) []*tfprotov6.Diagnostic {
	var out []*tfprotov6.Diagnostic
	for _, p := range ps {
		out = append(out, &tfprotov6.Diagnostic{
			Severity: tfprotov6.DiagnosticSeverityError, Summary: p.summary, Detail: p.detail, Attribute: p.path,
		})
	}
	return out
}

func errorDiagnostics(summary string, err error) []*tfprotov6.Diagnostic {
	return []*tfprotov6.Diagnostic{{Severity: tfprotov6.DiagnosticSeverityError, Summary: summary, Detail: err.Error()}}
}

// hasExactAttributes reports whether stored state JSON has exactly the
// schema's attributes, so it can be handed back without decoding.
func (vt valueTypes) hasExactAttributes(stateJSON []byte) bool {
	var top map[string]json.RawMessage
	if json.Unmarshal(stateJSON, &top) != nil || len(top) != len(vt.resource.AttributeTypes) {
		return false
	}
	for name := range vt.resource.AttributeTypes {
		if _, ok := top[name]; !ok {
			return false
		}
	}
	return true
}
