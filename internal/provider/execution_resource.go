package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
)

var (
	_ resource.ResourceWithConfigure      = (*executionResource)(nil)
	_ resource.ResourceWithValidateConfig = (*executionResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*executionResource)(nil)
	_ resource.ResourceWithImportState    = (*executionResource)(nil)
)

// defaultOperationTimeout bounds a whole apply or destroy of one execution
// unless `timeouts` says otherwise. Items have their own, shorter default.
const defaultOperationTimeout = time.Hour

// privateKey is where the engine status lives in private state. It holds
// what the status attribute shows plus what users need not see: applied
// spec hashes, deployer state (exec's STATE_PATH) and the specs of items
// that must still be deleted.
const privateKey = "engine_status"

type executionResource struct {
	deployers *deployer.Registry
	engine    *engine.Engine
}

func (r *executionResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_execution"
}

func (r *executionResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	if req.ProviderData == nil {
		return
	}
	e, ok := req.ProviderData.(*engine.Engine)
	if !ok {
		resp.Diagnostics.AddError("Unexpected provider data", fmt.Sprintf("got %T", req.ProviderData))
		return
	}
	r.engine = e
}

// privateState is the subset of the framework's private state API we use;
// requests and responses expose it under different concrete types.
type privateGetter interface {
	GetKey(ctx context.Context, key string) ([]byte, diag.Diagnostics)
}

type privateSetter interface {
	SetKey(ctx context.Context, key string, value []byte) diag.Diagnostics
}

func loadStatus(ctx context.Context, p privateGetter) (engine.Status, diag.Diagnostics) {
	var st engine.Status
	raw, diags := p.GetKey(ctx, privateKey)
	if diags.HasError() || len(raw) == 0 {
		return st, diags
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		diags.AddError("Corrupt private state", "The stored engine status cannot be read: "+err.Error()+
			". Remove the resource from state and import it again.")
	}
	return st, diags
}

func saveStatus(ctx context.Context, p privateSetter, st engine.Status) diag.Diagnostics {
	raw, err := json.Marshal(st)
	if err != nil {
		var diags diag.Diagnostics
		diags.AddError("Cannot store engine status", err.Error())
		return diags
	}
	return p.SetKey(ctx, privateKey, raw)
}

func (r *executionResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m types.Map
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("deploy_items"), &m)...)
	if resp.Diagnostics.HasError() || m.IsNull() || m.IsUnknown() {
		return
	}
	its := map[string]deployItemModel{}
	resp.Diagnostics.Append(m.ElementsAs(ctx, &its, false)...)
	if resp.Diagnostics.HasError() {
		return
	}
	// Validate whatever is known; unknown parts are checked again at apply.
	ex := engine.Execution{Items: map[string]engine.ItemSpec{}}
	graphKnown := true
	for name, it := range its {
		if it.Type.IsUnknown() || it.DependsOn.IsUnknown() {
			graphKnown = false
			continue
		}
		known := it
		if it.Config.IsUnknown() {
			known.Config = types.StringValue("{}")
		}
		if it.Timeout.IsUnknown() {
			known.Timeout = types.StringNull()
		}
		spec, diags := specOf(name, known)
		resp.Diagnostics.Append(diags...)
		if it.Config.IsUnknown() || diags.HasError() {
			spec.Config = nil // skip the deployer's check, it would only repeat ours
		}
		ex.Items[name] = spec
	}
	for _, p := range engine.Validate(ex, r.deployers) {
		if !graphKnown && p.Field == "depends_on" {
			continue // a missing item may be one whose type is not known yet
		}
		resp.Diagnostics.AddAttributeError(path.Root("deploy_items").AtMapKey(p.Item).AtName(p.Field),
			"Invalid deploy item "+p.Field, p.Message)
	}
}

func (r *executionResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return // destroy
	}
	var plan executionModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	plan.ID = plan.Name
	want, known, diags := desiredOf(ctx, plan.Name.ValueString(), plan.DeployItems)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !known || plan.Name.IsUnknown() {
		plan.Status = types.ObjectUnknown(statusAttrTypes)
		plan.Exports, plan.SensitiveExports = types.DynamicUnknown(), types.DynamicUnknown()
		resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
		return
	}
	prev, diags := loadStatus(ctx, req.Private)
	resp.Diagnostics.Append(diags...)
	job := engine.PlanJob(want.exec, prev)
	unknown := map[string]bool{}
	if job.Noop() {
		plan.Status = statusValue(prev)
	} else {
		plan.Status = plannedStatus(prev, job)
		for _, n := range job.Run {
			unknown[n] = true
		}
		tflogPlan(ctx, plan.Name.ValueString(), job)
	}
	var d diag.Diagnostics
	plan.Exports, plan.SensitiveExports, d = exportValues(prev, sortedKeys(want.exec.Items), want.sensitive, unknown)
	resp.Diagnostics.Append(d...)
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

func (r *executionResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan executionModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := plan.Timeouts.Create(ctx, defaultOperationTimeout)
	resp.Diagnostics.Append(diags...)
	r.apply(ctx, &plan, engine.Status{}, timeout, &resp.State, resp.Private, &resp.Diagnostics)
}

