package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/lscluster"
)

// protocolResource is a resource whose data RPCs (validate, plan, apply,
// read, state upgrade) are served on tftypes values, below the framework.
// The framework still serves its schema, provider configuration and import.
//
// Why: a resource holding a few hundred deploy items is thousands of nested
// values, and the framework's generic per-value processing (schema lookups
// per value, reflection, defaults and plan modifiers per element) took
// around a second per RPC where the work itself takes milliseconds.
// BenchmarkFrameworkCost keeps that cost on record.
type protocolResource interface {
	// objectType is the resource's Terraform type, from its framework schema.
	objectType() tftypes.Object
	// schemaVersion is the version the framework schema declares.
	schemaVersion() int64
	validate(ctx context.Context, config tftypes.Value) problems
	// settled reports whether private state records a finished, successful
	// job with nothing left to do for config: then a configuration equal to
	// the prior state plans to exactly the prior state. Its problems are
	// warnings the plan must still show.
	settled(ctx context.Context, config *tfprotov6.DynamicValue, private []byte) (bool, problems)
	plan(ctx context.Context, prior, proposed tftypes.Value, priorPrivate []byte) (planned tftypes.Value, replace []*tftypes.AttributePath, ps problems)
	apply(ctx context.Context, prior, planned tftypes.Value, private []byte) (tftypes.Value, []byte, problems)
	read(ctx context.Context, state tftypes.Value, private []byte) (tftypes.Value, []byte, problems)
	// refreshes reports whether read could change anything, judging by
	// private state alone, so a refresh with nothing to look at costs no
	// decoding.
	refreshes(private []byte) bool
}

// writeOnlyResource is a protocolResource with write-only attributes
// (Terraform 1.11, OpenTofu 1.11): Terraform passes their values in the
// configuration at validate, plan and apply, and keeps them nowhere. The
// server hands them to plan and apply inside the proposed and planned
// values, where the resource reads its attributes, and returns them null
// in planned and new state, as the protocol demands.
type writeOnlyResource interface {
	writeOnly() []string
}

// writeOnlyConfig decodes the configuration of a request for the
// write-only attributes of r; a null value when r has none.
func writeOnlyConfig(r protocolResource, config *tfprotov6.DynamicValue) (tftypes.Value, []*tfprotov6.Diagnostic) {
	if _, ok := r.(writeOnlyResource); !ok {
		return tftypes.NewValue(r.objectType(), nil), nil
	}
	return decode(r, config)
}

// withWriteOnly returns v with the write-only attributes of r taken from
// config, or v when r has none or either is null.
func withWriteOnly(r protocolResource, v, config tftypes.Value) tftypes.Value {
	wo, ok := r.(writeOnlyResource)
	if !ok || v.IsNull() || config.IsNull() {
		return v
	}
	f, cf := fields(v), fields(config)
	for _, a := range wo.writeOnly() {
		f[a] = cf[a]
	}
	return tftypes.NewValue(v.Type(), f)
}

// withoutWriteOnly returns v with the write-only attributes of r null.
func withoutWriteOnly(r protocolResource, v tftypes.Value) tftypes.Value {
	wo, ok := r.(writeOnlyResource)
	if !ok || v.IsNull() {
		return v
	}
	f := fields(v)
	t := r.objectType().AttributeTypes
	for _, a := range wo.writeOnly() {
		f[a] = tftypes.NewValue(t[a], nil)
	}
	return tftypes.NewValue(v.Type(), f)
}

// writeOnlyUnsupported reports the write-only attributes a configuration
// sets when the client cannot handle them (Terraform before 1.11).
func writeOnlyUnsupported(r protocolResource, config tftypes.Value, caps *tfprotov6.ValidateResourceConfigClientCapabilities) problems {
	var ps problems
	wo, ok := r.(writeOnlyResource)
	if !ok || caps != nil && caps.WriteOnlyAttributesAllowed {
		return ps
	}
	f := fields(config)
	for _, a := range wo.writeOnly() {
		if v := f[a]; !v.IsKnown() || !v.IsNull() {
			ps.add(attrPath(a), "Write-only attribute not supported", a+" is write-only: it needs Terraform 1.11 "+
				"or later, or OpenTofu 1.11 or later, which keep its value nowhere.")
		}
	}
	return ps
}

