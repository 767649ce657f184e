package provider

import (
	"context"
	"encoding/json"
	"sort"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
)

type executionModel struct {
	ID               types.String   `tfsdk:"id"`
	Name             types.String   `tfsdk:"name"`
	DeployItems      types.Map      `tfsdk:"deploy_items"`
	Exports          types.Dynamic  `tfsdk:"exports"`
	SensitiveExports types.Dynamic  `tfsdk:"sensitive_exports"`
	Status           types.Object   `tfsdk:"status"`
	Timeouts         timeouts.Value `tfsdk:"timeouts"`
}

type deployItemModel struct {
	Type               types.String `tfsdk:"type"`
	Config             types.String `tfsdk:"config"`
	DependsOn          types.List   `tfsdk:"depends_on"`
	Timeout            types.String `tfsdk:"timeout"`
	UpdateOnChangeOnly types.Bool   `tfsdk:"update_on_change_only"`
	SensitiveExport    types.Bool   `tfsdk:"sensitive_export"`
}

// desired is an execution as the engine sees it, plus what only the
// provider cares about (where each export goes).
type desired struct {
	exec      engine.Execution
	sensitive map[string]bool
}

// items reads deploy_items. known is false when any part of it is unknown
// (it depends on values only known after another resource's apply).
func items(ctx context.Context, m types.Map) (map[string]deployItemModel, bool, diag.Diagnostics) {
	if m.IsUnknown() {
		return nil, false, nil
	}
	out := map[string]deployItemModel{}
	diags := m.ElementsAs(ctx, &out, false)
	if diags.HasError() {
		return nil, false, diags
	}
	for _, it := range out {
		if it.Type.IsUnknown() || it.Config.IsUnknown() || it.DependsOn.IsUnknown() || it.Timeout.IsUnknown() ||
			it.UpdateOnChangeOnly.IsUnknown() || it.SensitiveExport.IsUnknown() {
			return out, false, nil
		}
		for _, d := range it.DependsOn.Elements() {
			if d.IsUnknown() {
				return out, false, nil
			}
		}
	}
	return out, true, nil
}

// specOf converts one item; problems are attribute errors on its path.
func specOf(name string, it deployItemModel) (engine.ItemSpec, diag.Diagnostics) {
	var diags diag.Diagnostics
	at := path.Root("deploy_items").AtMapKey(name)
	spec := engine.ItemSpec{Type: it.Type.ValueString(), UpdateOnChangeOnly: true, Timeout: engine.DefaultTimeout}
	cfg, err := deployer.NormalizeConfig(it.Config.ValueString())
	if err != nil {
		diags.AddAttributeError(at.AtName("config"), "Invalid deploy item config", err.Error())
	}
	spec.Config = cfg
	if !it.Timeout.IsNull() {
		d, err := engine.ParseTimeout(it.Timeout.ValueString())
		if err != nil {
			diags.AddAttributeError(at.AtName("timeout"), "Invalid deploy item timeout", err.Error())
		}
		spec.Timeout = d
	}
	if !it.UpdateOnChangeOnly.IsNull() {
		spec.UpdateOnChangeOnly = it.UpdateOnChangeOnly.ValueBool()
	}
	for _, d := range it.DependsOn.Elements() {
		if s, ok := d.(types.String); ok && !s.IsNull() {
			spec.DependsOn = append(spec.DependsOn, s.ValueString())
		}
	}
	return spec, diags
}

// desiredOf converts the planned deploy_items. known is false when they
// are not fully known yet.
func desiredOf(ctx context.Context, name string, m types.Map) (desired, bool, diag.Diagnostics) {
	its, known, diags := items(ctx, m)
	if !known || diags.HasError() {
		return desired{}, false, diags
	}
	d := desired{
		exec:      engine.Execution{Name: name, Items: make(map[string]engine.ItemSpec, len(its))},
		sensitive: map[string]bool{},
	}
	for n, it := range its {
		spec, ds := specOf(n, it)
		diags.Append(ds...)
		d.exec.Items[n] = spec
		d.sensitive[n] = it.SensitiveExport.ValueBool()
	}
	return d, true, diags
}

