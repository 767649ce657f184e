package provider

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/moved"
)

// stateMover is a protocolResource another resource type's state can be
// moved into by a `moved` block (Terraform's MoveResourceState).
type stateMover interface {
	moveState(req *tfprotov6.MoveResourceStateRequest) (tftypes.Value, []byte, problems)
}

var _ stateMover = (*executions)(nil)

// MoveResourceState serves `moved` blocks whose destination is a resource
// served at the protocol level. Terraform calls it while planning, with
// the source's stored state; the source's provider is never called, though
// Terraform requires it to be installed because the state names it.
func (s *server) MoveResourceState(ctx context.Context, req *tfprotov6.MoveResourceStateRequest) (*tfprotov6.MoveResourceStateResponse, error) {
	r, ok := s.routes[req.TargetTypeName]
	if !ok {
		return s.ProviderServer.MoveResourceState(ctx, req)
	}
	m, ok := r.(stateMover)
	if !ok {
		return &tfprotov6.MoveResourceStateResponse{Diagnostics: errorDiagnostics("Cannot move into "+req.TargetTypeName,
			fmt.Errorf("%s takes no state of another resource type; %s does, from %s", req.TargetTypeName, executionType, moved.Sources()))}, nil
	}
	if req.SourceState == nil || req.SourceState.JSON == nil {
		return &tfprotov6.MoveResourceStateResponse{Diagnostics: errorDiagnostics("Cannot move "+req.SourceTypeName,
			errors.New("the request holds no state in JSON to move"))}, nil
	}
	v, priv, ps := m.moveState(req)
	if ps.errors() {
		return &tfprotov6.MoveResourceStateResponse{Diagnostics: ps.protocol()}, nil
	}
	dv, diags := encode(r, v)
	return &tfprotov6.MoveResourceStateResponse{TargetState: dv, TargetPrivate: priv, Diagnostics: append(diags, ps.protocol()...)}, nil
}

// GetProviderSchema says that the provider moves state across types: the
// capability belongs to the protocol-level MoveResourceState above.
func (s *server) GetProviderSchema(ctx context.Context, req *tfprotov6.GetProviderSchemaRequest) (*tfprotov6.GetProviderSchemaResponse, error) {
	resp, err := s.ProviderServer.GetProviderSchema(ctx, req)
	if resp != nil {
		resp.ServerCapabilities = withMoveState(resp.ServerCapabilities)
	}
	return resp, err
}

// GetMetadata: see GetProviderSchema.
func (s *server) GetMetadata(ctx context.Context, req *tfprotov6.GetMetadataRequest) (*tfprotov6.GetMetadataResponse, error) {
	resp, err := s.ProviderServer.GetMetadata(ctx, req)
	if resp != nil {
		resp.ServerCapabilities = withMoveState(resp.ServerCapabilities)
	}
	return resp, err
}

func withMoveState(c *tfprotov6.ServerCapabilities) *tfprotov6.ServerCapabilities {
	out := tfprotov6.ServerCapabilities{}
	if c != nil {
		out = *c
	}
	out.MoveResourceState = true
	return &out
}

// moveState turns a helm_release, kubernetes_manifest or kubectl_manifest
// into an execution with one deploy item whose first run adopts what the
// resource deployed (engine.ItemStatus.Adopt, as an import from Landscaper
// does). The state has no target: the source's cluster lived in its
// provider's configuration, so the configuration names one. Anything the
// source held that cannot be carried over refuses the move, naming it.
func (x *executions) moveState(req *tfprotov6.MoveResourceStateRequest) (tftypes.Value, []byte, problems) {
	var ps problems
	it, err := moved.Convert(req.SourceProviderAddress, req.SourceTypeName, req.SourceSchemaVersion, req.SourceState.JSON)
	var refused *moved.Refused
	switch {
	case errors.As(err, &refused):
		for _, p := range refused.Problems {
			ps.add(nil, fmt.Sprintf("Cannot move %s: %s", req.SourceTypeName, p.Attribute),
				fmt.Sprintf("%s.%s cannot be carried over to %s: %s.", req.SourceTypeName, p.Attribute, executionType, p.Detail))
		}
		return tftypes.Value{}, nil, ps
	case err != nil:
		ps.add(nil, "Cannot move "+req.SourceTypeName, err.Error())
		return tftypes.Value{}, nil, ps
	}
	for _, w := range it.Warnings {
		ps.warn(nil, fmt.Sprintf("Moving %s: %s", req.SourceTypeName, w.Attribute), fmt.Sprintf("%s.%s: %s.", req.SourceTypeName, w.Attribute, w.Detail))
	}
	st := engine.Status{Phase: core.PhaseInit, Items: map[string]*engine.ItemStatus{
		it.Name: {Phase: core.PhaseInit, Adopt: it.Adopt},
	}}
	t := x.vt.resource
	f := make(map[string]tftypes.Value, len(t.AttributeTypes))
	for n, at := range t.AttributeTypes {
		f[n] = tftypes.NewValue(at, nil)
	}
	itemType := as[tftypes.Object](as[tftypes.Map](t.AttributeTypes[attrDeployItems]).ElementType)
	item := make(map[string]tftypes.Value, len(itemType.AttributeTypes))
	for n, at := range itemType.AttributeTypes {
		item[n] = tftypes.NewValue(at, nil)
	}
	item["type"], item["config"] = stringValue(it.Type), stringValue(string(it.Config))
	f["name"], f["id"] = stringValue(it.Execution), stringValue(it.Execution)
	f[attrDeployItems] = tftypes.NewValue(t.AttributeTypes[attrDeployItems], map[string]tftypes.Value{it.Name: tftypes.NewValue(itemType, item)})
	f["status"] = x.vt.statusValue(st)
	if f["exports"], f["sensitive_exports"], err = exportValues(st, []string{it.Name}, nil, nil, nil); err != nil {
		ps.add(nil, "Export cannot be represented", err.Error())
	}
	priv, err := encodeExecutionPrivate(st, nil)
	if err != nil {
		ps.add(nil, "Cannot store engine status", err.Error())
	}
	return tftypes.NewValue(t, f), priv, ps
}