// stateUpgrader is implemented by resources whose older state needs more
// than dropping and adding attributes: it rewrites stored state JSON of
// schema version from before it is decoded.
type stateUpgrader interface {
	upgradeJSON(from int64, raw []byte) ([]byte, error)
}

// NewServer returns the provider's protocol server: RPCs of the resources
// in the routing table go to their protocolResource, everything else to
// the framework.
func NewServer(version string) func() (tfprotov6.ProviderServer, error) {
	return func() (tfprotov6.ProviderServer, error) {
		p := newProvider(version)
		fw, err := providerserver.NewProtocol6WithError(p)()
		if err != nil {
			return nil, err
		}
		return &server{ProviderServer: fw, routes: p.routes(), dataRoutes: p.dataRoutes()}, nil
	}
}

type server struct {
	tfprotov6.ProviderServer
	// routes says, by resource type name, which resources are served at
	// the protocol level. It is the one place that decides.
	routes map[string]protocolResource
	// dataRoutes does so for data sources.
	dataRoutes map[string]protocolDataSource
}

// protocolDataSource is a data source served on tftypes values, like a
// protocolResource.
type protocolDataSource interface {
	objectType() tftypes.Object
	validate(ctx context.Context, config tftypes.Value) problems
	read(ctx context.Context, config tftypes.Value) (tftypes.Value, problems)
}

func (s *server) ValidateDataResourceConfig(ctx context.Context, req *tfprotov6.ValidateDataResourceConfigRequest) (*tfprotov6.ValidateDataResourceConfigResponse, error) {
	d, ok := s.dataRoutes[req.TypeName]
	if !ok {
		return s.ProviderServer.ValidateDataResourceConfig(ctx, req)
	}
	cfg, err := req.Config.Unmarshal(d.objectType())
	if err != nil {
		return &tfprotov6.ValidateDataResourceConfigResponse{Diagnostics: errorDiagnostics("Cannot decode value", err)}, nil
	}
	return &tfprotov6.ValidateDataResourceConfigResponse{Diagnostics: d.validate(ctx, cfg).protocol()}, nil
}

func (s *server) ReadDataSource(ctx context.Context, req *tfprotov6.ReadDataSourceRequest) (*tfprotov6.ReadDataSourceResponse, error) {
	d, ok := s.dataRoutes[req.TypeName]
	if !ok {
		return s.ProviderServer.ReadDataSource(ctx, req)
	}
	cfg, err := req.Config.Unmarshal(d.objectType())
	if err != nil {
		return &tfprotov6.ReadDataSourceResponse{Diagnostics: errorDiagnostics("Cannot decode value", err)}, nil
	}
	state, ps := d.read(ctx, cfg)
	if ps.errors() {
		return &tfprotov6.ReadDataSourceResponse{Diagnostics: ps.protocol()}, nil
	}
	dv, err := tfprotov6.NewDynamicValue(d.objectType(), state)
	if err != nil {
		return &tfprotov6.ReadDataSourceResponse{Diagnostics: append(ps.protocol(), errorDiagnostics("Cannot encode value", err)...)}, nil
	}
	return &tfprotov6.ReadDataSourceResponse{State: &dv, Diagnostics: ps.protocol()}, nil
}

func decode(r protocolResource, v *tfprotov6.DynamicValue) (tftypes.Value, []*tfprotov6.Diagnostic) {
	if v == nil {
		return tftypes.NewValue(r.objectType(), nil), nil
	}
	val, err := v.Unmarshal(r.objectType())
	if err != nil {
		return val, errorDiagnostics("Cannot decode value", err)
	}
	return val, nil
}

func encode(r protocolResource, v tftypes.Value) (*tfprotov6.DynamicValue, []*tfprotov6.Diagnostic) {
	dv, err := tfprotov6.NewDynamicValue(r.objectType(), v)
	if err != nil {
		return nil, errorDiagnostics("Cannot encode value", err)
	}
	return &dv, nil
}

func (s *server) ValidateResourceConfig(ctx context.Context, req *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, error) {
	r, ok := s.routes[req.TypeName]
	if !ok {
		return s.ProviderServer.ValidateResourceConfig(ctx, req)
	}
	cfg, diags := decode(r, req.Config)
	if diags == nil {
		diags = append(writeOnlyUnsupported(r, cfg, req.ClientCapabilities), r.validate(ctx, cfg)...).protocol()
	}
	return &tfprotov6.ValidateResourceConfigResponse{Diagnostics: diags}, nil
}

