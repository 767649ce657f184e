package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/list"
	"github.com/hashicorp/terraform-plugin-framework/list/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/lscluster"
)

// installationList is the list resource landscaper_installation
// (Terraform 1.14+, `terraform query`): the root Installations of a
// namespace of a Landscaper resource cluster, each with the identity an
// import block takes and, when asked, the object the import from
// Landscaper builds, so that -generate-config-out writes what an import
// of each would.
type installationList struct {
	x *installations
}

var _ list.ListResource = (*installationList)(nil)

type installationListModel struct {
	Target    types.String `tfsdk:"target"`
	Namespace types.String `tfsdk:"namespace"`
}

func (l *installationList) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_installation"
}

func (l *installationList) ListResourceConfigSchema(_ context.Context, _ list.ListResourceSchemaRequest, resp *list.ListResourceSchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Lists the root Installations of a namespace of a Landscaper resource cluster, to take them over " +
			"with `terraform query -generate-config-out` (Terraform 1.14 or later). Each result has the identity " +
			"`{ target, namespace, name }` of `landscaper_installation`; with `include_resource = true`, the object the " +
			"import from Landscaper reads, from which Terraform writes the configuration. Sub-installations come with their root.",
		Attributes: map[string]schema.Attribute{
			identityTarget: schema.StringAttribute{Required: true, Validators: []validator.String{checked{lscluster.CheckTarget}},
				MarkdownDescription: "The provider target (of type `landscaper.gardener.cloud/kubernetes-cluster`) whose kubeconfig " +
					"reaches the Landscaper resource cluster: the first part of the import ID."},
			identityNamespace: schema.StringAttribute{Required: true, Validators: []validator.String{checked{lscluster.CheckNamespace}},
				MarkdownDescription: "The namespace of the Landscaper resource cluster whose root Installations are listed."},
		},
	}
}

func (l *installationList) List(ctx context.Context, req list.ListRequest, stream *list.ListResultsStream) {
	var m installationListModel
	var diags diag.Diagnostics
	if diags.Append(req.Config.Get(ctx, &m)...); diags.HasError() {
		stream.Results = list.ListResultsStreamDiagnostics(diags)
		return
	}
	target, ns := m.Target.ValueString(), m.Namespace.ValueString()
	r, ps := l.x.landscaperReader(target, fmt.Sprintf("the list of namespace %q", ns))
	if ps.errors() {
		stream.Results = list.ListResultsStreamDiagnostics(atPath(ps, path.Root(identityTarget)))
		return
	}
	names, err := r.Roots(ctx, ns)
	if err != nil {
		diags.AddAttributeError(path.Root(identityNamespace), "Cannot list the Landscaper installations",
			fmt.Sprintf("listing the Installations of namespace %q in the cluster of provider target %q: %v", ns, target, err))
		stream.Results = list.ListResultsStreamDiagnostics(diags)
		return
	}
	stream.Results = func(push func(list.ListResult) bool) {
		for i, name := range names {
			if req.Limit > 0 && int64(i) >= req.Limit {
				return
			}
			if !push(l.result(ctx, req, lscluster.ID{Target: target, Namespace: ns, Installation: name})) {
				return
			}
		}
	}
}

// result is one Installation: its identity, and the object the import
// from Landscaper reads when the resource is asked for.
func (l *installationList) result(ctx context.Context, req list.ListRequest, id lscluster.ID) list.ListResult {
	res := req.NewListResult(ctx)
	res.DisplayName = id.Namespace + "/" + id.Installation
	res.Identity.Raw = l.x.landscaperIdentity(id)
	if !req.IncludeResource {
		return res
	}
	v, _, ps := l.x.importLandscaper(ctx, id.String())
	for _, p := range ps {
		detail := fmt.Sprintf("Installation %s: %s", id, named(p.path, p.detail))
		if p.warning {
			res.Diagnostics.AddWarning(p.summary, detail)
		} else {
			res.Diagnostics.AddError(p.summary, detail)
		}
	}
	if !ps.errors() {
		res.Resource.Raw = v
	}
	return res
}

// atPath turns problems about the list's configuration into diagnostics
// at the attribute they are about.
func atPath(ps problems, at path.Path) diag.Diagnostics {
	var diags diag.Diagnostics
	for _, p := range ps {
		if p.warning {
			diags.AddAttributeWarning(at, p.summary, p.detail)
		} else {
			diags.AddAttributeError(at, p.summary, p.detail)
		}
	}
	return diags
}

// checked is a string validator from a check of the value, which says
// what is wrong.
type checked struct{ check func(string) error }

func (c checked) Description(context.Context) string         { return "a valid value" }
func (c checked) MarkdownDescription(context.Context) string { return "a valid value" }

func (c checked) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if err := c.check(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid "+req.Path.String(), err.Error())
	}
}