// statusValue renders the engine status as the status attribute.
func statusValue(st engine.Status) types.Object {
	items := make(map[string]attr.Value, len(st.Items))
	for n, is := range st.Items {
		items[n] = itemStatusValue(is)
	}
	return types.ObjectValueMust(statusAttrTypes, map[string]attr.Value{
		"phase":           stringOrNull(string(st.Phase)),
		"job_id":          stringOrNull(st.JobID),
		"job_id_finished": stringOrNull(st.JobIDFinished),
		"last_error":      errorValue(st.LastError),
		"deploy_items":    types.MapValueMust(types.ObjectType{AttrTypes: itemStatusAttrTypes}, items),
	})
}

func itemStatusValue(is *engine.ItemStatus) types.Object {
	ps := types.StringNull()
	if len(is.ProviderStatus) > 0 && string(is.ProviderStatus) != "null" {
		ps = types.StringValue(string(is.ProviderStatus))
	}
	return types.ObjectValueMust(itemStatusAttrTypes, map[string]attr.Value{
		"phase":           types.StringValue(string(is.Phase)),
		"job_id_finished": stringOrNull(is.JobIDFinished),
		"last_error":      errorValue(is.LastError),
		"provider_status": ps,
	})
}

func errorValue(e *engine.Error) types.Object {
	if e == nil {
		return types.ObjectNull(errorAttrTypes)
	}
	codes := make([]attr.Value, len(e.Codes))
	for i, c := range e.Codes {
		codes[i] = types.StringValue(c)
	}
	return types.ObjectValueMust(errorAttrTypes, map[string]attr.Value{
		"operation": types.StringValue(e.Operation),
		"reason":    types.StringValue(e.Reason),
		"message":   types.StringValue(e.Message),
		"codes":     types.ListValueMust(types.StringType, codes),
	})
}

func stringOrNull(s string) types.String {
	if s == "" {
		return types.StringNull()
	}
	return types.StringValue(s)
}

// plannedStatus is the status a job will leave, as far as it is known
// before it runs: items that run and the execution's own fields are
// unknown; skipped items keep their status; orphans leave the map.
func plannedStatus(prev engine.Status, plan engine.Plan) types.Object {
	items := make(map[string]attr.Value, len(plan.Run)+len(plan.Skip))
	for _, n := range plan.Run {
		items[n] = types.ObjectUnknown(itemStatusAttrTypes)
	}
	for _, n := range plan.Skip {
		items[n] = itemStatusValue(prev.Items[n])
	}
	return types.ObjectValueMust(statusAttrTypes, map[string]attr.Value{
		"phase":           types.StringUnknown(),
		"job_id":          types.StringUnknown(),
		"job_id_finished": types.StringUnknown(),
		"last_error":      types.ObjectUnknown(errorAttrTypes),
		"deploy_items":    types.MapValueMust(types.ObjectType{AttrTypes: itemStatusAttrTypes}, items),
	})
}

// exportValues renders exports and sensitive_exports: one attribute per
// item in names. unknown lists items whose export is not known yet.
func exportValues(st engine.Status, names []string, sensitive map[string]bool, unknown map[string]bool) (types.Dynamic, types.Dynamic, diag.Diagnostics) {
	var diags diag.Diagnostics
	attrTypes := make(map[string]attr.Type, len(names))
	plain := make(map[string]attr.Value, len(names))
	secret := make(map[string]attr.Value, len(names))
	for _, n := range names {
		attrTypes[n] = types.DynamicType
		plain[n], secret[n] = types.DynamicNull(), types.DynamicNull()
		v := types.DynamicUnknown()
		if !unknown[n] {
			var raw json.RawMessage
			if is := st.Items[n]; is != nil {
				raw = is.Export
			}
			val, err := jsonToValue(raw)
			if err != nil {
				diags.AddAttributeError(path.Root("exports").AtName(n), "Export cannot be represented", err.Error())
				continue
			}
			v = types.DynamicValue(val)
		}
		if sensitive[n] {
			secret[n] = v
		} else {
			plain[n] = v
		}
	}
	return types.DynamicValue(types.ObjectValueMust(attrTypes, plain)),
		types.DynamicValue(types.ObjectValueMust(attrTypes, secret)), diags
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