// UpgradeResourceState reads state of this or an earlier schema version.
// Most versions only added attributes, which decode as null, so one path
// serves them: decode, dropping attributes the schema no longer has, and
// encode; a stateUpgrader rewrites the rest first.
func (s *server) UpgradeResourceState(ctx context.Context, req *tfprotov6.UpgradeResourceStateRequest) (*tfprotov6.UpgradeResourceStateResponse, error) {
	r, ok := s.routes[req.TypeName]
	if !ok || req.RawState == nil || req.RawState.JSON == nil {
		return s.ProviderServer.UpgradeResourceState(ctx, req)
	}
	if req.Version > r.schemaVersion() {
		return &tfprotov6.UpgradeResourceStateResponse{Diagnostics: errorDiagnostics("State written by a newer provider",
			fmt.Errorf("the state has schema version %d; this provider knows versions up to %d", req.Version, r.schemaVersion()))}, nil
	}
	// State of the current version with exactly the schema's attributes
	// goes back as it is: Terraform accepts JSON here.
	if req.Version == r.schemaVersion() && hasExactAttributes(r.objectType(), req.RawState.JSON) {
		return &tfprotov6.UpgradeResourceStateResponse{UpgradedState: &tfprotov6.DynamicValue{JSON: req.RawState.JSON}}, nil
	}
	if u, ok := r.(stateUpgrader); ok && req.Version < r.schemaVersion() {
		raw, err := u.upgradeJSON(req.Version, req.RawState.JSON)
		if err != nil {
			return &tfprotov6.UpgradeResourceStateResponse{Diagnostics: errorDiagnostics("Cannot upgrade state", err)}, nil
		}
		req.RawState = &tfprotov6.RawState{JSON: raw}
	}
	v, err := req.RawState.UnmarshalWithOpts(r.objectType(), tfprotov6.UnmarshalOpts{
		ValueFromJSONOpts: tftypes.ValueFromJSONOpts{IgnoreUndefinedAttributes: true},
	})
	if err != nil {
		return &tfprotov6.UpgradeResourceStateResponse{Diagnostics: errorDiagnostics("Cannot read state", err)}, nil
	}
	dv, diags := encode(r, v)
	return &tfprotov6.UpgradeResourceStateResponse{UpgradedState: dv, Diagnostics: diags}, nil
}

// ImportResourceState imports by name, which is also the ID, below the
// framework: the framework would build the state from the schema's type,
// and the installation's carries optional-attribute markers that values
// must not (see optionalAttrsObjectType).
func (s *server) ImportResourceState(ctx context.Context, req *tfprotov6.ImportResourceStateRequest) (*tfprotov6.ImportResourceStateResponse, error) {
	r, ok := s.routes[req.TypeName]
	if !ok {
		return s.ProviderServer.ImportResourceState(ctx, req)
	}
	id := req.ID
	if req.Identity != nil {
		var ps problems
		if id, ps = importIdentityID(r, req.Identity); ps.errors() {
			return &tfprotov6.ImportResourceStateResponse{Diagnostics: ps.protocol()}, nil
		}
	}
	if x, ok := r.(*installations); ok && isLandscaperID(id) {
		v, priv, ps := x.importLandscaper(ctx, id)
		if ps.errors() {
			return &tfprotov6.ImportResourceStateResponse{Diagnostics: ps.protocol()}, nil
		}
		dv, diags := encode(r, v)
		if diags != nil {
			return &tfprotov6.ImportResourceStateResponse{Diagnostics: append(ps.protocol(), diags...)}, nil
		}
		parsed, _ := lscluster.ParseID(id)
		return &tfprotov6.ImportResourceStateResponse{Diagnostics: ps.protocol(),
			ImportedResources: []*tfprotov6.ImportedResource{{TypeName: req.TypeName, State: dv, Private: priv,
				Identity: identityData(r, v, x.landscaperIdentity(parsed))}}}, nil
	}
	t := r.objectType()
	attrs := make(map[string]tftypes.Value, len(t.AttributeTypes))
	for n, at := range t.AttributeTypes {
		attrs[n] = tftypes.NewValue(at, nil)
	}
	attrs["name"] = tftypes.NewValue(tftypes.String, id)
	attrs["id"] = tftypes.NewValue(tftypes.String, id)
	v := tftypes.NewValue(t, attrs)
	dv, diags := encode(r, v)
	if diags != nil {
		return &tfprotov6.ImportResourceStateResponse{Diagnostics: diags}, nil
	}
	return &tfprotov6.ImportResourceStateResponse{ImportedResources: []*tfprotov6.ImportedResource{{TypeName: req.TypeName, State: dv,
		Identity: keptIdentity(r, nil, v)}}}, nil
}

