package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/lscluster"
)

// An installation's resource identity (Terraform 1.12+) says where it came
// from, in the words of its import ID: { target, namespace, name } of the
// Installation in the Landscaper resource cluster of a provider target it
// was taken over from. An installation created by this provider exists
// nowhere but in its state and the deploy items it runs, so its identity
// is its name alone (target and namespace null): the identity an import
// by name takes, as the import ID "<name>" does. The identity is settled
// when the object is created or imported, and every later response hands
// back the one Terraform holds: taking an Installation over leaves it in
// its Landscaper cluster, and the identity keeps naming it.

const (
	identityTarget    = "target"
	identityNamespace = "namespace"
	identityName      = "name"
)

var _ resource.ResourceWithIdentity = (*installationResource)(nil)

func (r *installationResource) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = identityschema.Schema{Attributes: map[string]identityschema.Attribute{
		identityTarget: identityschema.StringAttribute{OptionalForImport: true,
			Description: "The provider target whose kubeconfig reaches the Landscaper resource cluster the installation was taken over from; " +
				"null for an installation created by this provider."},
		identityNamespace: identityschema.StringAttribute{OptionalForImport: true,
			Description: "The namespace of the Landscaper Installation it was taken over from; null for an installation created by this provider."},
		identityName: identityschema.StringAttribute{RequiredForImport: true,
			Description: "The installation's name (the Landscaper Installation's, when taken over)."},
	}}
}

// identified is a protocolResource with a resource identity.
type identified interface {
	identityType() tftypes.Object
	// identityOf is the identity of a new object of state: one that
	// neither Terraform nor an import gave an identity.
	identityOf(state tftypes.Value) tftypes.Value
	// importID is the import ID that an identity given in an import block
	// stands for.
	importID(identity tftypes.Value) (string, problems)
}

func (x *installations) identityType() tftypes.Object {
	return tftypes.Object{AttributeTypes: map[string]tftypes.Type{
		identityTarget: tftypes.String, identityNamespace: tftypes.String, identityName: tftypes.String}}
}

func (x *installations) identityOf(state tftypes.Value) tftypes.Value {
	null := tftypes.NewValue(tftypes.String, nil)
	return tftypes.NewValue(x.identityType(), map[string]tftypes.Value{
		identityTarget: null, identityNamespace: null, identityName: fields(state)["name"]})
}

// landscaperIdentity is the identity of an installation taken over from
// a Landscaper cluster.
func (x *installations) landscaperIdentity(id lscluster.ID) tftypes.Value {
	return tftypes.NewValue(x.identityType(), map[string]tftypes.Value{identityTarget: stringValue(id.Target),
		identityNamespace: stringValue(id.Namespace), identityName: stringValue(id.Installation)})
}

func (x *installations) importID(identity tftypes.Value) (string, problems) {
	var ps problems
	f := fields(identity)
	target, ns, name := f[identityTarget], f[identityNamespace], f[identityName]
	for _, v := range []tftypes.Value{target, ns, name} {
		if !v.IsKnown() {
			ps.add(nil, "Invalid import identity", "the identity holds unknown values; give it known values")
			return "", ps
		}
	}
	switch {
	case name.IsNull() || str(name) == "":
		ps.add(nil, "Invalid import identity", "name is required")
	case target.IsNull() != ns.IsNull():
		ps.add(nil, "Invalid import identity", fmt.Sprintf("target and namespace name an Installation of a Landscaper cluster "+
			"together (%s); give both, or neither to import an installation of this provider by name", lscluster.IDFormat))
	case target.IsNull():
		if isLandscaperID(str(name)) {
			ps.add(nil, "Invalid import identity",
				fmt.Sprintf("name %q holds a \"/\"; give target and namespace apart", str(name)))
		}
		return str(name), ps
	default:
		return lscluster.ID{Target: str(target), Namespace: str(ns), Installation: str(name)}.String(), ps
	}
	return "", ps
}

// identityData encodes an identity for a response; none for a null state.
func identityData(r protocolResource, state, identity tftypes.Value) *tfprotov6.ResourceIdentityData {
	x, ok := r.(identified)
	if !ok || state.IsNull() || identity.IsNull() {
		return nil
	}
	dv, err := tfprotov6.NewDynamicValue(x.identityType(), identity)
	if err != nil {
		return nil
	}
	return &tfprotov6.ResourceIdentityData{IdentityData: &dv}
}

// keptIdentity is the identity a response about state carries: the one
// Terraform holds (have), else a new object's. A request of a client
// without identities (Terraform before 1.12, OpenTofu) carries none.
func keptIdentity(r protocolResource, have *tfprotov6.ResourceIdentityData, state tftypes.Value) *tfprotov6.ResourceIdentityData {
	x, ok := r.(identified)
	if !ok || state.IsNull() {
		return nil
	}
	if have != nil && have.IdentityData != nil {
		return have
	}
	return identityData(r, state, x.identityOf(state))
}

// importIdentityID reads the identity of an import by identity into the
// import ID it stands for.
func importIdentityID(r protocolResource, identity *tfprotov6.ResourceIdentityData) (string, problems) {
	var ps problems
	x, ok := r.(identified)
	if !ok || identity.IdentityData == nil {
		ps.add(nil, "Import by identity not supported", "This resource has no identity: import it by ID.")
		return "", ps
	}
	v, err := identity.IdentityData.Unmarshal(x.identityType())
	if err != nil {
		ps.add(nil, "Cannot decode the import identity", err.Error())
		return "", ps
	}
	return x.importID(v)
}
