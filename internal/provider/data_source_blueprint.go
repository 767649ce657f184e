package provider

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	dschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	rschema "github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/installation"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/masking"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/render"
)

// blueprintInputs are the attributes of landscaper_installation the
// blueprint data source takes, with the same schema.
const blueprintType = "landscaper_blueprint"

var blueprintInputs = []string{"blueprint", "component", "verification", "imports", attrSensitiveImports, attrTargets, "target_lists", "target_maps"}

var _ datasource.DataSource = (*blueprintDataSource)(nil)

// blueprintDataSource is landscaper_blueprint as the framework sees it:
// its schema. A blueprint rendered the way landscaper_installation's plan
// renders it (render.Load, then installation.PlanTree), without running
// anything; blueprints serves its RPCs.
type blueprintDataSource struct{}

func (d *blueprintDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_blueprint"
}

func (d *blueprintDataSource) Schema(ctx context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	var rs resource.SchemaResponse
	(&installationResource{}).Schema(ctx, resource.SchemaRequest{}, &rs)
	attrs := map[string]dschema.Attribute{}
	for _, n := range blueprintInputs {
		attrs[n] = dataSourceAttribute(rs.Schema.Attributes[n])
	}
	declaration := dschema.NestedAttributeObject{Attributes: map[string]dschema.Attribute{
		"name": dschema.StringAttribute{Computed: true, MarkdownDescription: "Name of the import or export."},
		"type": dschema.StringAttribute{Computed: true, MarkdownDescription: "`data`, `target`, `targetList` or `targetMap`."},
		"required": dschema.BoolAttribute{Computed: true, MarkdownDescription: "Whether the import is required " +
			"(Landscaper's default); always `false` for exports."},
	}}
	attrs["installations"] = dschema.MapNestedAttribute{
		MarkdownDescription: "Every installation of the tree by path, as in `landscaper_installation`'s " +
			"`status.installations`: `\"\"` is the root, `\"a\"` its sub-installation `a`, `\"a/b\"` one level deeper.",
		Computed: true,
		NestedObject: dschema.NestedAttributeObject{Attributes: map[string]dschema.Attribute{
			"imports": dschema.StringAttribute{Computed: true, MarkdownDescription: "The installation's data " +
				"imports as JSON text, as its parent's data flow resolves them (targets are left out). Null for a " +
				"sub-installation that imports what a sibling exports: only running the sibling would tell, so " +
				"it and everything under it is not rendered."},
		}},
	}
	attrs[attrDeployItems] = dschema.MapNestedAttribute{
		MarkdownDescription: "Every rendered deploy item of the tree by `\"<installation path>/<item>\"`; the " +
			"root's items by their name alone, as in `landscaper_installation`'s `deploy_items`. Values of targets " +
			"and of `sensitive_imports` are shown as `***`.",
		Computed:     true,
		NestedObject: dschema.NestedAttributeObject{Attributes: dataSourceAttributes(renderedItemAttributes())},
	}
	attrs["import_declarations"] = dschema.ListNestedAttribute{Computed: true, NestedObject: declaration,
		MarkdownDescription: "The root blueprint's import declarations, in its order."}
	attrs["export_declarations"] = dschema.ListNestedAttribute{Computed: true, NestedObject: declaration,
		MarkdownDescription: "The root blueprint's export declarations, in its order."}
	resp.Schema = dschema.Schema{
		MarkdownDescription: "A Landscaper blueprint rendered without running anything: its sub-installations " +
			"with their imports and every deploy item with its rendered configuration, exactly as " +
			"`landscaper_installation` would render them for its first apply. Takes the same blueprint, " +
			"component and import attributes. Template, schema and import errors are this data source's errors.",
		Attributes: attrs,
	}
}

// dataSourceAttribute converts an attribute of the resource's schema into
// the data source's, so both are defined once. Plan modifiers and defaults
// have no place in a data source.
func dataSourceAttribute(a rschema.Attribute) dschema.Attribute {
	switch x := a.(type) {
	case rschema.StringAttribute:
		return dschema.StringAttribute{Required: x.Required, Optional: x.Optional, Computed: x.Computed,
			Sensitive: x.Sensitive, MarkdownDescription: x.MarkdownDescription, Validators: x.Validators}
	case rschema.MapAttribute:
		return dschema.MapAttribute{Required: x.Required, Optional: x.Optional, Computed: x.Computed, ElementType: x.ElementType,
			Sensitive: x.Sensitive, MarkdownDescription: x.MarkdownDescription, Validators: x.Validators}
	case rschema.ListAttribute:
		return dschema.ListAttribute{Required: x.Required, Optional: x.Optional, Computed: x.Computed, ElementType: x.ElementType,
			Sensitive: x.Sensitive, MarkdownDescription: x.MarkdownDescription, Validators: x.Validators}
	case rschema.DynamicAttribute:
		return dschema.DynamicAttribute{Required: x.Required, Optional: x.Optional, Computed: x.Computed,
			Sensitive: x.Sensitive, MarkdownDescription: x.MarkdownDescription, Validators: x.Validators}
	case rschema.SingleNestedAttribute:
		return dschema.SingleNestedAttribute{Required: x.Required, Optional: x.Optional, Computed: x.Computed,
			Sensitive: x.Sensitive, MarkdownDescription: x.MarkdownDescription, Validators: x.Validators,
			Attributes: dataSourceAttributes(x.Attributes)}
	case rschema.MapNestedAttribute:
		return dschema.MapNestedAttribute{Required: x.Required, Optional: x.Optional, Computed: x.Computed,
			Sensitive: x.Sensitive, MarkdownDescription: x.MarkdownDescription, Validators: x.Validators,
			NestedObject: dschema.NestedAttributeObject{Attributes: dataSourceAttributes(x.NestedObject.Attributes)}}
	}
	panic(fmt.Sprintf("dataSourceAttribute: %T is not converted", a))
}