func (s *server) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	r, ok := s.routes[req.TypeName]
	if !ok {
		return s.ProviderServer.ReadResource(ctx, req)
	}
	if !r.refreshes(req.Private) {
		// Not decoded at all: an identity Terraform does not hold yet
		// comes with the next response that decodes the state.
		return &tfprotov6.ReadResourceResponse{NewState: req.CurrentState, Private: req.Private, NewIdentity: req.CurrentIdentity}, nil
	}
	cur, diags := decode(r, req.CurrentState)
	if diags != nil {
		return &tfprotov6.ReadResourceResponse{NewState: req.CurrentState, Private: req.Private, NewIdentity: req.CurrentIdentity,
			Diagnostics: diags}, nil
	}
	state, priv, ps := r.read(ctx, cur, req.Private)
	identity := keptIdentity(r, req.CurrentIdentity, state)
	if state.Equal(cur) && bytes.Equal(priv, req.Private) {
		return &tfprotov6.ReadResourceResponse{NewState: req.CurrentState, Private: req.Private, NewIdentity: identity,
			Diagnostics: ps.protocol()}, nil
	}
	dv, diags := encode(r, state)
	return &tfprotov6.ReadResourceResponse{NewState: dv, Private: priv, NewIdentity: identity, Diagnostics: append(diags, ps.protocol()...)}, nil
}

func (s *server) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	r, ok := s.routes[req.TypeName]
	if !ok {
		return s.ProviderServer.PlanResourceChange(ctx, req)
	}
	// The common case, a plan with nothing to do: the configuration leaves
	// the state as it is (Terraform encodes equal values to equal bytes)
	// and the last job succeeded, so nothing will run and the planned
	// state is the prior state. The full plan would compute the same.
	if req.PriorState != nil && req.ProposedNewState != nil && len(req.PriorState.MsgPack) > 0 &&
		bytes.Equal(req.PriorState.MsgPack, req.ProposedNewState.MsgPack) {
		// Prior and proposed may hold a thousand rendered items, and are
		// not decoded at all.
		if ok, ps := r.settled(ctx, req.Config, req.PriorPrivate); ok {
			return &tfprotov6.PlanResourceChangeResponse{PlannedState: req.PriorState, PlannedPrivate: req.PriorPrivate,
				PlannedIdentity: req.PriorIdentity, Diagnostics: ps.protocol()}, nil
		}
	}
	prior, d1 := decode(r, req.PriorState)
	proposed, d2 := decode(r, req.ProposedNewState)
	config, d3 := writeOnlyConfig(r, req.Config)
	if diags := append(append(d1, d2...), d3...); diags != nil {
		return &tfprotov6.PlanResourceChangeResponse{Diagnostics: diags}, nil
	}
	planned, replace, ps := r.plan(ctx, prior, withWriteOnly(r, proposed, config), req.PriorPrivate)
	dv, diags := encode(r, withoutWriteOnly(r, planned))
	// A replacement is planned as a create, which Terraform hands the
	// replaced object's identity: the new object has its own.
	have := req.PriorIdentity
	if prior.IsNull() {
		have = nil
	}
	// Passed on even when planning a create: for a replacement, Terraform
	// hands this private state to the delete of the replaced object too.
	return &tfprotov6.PlanResourceChangeResponse{
		PlannedState:    dv,
		RequiresReplace: replace,
		PlannedPrivate:  req.PriorPrivate,
		PlannedIdentity: keptIdentity(r, have, planned),
		Diagnostics:     append(diags, ps.protocol()...),
	}, nil
}