func (r *executionResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan executionModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	prev, diags := loadStatus(ctx, req.Private)
	resp.Diagnostics.Append(diags...)
	timeout, diags := plan.Timeouts.Update(ctx, defaultOperationTimeout)
	resp.Diagnostics.Append(diags...)
	r.apply(ctx, &plan, prev, timeout, &resp.State, resp.Private, &resp.Diagnostics)
}

// stateSetter is what Create and Update responses share.
type stateSetter interface {
	Set(ctx context.Context, val any) diag.Diagnostics
}

// apply runs a reconcile job (unless the plan says nothing runs) and
// writes the resulting state, also when items failed: the state must tell
// the truth about every item.
func (r *executionResource) apply(ctx context.Context, plan *executionModel, prev engine.Status, timeout time.Duration,
	state stateSetter, private privateSetter, diags *diag.Diagnostics) {
	if diags.HasError() {
		return
	}
	if r.engine == nil {
		diags.AddError("Provider not configured", "The landscaper provider was not configured before use.")
		return
	}
	name := plan.Name.ValueString()
	want, known, d := desiredOf(ctx, name, plan.DeployItems)
	diags.Append(d...)
	if !known && !d.HasError() {
		diags.AddError("Deploy items not known", "deploy_items still holds unknown values at apply time.")
	}
	if diags.HasError() {
		return
	}

	st := prev
	if job := engine.PlanJob(want.exec, prev); job.Noop() {
		// Nothing runs, so no job starts; only the recorded specs follow
		// the config (an edge or a timeout changed).
		st = prev.Clone()
		for n, spec := range want.exec.Items {
			st.Items[n].Spec = spec
		}
	} else {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		logs := newJobLogger(ctx, want.sensitive, prev)
		run := *r.engine
		run.Observe = logs.observe
		st = logs.redact(run.Reconcile(ctx, want.exec, prev, uuid.NewString()))
		diags.Append(itemDiagnostics(st, false)...)
	}

	plan.ID = plan.Name
	plan.Status = statusValue(st)
	plan.Exports, plan.SensitiveExports, d = exportValues(st, sortedKeys(want.exec.Items), want.sensitive, nil)
	diags.Append(d...)
	diags.Append(saveStatus(ctx, private, st)...)
	diags.Append(state.Set(ctx, plan)...)
}

func (r *executionResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	// Everything lives in this state; there is nothing outside to refresh.
	// Read only makes sure the state can be decoded.
	var m executionModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
}

func (r *executionResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var m executionModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	prev, diags := loadStatus(ctx, req.Private)
	resp.Diagnostics.Append(diags...)
	timeout, diags := m.Timeouts.Delete(ctx, defaultOperationTimeout)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	if r.engine == nil {
		resp.Diagnostics.AddError("Provider not configured", "The landscaper provider was not configured before use.")
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	logs := newJobLogger(ctx, nil, prev)
	run := *r.engine
	run.Observe = logs.observe
	st := logs.redact(run.Delete(ctx, m.Name.ValueString(), prev, uuid.NewString()))
	if len(st.Items) == 0 && st.LastError == nil {
		return // gone; the framework removes the resource from state
	}
	// What was not deleted stays in state, so a later destroy finishes.
	resp.Diagnostics.Append(itemDiagnostics(st, true)...)
	remaining := sortedKeys(st.Items)
	m.Status = statusValue(st)
	sensitive := map[string]bool{}
	var sens map[string]deployItemModel
	if its, _, _ := items(ctx, m.DeployItems); its != nil {
		sens = its
	}
	for _, n := range remaining {
		sensitive[n] = sens[n].SensitiveExport.ValueBool()
	}
	var d diag.Diagnostics
	m.Exports, m.SensitiveExports, d = exportValues(st, remaining, sensitive, nil)
	resp.Diagnostics.Append(d...)
	resp.Diagnostics.Append(saveStatus(ctx, resp.Private, st)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (r *executionResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("name"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
}

// itemDiagnostics reports one error per item that failed in the job just
// run, on that item's attribute path, and the execution's own error when
// no item explains it (an interruption before anything ran, say).
func itemDiagnostics(st engine.Status, deleting bool) diag.Diagnostics {
	var diags diag.Diagnostics
	for _, n := range sortedKeys(st.Items) {
		is := st.Items[n]
		if is.JobIDFinished != st.JobID || is.LastError == nil {
			continue
		}
		summary := fmt.Sprintf("Deploy item %q failed", n)
		if is.Phase == engine.PhaseDeleteFailed {
			summary = fmt.Sprintf("Deploy item %q could not be deleted", n)
		}
		diags.AddAttributeError(path.Root("deploy_items").AtMapKey(n), summary, errorDetail(is.LastError))
	}
	if st.LastError != nil && !diags.HasError() {
		summary := fmt.Sprintf("Execution %s", strings.ToLower(string(st.Phase)))
		if deleting {
			summary = "Execution could not be deleted"
		}
		diags.AddError(summary, errorDetail(st.LastError))
	}
	return diags
}

func errorDetail(e *engine.Error) string {
	codes := strings.Join(e.Codes, ", ")
	if codes == "" {
		codes = "none"
	}
	return fmt.Sprintf("operation: %s\nreason: %s\nmessage: %s\ncodes: %s", e.Operation, e.Reason, e.Message, codes)
}