func dataSourceAttributes(in map[string]rschema.Attribute) map[string]dschema.Attribute {
	out := make(map[string]dschema.Attribute, len(in))
	for n, a := range in {
		out[n] = dataSourceAttribute(a)
	}
	return out
}

// Read is never called: the protocol server routes the data source's
// RPCs to blueprints.
func (d *blueprintDataSource) Read(_ context.Context, _ datasource.ReadRequest, resp *datasource.ReadResponse) {
	resp.Diagnostics.AddError(notRouted, notRoutedDetail)
}

// blueprints implements landscaper_blueprint on Terraform values, below
// the framework: its inputs are landscaper_installation's, whose target
// lists and maps have optional attributes (see optionalAttrsObjectType),
// which the framework cannot decode.
type blueprints struct {
	t tftypes.Object
	x *installations
}

func (b *blueprints) objectType() tftypes.Object { return b.t }

func (b *blueprints) validate(_ context.Context, config tftypes.Value) problems {
	return validateInstallationInputs(fields(config), b.x.deployers)
}

// read renders the tree as landscaper_installation's first plan would.
func (b *blueprints) read(ctx context.Context, config tftypes.Value) (tftypes.Value, problems) {
	f := fields(config)
	src, srcKnown := sourceOf(f)
	imp, impKnown, ps := importsOf(f, b.x.targets())
	if ps.errors() {
		return config, ps
	}
	if !srcKnown || !impKnown {
		ps.add(nil, "Blueprint not known", "blueprint, component or imports still hold unknown values.")
		return config, ps
	}
	bp, err := b.x.load(ctx, src)
	if err != nil {
		return config, loadProblems(err)
	}
	ps = componentWarnings(bp)
	sec := secretsOf(f, imp)
	p, err := installation.PlanTree(ctx, bp, imp, nil, "", nil)
	if err != nil {
		in := masking.ShadowInput{Blueprint: bp, Imports: imp, Sensitive: sensitiveImports(f)}
		return config, append(ps, renderProblems(ctx, sec, in, err)...)
	}
	t := b.t
	// Unlike the resource's, the items of nodes that are rendered are
	// listed even when a sibling's exports keep others from being.
	specs := planSpecs(p)
	p.Walk(func(n *installation.Plan) { sec.AddImports(n.Imports) })
	sec.Shadow(ctx, masking.ShadowInput{Blueprint: bp, Imports: imp, Sensitive: sensitiveImports(f), Known: planKnown(p)}, specs)
	installations := map[string]tftypes.Value{}
	it := as[tftypes.Map](t.AttributeTypes["installations"]).ElementType
	p.Walk(func(n *installation.Plan) {
		imports := tftypes.NewValue(tftypes.String, nil)
		if n.Known {
			raw, err := json.Marshal(sec.Imports(n.Path, orEmptyMap(n.Imports.Data)))
			if err != nil {
				ps.add(nil, fmt.Sprintf("Imports of installation %q cannot be represented", n.Path), err.Error())
			}
			imports = tftypes.NewValue(tftypes.String, string(raw))
		}
		installations[n.Path] = tftypes.NewValue(it, map[string]tftypes.Value{"imports": imports})
		for _, w := range n.Warnings {
			where := "the root installation"
			if n.Path != "" {
				where = fmt.Sprintf("sub-installation %q", n.Path)
			}
			ps.warn(attrPath("blueprint"), "Deploy item config has unknown fields", fmt.Sprintf("%s: %s", where, w))
		}
	})
	f[attrDeployItems] = renderedItems(t.AttributeTypes[attrDeployItems], specs, sec)
	f["installations"] = tftypes.NewValue(t.AttributeTypes["installations"], installations)
	importDecls, exportDecls := render.Declarations(bp)
	f["import_declarations"] = declarationsValue(t.AttributeTypes["import_declarations"], importDecls)
	f["export_declarations"] = declarationsValue(t.AttributeTypes["export_declarations"], exportDecls)
	return tftypes.NewValue(t, f), ps.masked(sec.Text)
}

func orEmptyMap(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

func declarationsValue(t tftypes.Type, decls []render.Declaration) tftypes.Value {
	et := t.(tftypes.List).ElementType //nolint:forcetypeassert // the schema above
	elems := make([]tftypes.Value, 0, len(decls))
	for _, d := range decls {
		elems = append(elems, tftypes.NewValue(et, map[string]tftypes.Value{
			"name":     tftypes.NewValue(tftypes.String, d.Name),
			"type":     tftypes.NewValue(tftypes.String, d.Type),
			"required": tftypes.NewValue(tftypes.Bool, d.Required),
		}))
	}
	return tftypes.NewValue(t, elems)
}