// adoptionProblems says, for a plan, what the items about to run adopt
// (warnings, so the plan shows it), and refuses an item whose config
// cannot adopt it, or an item moved from another provider that the
// configuration no longer declares: its adoption would be dropped and
// what it holds left behind.
func (x *executions) adoptionProblems(want engine.Execution, prev engine.Status, job engine.Plan) problems {
	var ps problems
	for _, n := range job.Run {
		is := prev.Items[n]
		if is == nil || is.Adopt == nil {
			continue
		}
		a := is.Adopt
		spec := want.Items[n]
		if d, ok := x.deployers.Get(spec.Type); ok {
			if c, ok := d.(deployer.AdoptionChecker); ok {
				if err := c.CheckAdoption(spec.Config, a); err != nil {
					ps.add(itemPath(n, "config"), "Deploy item cannot adopt", err.Error())
					continue
				}
			}
		}
		ps.warn(itemPath(n), fmt.Sprintf("Deploy item %q adopts %s", n, adoptedWhat(a)), adoptionDetail(a))
	}
	for _, n := range job.Drop {
		if a := prev.Items[n].Adopt; a != nil && a.Source != "" {
			ps.add(tftypes.NewAttributePath().WithAttributeName(attrDeployItems), "Moved deploy item not declared",
				fmt.Sprintf("deploy_items has no item %q, which holds what %s deployed (%s); name the item %q. "+
					"To stop managing it instead, use a removed block for the source resource rather than a moved block.",
					n, a.From(), adoptedWhat(a), n))
		}
	}
	return ps
}

// adoptedWhat names what an adoption takes over.
func adoptedWhat(a *deployer.Adoption) string {
	if a.Release != nil {
		return fmt.Sprintf("helm release %s/%s", a.Release.Namespace, a.Release.Name)
	}
	var objs []string
	for _, o := range a.Objects {
		name := o.Name
		if o.Namespace != "" {
			name = o.Namespace + "/" + name
		}
		objs = append(objs, fmt.Sprintf("%s %s", o.Kind, name))
	}
	if len(objs) == 0 {
		return "what " + a.From() + " deployed"
	}
	return strings.Join(objs, ", ")
}

// adoptionDetail says what the first apply does with what it adopts.
func adoptionDetail(a *deployer.Adoption) string {
	if a.Release != nil {
		return fmt.Sprintf("It was installed by %s. The apply upgrades the release in place (one revision more) "+
			"with this item's chart and values; it never installs it anew.", a.From())
	}
	return fmt.Sprintf("They were deployed by %s. The apply updates them in place, so they keep their UIDs, "+
		"and labels them as this item's; objects the item no longer renders are deleted.", a.From())
}

// movedNeverApplied warns, for a destroy, about items moved from another
// provider that never ran: the destroy forgets them (it has no target to
// delete with) and leaves what they hold in the cluster.
func movedNeverApplied(st engine.Status) problems {
	var ps problems
	for _, n := range slices.Sorted(maps.Keys(st.Items)) {
		is := st.Items[n]
		if a := is.Adopt; a != nil && a.Source != "" && is.JobIDFinished == "" {
			ps.warn(itemPath(n), fmt.Sprintf("Deploy item %q is forgotten, not deleted", n),
				fmt.Sprintf("The item was moved from %s and never applied, so it has no target to delete with: "+
					"the destroy leaves %s in the cluster. Apply once before destroying to delete it.", a.Source, adoptedWhat(a)))
		}
	}
	return ps
}