func (s *server) ApplyResourceChange(ctx context.Context, req *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	r, ok := s.routes[req.TypeName]
	if !ok {
		return s.ProviderServer.ApplyResourceChange(ctx, req)
	}
	prior, d1 := decode(r, req.PriorState)
	planned, d2 := decode(r, req.PlannedState)
	config, d3 := writeOnlyConfig(r, req.Config)
	if diags := append(append(d1, d2...), d3...); diags != nil {
		return &tfprotov6.ApplyResourceChangeResponse{NewState: req.PriorState, Diagnostics: diags}, nil
	}
	state, priv, ps := r.apply(ctx, prior, withWriteOnly(r, planned, config), req.PlannedPrivate)
	dv, diags := encode(r, withoutWriteOnly(r, state))
	have := req.PlannedIdentity
	if prior.IsNull() {
		have = nil // a new object, whose name the plan may not have known
	}
	return &tfprotov6.ApplyResourceChangeResponse{
		NewState:    dv,
		Private:     priv,
		NewIdentity: keptIdentity(r, have, state),
		Diagnostics: append(diags, ps.protocol()...),
	}, nil
}

// The list resources are the framework's: tfprotov6.ProviderServer does
// not hold their RPCs yet, so embedding it would hide them and Terraform
// would be told the provider lists nothing.
var _ tfprotov6.ListResourceServer = (*server)(nil)

func (s *server) ValidateListResourceConfig(ctx context.Context, req *tfprotov6.ValidateListResourceConfigRequest) (*tfprotov6.ValidateListResourceConfigResponse, error) {
	l, ok := s.ProviderServer.(tfprotov6.ListResourceServer)
	if !ok {
		return &tfprotov6.ValidateListResourceConfigResponse{Diagnostics: errorDiagnostics("List resources not served",
			fmt.Errorf("the framework server does not serve list resources"))}, nil
	}
	return l.ValidateListResourceConfig(ctx, req)
}

func (s *server) ListResource(ctx context.Context, req *tfprotov6.ListResourceRequest) (*tfprotov6.ListResourceServerStream, error) {
	l, ok := s.ProviderServer.(tfprotov6.ListResourceServer)
	if !ok {
		return nil, fmt.Errorf("the framework server does not serve list resources")
	}
	return l.ListResource(ctx, req)
}

func errorDiagnostics(summary string, err error) []*tfprotov6.Diagnostic {
	return []*tfprotov6.Diagnostic{{Severity: tfprotov6.DiagnosticSeverityError, Summary: summary, Detail: err.Error()}}
}

// hasExactAttributes reports whether stored state JSON has exactly the
// type's attributes, so it can be handed back without decoding.
func hasExactAttributes(t tftypes.Object, stateJSON []byte) bool {
	var top map[string]json.RawMessage
	if json.Unmarshal(stateJSON, &top) != nil || len(top) != len(t.AttributeTypes) {
		return false
	}
	for name := range t.AttributeTypes {
		if _, ok := top[name]; !ok {
			return false
		}
	}
	return true
}

// servedBelowFramework is embedded by the framework resources whose data
// RPCs the protocol server routes to a protocolResource. It imports by
// name, and has the CRUD methods the framework's interface demands; they
// are never called when the provider is served by NewServer.
type servedBelowFramework struct{}

// ImportState imports a resource by its name, which is also its ID.
func (servedBelowFramework) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("name"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
}

func (servedBelowFramework) Create(_ context.Context, _ resource.CreateRequest, resp *resource.CreateResponse) {
	resp.Diagnostics.AddError(notRouted, notRoutedDetail)
}

func (servedBelowFramework) Read(_ context.Context, _ resource.ReadRequest, resp *resource.ReadResponse) {
	resp.Diagnostics.AddError(notRouted, notRoutedDetail)
}

func (servedBelowFramework) Update(_ context.Context, _ resource.UpdateRequest, resp *resource.UpdateResponse) {
	resp.Diagnostics.AddError(notRouted, notRoutedDetail)
}

func (servedBelowFramework) Delete(_ context.Context, _ resource.DeleteRequest, resp *resource.DeleteResponse) {
	resp.Diagnostics.AddError(notRouted, notRoutedDetail)
}

const (
	notRouted       = "Served at the protocol level"
	notRoutedDetail = "This resource's data RPCs are served by the provider's protocol server (NewServer); " +
		"a plain framework server cannot run it. This is a bug in how the provider is served."
)
