package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/privatestate"
)

const executionType = "landscaper_execution"

// executionSchemaVersion is bumped whenever the schema's type changes
// (TestSchemaTypesAreVersioned holds it to that). Version 1 added targets;
// version 2 rollout, rollout_plan, deploy_items[*].rollout_group,
// status.rollout, plan_cluster_changes and cluster_changes (state of
// version 1 reads them as null); version 3 targets[*].name, naming a
// provider target (earlier state reads it as null: an inline target).
const executionSchemaVersion = 3

// defaultOperationTimeout bounds a whole apply or destroy of one resource
// unless `timeouts` says otherwise. Items have their own, shorter default.
const defaultOperationTimeout = time.Hour

var (
	_ resource.Resource                = (*executionResource)(nil)
	_ resource.ResourceWithImportState = (*executionResource)(nil)
)

// executionResource is landscaper_execution as the framework sees it: its
// schema and import. Its data RPCs are served by executions at the
// protocol level (server.go).
type executionResource struct{ servedBelowFramework }

func (r *executionResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_execution"
}

func (r *executionResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Version: executionSchemaVersion,
		MarkdownDescription: "A Landscaper execution: a set of deploy items with dependencies, reconciled " +
			"in-process during `terraform apply` and deleted in reverse dependency order during `terraform destroy`.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				MarkdownDescription: "Same as `name`.",
				Computed:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"name": schema.StringAttribute{
				MarkdownDescription: "Name of the execution; its identity. Changing it replaces the resource. " +
					"Deploy items see it as `EXECUTION_NAME`. " + nameRuleDescription,
				Required: true,
			},
			attrReconcileTrigger: reconcileTriggerAttribute("execution"),
			attrDeployItems: schema.MapNestedAttribute{
				MarkdownDescription: "Deploy items keyed by name. Removing an item deletes it (its deployer's " +
					"delete runs) during the next apply. Keys follow Landscaper's name rule: " + core.NameRule + ".",
				Required: true,
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"type": schema.StringAttribute{
						MarkdownDescription: "Deployer type: `exec`, or `landscaper.gardener.cloud/mock` (alias `mock`).",
						Required:            true,
					},
					"config": schema.StringAttribute{
						MarkdownDescription: "Deployer configuration as JSON or YAML text (for example from `jsonencode`). " +
							"Checked by the deployer at plan time: type errors fail the plan, unknown fields only warn (Landscaper ignores them). Empty means `{}`.",
						Optional: true,
					},
					"depends_on": schema.ListAttribute{
						MarkdownDescription: "Names of other deploy items of this execution that must have succeeded " +
							"before this one starts. On destroy, this item is deleted before them.",
						Optional:    true,
						ElementType: types.StringType,
					},
					"target": schema.StringAttribute{
						MarkdownDescription: "Name of an entry of `targets` the item acts on. Deployers that act on a " +
							"cluster need one; changing the target (or its config) re-runs the item.",
						Optional: true,
					},
					"timeout": schema.StringAttribute{
						MarkdownDescription: "How long one run of the item may take, retries included: a Go duration " +
							"(`90s`, `10m`) or `none`. Over it the item fails with `ERR_TIMEOUT`. Defaults to `10m`.",
						Optional: true,
					},
					attrUpdateOnChangeOnly: schema.BoolAttribute{
						MarkdownDescription: "When `true`, the item is not re-run while its type, config and target equal " +
							"those of its last successful run. When `false`, it re-runs in every apply that runs anything. Defaults to `true`.",
						Optional: true,
					},
					attrRolloutGroup: rolloutGroupAttribute(),
					attrSensitiveExport: schema.BoolAttribute{
						MarkdownDescription: "When `true`, the item's export appears in `sensitive_exports` instead of " +
							"`exports`, and is masked in logs. Defaults to `false`.",
						Optional: true,
					},
				}},
			},
			attrTargets:     targetsAttribute("Targets the deploy items act on, by name"),
			attrRollout:     rolloutAttribute(executionRollout),
			attrRolloutPlan: rolloutPlanAttribute(executionRollout),
			"exports": schema.DynamicAttribute{
				MarkdownDescription: "An object with one attribute per deploy item holding its export " +
					"(null when the item exported nothing, failed, or its export is sensitive).",
				Computed: true,
			},
			"sensitive_exports": schema.DynamicAttribute{
				MarkdownDescription: "Like `exports`, for the items with `sensitive_export = true`; null for the others.",
				Computed:            true,
				Sensitive:           true,
			},
			"status": schema.SingleNestedAttribute{
				MarkdownDescription: "What the last job did.",
				Computed:            true,
				Attributes: map[string]schema.Attribute{
					"phase": schema.StringAttribute{Computed: true, MarkdownDescription: "Phase of the execution: " +
						"`Init`, `Progressing`, `Completing`, `Succeeded`, `Failed`; when deleting `InitDelete`, `Deleting`, `DeleteFailed`."},
					"job_id":          schema.StringAttribute{Computed: true, MarkdownDescription: "ID of the last job; every apply that runs anything starts a new one."},
					"job_id_finished": schema.StringAttribute{Computed: true, MarkdownDescription: "Equals `job_id` once that job has finished."},
					"last_error":      errorSchema("the execution"),
					attrDeployItems: schema.MapNestedAttribute{
						MarkdownDescription: "Status of every deploy item, by name.",
						Computed:            true,
						NestedObject:        schema.NestedAttributeObject{Attributes: itemStatusAttributes()},
					},
					attrRollout: rolloutStatusAttribute(executionRollout),
				},
			},
			attrPlanClusterChanges: planClusterChangesAttribute(),
			attrClusterChanges:     clusterChangesAttribute("by name, as in `status.deploy_items`"),
			"timeouts":             timeoutsAttribute(ctx, "execution"),
		},
	}
}

// executions implements landscaper_execution on Terraform values:
// plan-time validation, planning, apply, refresh and destroy.
type executions struct {
	vt        valueTypes
	deployers *deployer.Registry
	// engine is set once the provider is configured.
	engine func() *engine.Engine
	// clusterChanges is the provider's plan_cluster_changes.
	clusterChanges func() bool
	// targets and allowed are the provider's targets and
	// allowed_deployers; nil before the provider is configured.
	targets func() *providerTargets
	allowed func() *allowedDeployers
}

var _ protocolResource = (*executions)(nil)

func (x *executions) objectType() tftypes.Object { return x.vt.resource }
func (x *executions) schemaVersion() int64       { return executionSchemaVersion }

// desired is an execution as the engine sees it, plus where each export goes.
type desired struct {
	exec      engine.Execution
	sensitive map[string]bool
	// pending lists items with values only known after another resource's
	// apply; their specs here are placeholders. unrouted lists those whose
	// sensitive_export flag is among the unknowns.
	pending, unrouted map[string]bool
}

// desiredOf reads name, targets and deploy_items of a resource value.
// known is false while the name or the set of items is unknown.
func desiredOf(v tftypes.Value, pt *providerTargets) (desired, bool, problems) {
	f := fields(v)
	items := f[attrDeployItems]
	if !f["name"].IsKnown() || !items.IsKnown() {
		return desired{}, false, nil
	}
	its := fields(items)
	tgts, tgtsKnown, ps := targetsOf(f[attrTargets], pt, attrPath(attrTargets))
	d := desired{
		exec: engine.Execution{Name: str(f["name"]), Items: make(map[string]engine.ItemSpec, len(its)),
			ReconcileTrigger: triggerOf(f)},
		sensitive: make(map[string]bool, len(its)),
		pending:   map[string]bool{},
		unrouted:  map[string]bool{},
	}
	for name, it := range its {
		itf := fields(it)
		tname := str(itf["target"])
		if !it.IsFullyKnown() || (tname != "" && !tgtsKnown) {
			d.pending[name] = true
			d.unrouted[name] = !itf[attrSensitiveExport].IsKnown()
			d.exec.Items[name] = engine.ItemSpec{DependsOn: stringList(itf["depends_on"])}
		} else {
			spec, p := specOf(name, itf, tgts)
			ps = append(ps, p...)
			d.exec.Items[name] = spec
		}
		d.sensitive[name] = boolean(itf[attrSensitiveExport], defaultSensitiveExport)
	}
	ps = append(ps, rolloutOf(f, &d.exec)...)
	return d, true, ps
}

// refused reports every item whose type the provider's allowed_deployers
// does not list, on its type's path.
func (x *executions) refused(want desired) problems {
	var ps problems
	a := x.allowed()
	for _, n := range slices.Sorted(maps.Keys(want.exec.Items)) {
		if typ := want.exec.Items[n].Type; typ != "" {
			if err := a.check(typ); err != nil {
				ps.add(itemPath(n, "type"), "Deployer not allowed", fmt.Sprintf("deploy item %q: %v; nothing runs.", n, err))
			}
		}
	}
	return ps
}

// executionTargets are the targets of an execution's stored items (and
// of the specs its rollouts keep to revert to), by item, under prefix.
func executionTargets(st engine.Status, prefix string) map[string]*deployer.Target {
	out := map[string]*deployer.Target{}
	for n, is := range st.Items {
		if is != nil && is.Spec.Target != nil {
			out[prefix+n] = is.Spec.Target
		}
	}
	for _, r := range st.Rollouts {
		for n, spec := range r.Previous {
			if spec.Target != nil && out[prefix+n] == nil {
				out[prefix+n] = spec.Target
			}
		}
	}
	return out
}

// executionDeletions are the named items of an execution's status as a
// delete job meets them, keyed and placed in deploy_items under prefix.
func executionDeletions(st engine.Status, names []string, prefix string) []deletion {
	var out []deletion
	for _, n := range names {
		if is := st.Items[n]; is != nil {
			out = append(out, deletion{key: prefix + n, typ: is.Spec.Type, at: itemPath(prefix + n), withheld: is.Spec.Withheld})
		}
	}
	return out
}

// specOf converts one known deploy item; problems carry its field's path.
func specOf(name string, f map[string]tftypes.Value, targets map[string]*deployer.Target) (engine.ItemSpec, problems) {
	var ps problems
	spec := engine.ItemSpec{
		Type:               str(f["type"]),
		DependsOn:          stringList(f["depends_on"]),
		UpdateOnChangeOnly: boolean(f[attrUpdateOnChangeOnly], defaultUpdateOnChangeOnly),
	}
	cfg, err := deployer.NormalizeConfig(str(f["config"]))
	if err != nil {
		ps.add(itemPath(name, "config"), "Invalid deploy item config", err.Error())
	}
	spec.Config = cfg
	spec.Timeout = engine.DefaultTimeout
	if t := f["timeout"]; t.IsKnown() && !t.IsNull() {
		if spec.Timeout, err = engine.ParseTimeout(str(t)); err != nil {
			ps.add(itemPath(name, "timeout"), "Invalid deploy item timeout", err.Error())
		}
	}
	if tname := str(f["target"]); tname != "" {
		if spec.Target = targets[tname]; spec.Target == nil {
			ps.add(itemPath(name, "target"), "Unknown target", fmt.Sprintf("%q is not a key of targets; known targets: %s",
				tname, orNone(slices.Sorted(maps.Keys(targets)))))
		}
	}
	return spec, ps
}

// fieldAttribute maps the engine's item fields to this resource's attributes.
var fieldAttribute = map[engine.Field]string{
	engine.FieldType: "type", engine.FieldConfig: "config", engine.FieldDependsOn: "depends_on",
	engine.FieldTimeout: "timeout", engine.FieldTarget: "target",
}

// validate checks a configuration at plan time. Unknown parts are skipped
// and checked again when they are known.
func (x *executions) validate(_ context.Context, config tftypes.Value) problems {
	var ps problems
	f := fields(config)
	validateName(&ps, tftypes.NewAttributePath().WithAttributeName("name"), "name", f["name"])
	if items := f[attrDeployItems]; items.IsKnown() {
		for _, n := range slices.Sorted(maps.Keys(fields(items))) {
			if err := core.ValidName(n); err != nil {
				ps.add(itemPath(n), "Invalid deploy item name", err.Error())
			}
		}
	}
	ps = append(ps, validateTimeouts(f["timeouts"])...)
	ps = append(ps, validateRollout(f)...)
	tgts, tgtsKnown, tps := targetsOf(f[attrTargets], x.targets(), attrPath(attrTargets))
	ps = append(ps, tps...)
	ps = append(ps, validateTargets(f[attrTargets], x.deployers, tftypes.NewAttributePath().WithAttributeName(attrTargets))...)
	ex := engine.Execution{Items: map[string]engine.ItemSpec{}}
	graphKnown := true
	for name, it := range fields(f[attrDeployItems]) {
		itf := fields(it)
		if itf == nil || !itf["type"].IsKnown() || !itf["depends_on"].IsFullyKnown() {
			graphKnown = false
			continue
		}
		known := make(map[string]tftypes.Value, len(itf))
		for k, v := range itf {
			if v.IsKnown() {
				known[k] = v
			}
		}
		targetUnknown := !itf["target"].IsKnown() || (str(itf["target"]) != "" && !tgtsKnown)
		if targetUnknown {
			delete(known, "target")
		}
		spec, p := specOf(name, known, tgts)
		ps = append(ps, p...)
		if targetUnknown {
			spec.Target = &deployer.Target{} // some target; its type is checked once known
		}
		if !itf["config"].IsKnown() || len(p) > 0 {
			spec.Config = nil // skip the deployer's check: unknown, or already reported
		}
		ex.Items[name] = spec
	}
	for _, p := range engine.Validate(ex, x.deployers) {
		if !graphKnown && p.Field == engine.FieldDependsOn {
			continue // a "missing" item may be one whose type is not known yet
		}
		if p.Warning {
			ps.warn(itemPath(p.Item, fieldAttribute[p.Field]), "Deploy item "+fieldAttribute[p.Field]+" has unknown fields", p.Message)
			continue
		}
		ps.add(itemPath(p.Item, fieldAttribute[p.Field]), "Invalid deploy item "+fieldAttribute[p.Field], p.Message)
	}
	return ps
}

func (x *executions) settled(_ context.Context, _ *tfprotov6.DynamicValue, private []byte) (bool, problems) {
	blobs, err := privatestate.Blobs(private)
	return err == nil && len(blobs[settledKey]) == 1 && x.targets().pointAsBefore(blobs), nil
}

// plan computes the planned state. It shows exactly what the next job
// will do, because it asks engine.PlanJob, as apply does: items that run
// have unknown status and export; the rest stays known.
func (x *executions) plan(ctx context.Context, prior, proposed tftypes.Value, priorPrivate []byte) (tftypes.Value, []*tftypes.AttributePath, problems) {
	if proposed.IsNull() {
		// A destroy: the provider's targets the items used must still be
		// there, as the state keeps no config for them.
		saved, err := decodeExecutionPrivate(priorPrivate)
		if err != nil {
			return proposed, nil, nil
		}
		ps := x.allowed().refusedDeletes(executionDeletions(saved.Status, saved.Status.DeletedOnDestroy(), ""), "is deleted when the resource is destroyed")
		ps = append(ps, x.targets().missingForDestroy(executionTargets(saved.Status, ""), "destroying")...)
		return proposed, nil, append(ps, movedNeverApplied(saved.Status)...)
	}
	var ps problems
	f := fields(proposed)
	f["id"] = f["name"]

	// With no prior state this plans a create, also when it replaces an
	// object: the replaced object's private state (which Terraform passes
	// along, and hands to its delete) is not the new object's status.
	if prior.IsNull() {
		priorPrivate = nil
	}
	saved, savedErr := decodeExecutionPrivate(priorPrivate)
	var replace []*tftypes.AttributePath
	// A new name replaces the execution, unless no job ever ran under the
	// old one (moved or imported, not applied yet): then nothing exists
	// under it, and replacing would only drop what the first apply adopts.
	if pf := fields(prior); pf != nil && !pf["name"].Equal(f["name"]) && (savedErr != nil || saved.Status.JobID != "") {
		replace = append(replace, tftypes.NewAttributePath().WithAttributeName("name"))
	}
	cct := x.vt.resource.AttributeTypes[attrClusterChanges]
	f[attrClusterChanges] = tftypes.NewValue(cct, tftypes.UnknownValue)
	planned := tftypes.NewValue(x.vt.resource, f)
	pt := x.targets().assuming(locations(executionTargets(saved.Status, "")))
	want, known, p := desiredOf(planned, pt)
	ps = append(ps, p...)
	ps = append(ps, x.refused(want)...)
	if !known || ps.errors() {
		f[attrRolloutPlan] = tftypes.NewValue(x.vt.rolloutPlan(), tftypes.UnknownValue)
		return x.vt.withComputedUnknown(f), replace, ps
	}
	if savedErr != nil {
		ps.add(nil, "Corrupt private state", savedErr.Error())
		return planned, replace, ps
	}
	prev := saved.Status
	job := engine.PlanJob(want.exec, prev).WithRun(slices.Sorted(maps.Keys(want.pending))...)
	assumed := assumedItems(pt, want.exec, job)
	if len(assumed) > 0 && (!job.Noop() || !proposed.Equal(prior)) {
		// Terraform plans this resource again during the apply, with the
		// target's config known: an item whose cluster then turns out to
		// be another would run, so its outcome is not known here.
		job = job.WithRun(assumed...)
	}
	if len(replace) > 0 {
		ps = append(ps, x.allowed().refusedDeletes(executionDeletions(prev, prev.DeletedOnDestroy(), ""), "is deleted with the object this plan replaces")...)
	} else {
		ps = append(ps, x.allowed().refusedDeletes(executionDeletions(prev, job.Delete, ""), "is no longer in deploy_items")...)
	}
	orphans := map[string]*deployer.Target{}
	for _, n := range job.Delete {
		orphans[n] = prev.Items[n].Spec.Target
	}
	ps = append(ps, x.targets().missingForDestroy(orphans, "deleting")...)
	if ps = append(ps, x.adoptionProblems(want.exec, prev, job)...); ps.errors() {
		return planned, replace, ps
	}
	f[attrClusterChanges] = tftypes.NewValue(cct, nil)
	e := x.engine()
	switch {
	case job.Noop():
		if pf := fields(prior); pf != nil {
			f[attrClusterChanges] = pf[attrClusterChanges]
		}
	case len(want.pending) > 0 || runsOnPending(pt, want.exec, job.Run):
		// Nothing to dry-run against before the cluster's config is known.
		f[attrClusterChanges] = tftypes.NewValue(cct, tftypes.UnknownValue)
	case e != nil && clusterChangesWanted(f, x.clusterChanges()):
		pv := &previewer{e: e, changes: map[string]tftypes.Value{}}
		pv.add(ctx, str(f["name"]), want.exec, prev, engine.Run{}, job.Run, func(item string) string { return item })
		f[attrClusterChanges] = pv.value(cct)
		ps = append(ps, pv.ps...)
	}
	unknown := map[string]bool{}
	if !job.Noop() {
		f[attrRolloutPlan] = rolloutPlanValue(x.vt.rolloutPlan(), job.Rollouts)
	}
	switch {
	case job.Noop():
		f["status"] = x.vt.statusValue(engine.Settle(want.exec, prev, job))
		if want.exec.Rollout == nil {
			f[attrRolloutPlan] = tftypes.NewValue(x.vt.rolloutPlan(), nil)
		}
	case len(job.Skip) == 0 && len(job.Delete) == 0 && len(job.Drop) == 0:
		// Everything runs and nothing leaves (a create, typically): no
		// part of status or exports is known, so say so in one value
		// instead of one per item; Terraform shows one line, not hundreds.
		return x.vt.withComputedUnknown(f), replace, ps
	default:
		f["status"] = x.vt.plannedStatus(prev, job)
		for _, n := range job.Run {
			unknown[n] = true
		}
	}
	var err error
	if f["exports"], f["sensitive_exports"], err = exportValues(prev, slices.Sorted(maps.Keys(want.exec.Items)), want.sensitive, unknown, want.unrouted); err != nil {
		ps.add(tftypes.NewAttributePath().WithAttributeName("exports"), "Export cannot be represented", err.Error())
	}
	return tftypes.NewValue(x.vt.resource, f), replace, ps
}

// assumedItems are the items a plan skips only because it takes their
// pending provider targets to point where they did (providerTargets.assuming).
func assumedItems(pt *providerTargets, ex engine.Execution, job engine.Plan) []string {
	var out []string
	for _, n := range job.Skip {
		if pt.isPending(ex.Items[n].Target) {
			out = append(out, n)
		}
	}
	return out
}

// runsOnPending reports whether an item that runs acts on a pending
// provider target.
func runsOnPending(pt *providerTargets, ex engine.Execution, run []string) bool {
	return slices.ContainsFunc(run, func(n string) bool { return pt.isPending(ex.Items[n].Target) })
}

// apply runs what the plan showed (engine.Apply), or a delete job when
// planned is null, and returns the new state and private state. The state
// is written also when items failed: it must tell the truth about every item.
func (x *executions) apply(ctx context.Context, prior, planned tftypes.Value, private []byte) (tftypes.Value, []byte, problems) {
	return applyJob(ctx, x.engine(), prior, planned, private, decodeExecutionPrivate, x.applyItems, x.destroy)
}

func (x *executions) applyItems(r *jobRun[storedExecution]) (tftypes.Value, []byte, problems) {
	ctx, f, saved := r.ctx, r.f, r.saved
	want, known, ps := desiredOf(tftypes.NewValue(x.vt.resource, f), x.targets())
	ps = append(ps, x.refused(want)...)
	if !known || len(want.pending) > 0 {
		ps.add(nil, "Deploy items not known", "deploy_items still holds unknown values at apply time.")
	}
	if ps.errors() {
		return r.failed(ps)
	}
	e := r.engine
	var err error
	if !f[attrRolloutPlan].IsKnown() {
		f[attrRolloutPlan] = rolloutPlanValue(x.vt.rolloutPlan(), engine.PlanJob(want.exec, saved.Status).Rollouts)
	}
	sensitive := saved.sensitiveNames(want.sensitive)
	logs := newJobLogger(ctx, sensitive, saved.Status)
	logs.addProviderTargets(x.targets())
	st := logs.redact(e.Apply(ctx, want.exec, saved.Status, engine.Run{Observe: logs.observe}))
	if st.JobID != saved.Status.JobID {
		ps = append(ps, itemProblems(st)...)
		ps = append(ps, rolloutProblems(executionRollouts(st, true), r.prior.IsNull())...)
	}
	f["status"] = x.vt.statusValue(st)
	f[attrClusterChanges] = keepClusterChanges(x.vt.resource.AttributeTypes[attrClusterChanges], f[attrClusterChanges])
	if f["exports"], f["sensitive_exports"], err = exportValues(st, slices.Sorted(maps.Keys(want.exec.Items)), want.sensitive, nil, nil); err != nil {
		ps.add(tftypes.NewAttributePath().WithAttributeName("exports"), "Export cannot be represented", err.Error())
	}
	priv, err := encodeExecutionPrivate(st, sensitive)
	if err != nil {
		ps.add(nil, "Cannot store engine status", err.Error())
	}
	return tftypes.NewValue(x.vt.resource, f), priv, ps
}

// destroy runs a delete job. What was not deleted stays in state, so a
// later destroy finishes the job.
func (x *executions) destroy(r *jobRun[storedExecution]) (tftypes.Value, []byte, problems) {
	ctx, f, saved, e := r.ctx, r.f, r.saved, r.engine
	sensitive := map[string]bool{}
	for n, it := range fields(f[attrDeployItems]) {
		sensitive[n] = boolean(fields(it)[attrSensitiveExport], defaultSensitiveExport)
	}
	sensitive = saved.sensitiveNames(sensitive)
	logs := newJobLogger(ctx, sensitive, saved.Status)
	logs.addProviderTargets(x.targets())
	st := logs.redact(e.Destroy(ctx, str(f["name"]), saved.Status, engine.Run{Observe: logs.observe}))
	if len(st.Items) == 0 && st.LastError == nil {
		return tftypes.NewValue(x.vt.resource, nil), nil, nil
	}
	ps := itemProblems(st)
	f["status"] = x.vt.statusValue(st)
	var err error
	if f["exports"], f["sensitive_exports"], err = exportValues(st, slices.Sorted(maps.Keys(st.Items)), sensitive, nil, nil); err != nil {
		ps.add(nil, "Export cannot be represented", err.Error())
	}
	priv, err := encodeExecutionPrivate(st, sensitive)
	if err != nil {
		ps.add(nil, "Cannot store engine status", err.Error())
	}
	return tftypes.NewValue(x.vt.resource, f), priv, ps
}

// read is Terraform's refresh: everything lives in state, except what the
// deployers left outside it. Items whose deployer can check for drift are
// asked; a drifted item makes the next plan an update that runs it again.
func (x *executions) read(ctx context.Context, state tftypes.Value, private []byte) (tftypes.Value, []byte, problems) {
	e := x.engine()
	if e == nil || state.IsNull() || !x.refreshes(private) {
		return state, private, nil
	}
	saved, err := decodeExecutionPrivate(private)
	if err != nil || !saved.Status.Succeeded() {
		return state, private, nil
	}
	st, changed := e.Refresh(ctx, str(fields(state)["name"]), saved.Status)
	if !changed {
		return state, private, nil
	}
	var ps problems
	for _, n := range slices.Sorted(maps.Keys(st.Items)) {
		if d := st.Items[n].Drift; d != "" && saved.Status.Items[n].Drift == "" {
			ps.warn(itemPath(n), fmt.Sprintf("Deploy item %q changed outside Terraform", n), d+"\nThe next apply runs the item again.")
		}
	}
	priv, err := encodeExecutionPrivate(st, saved.sensitiveNames(nil))
	if err != nil {
		ps.add(nil, "Cannot store engine status", err.Error())
		return state, private, ps
	}
	return state, priv, ps
}

// itemProblems reports one error per item that failed in the job just
// run, on that item's attribute path, and the execution's own error when
// no item explains it (an interruption before anything ran, say).
func itemProblems(st engine.Status) problems {
	var ps problems
	for _, n := range slices.Sorted(maps.Keys(st.Items)) {
		is := st.Items[n]
		if is.JobIDFinished != st.JobID || is.LastError == nil {
			continue
		}
		summary := fmt.Sprintf("Deploy item %q failed", n)
		if is.Phase == core.PhaseDeleteFailed {
			summary = fmt.Sprintf("Deploy item %q could not be deleted", n)
		}
		ps.add(itemPath(n), summary, errorDetail(is.LastError))
	}
	if st.LastError != nil && len(ps) == 0 && !rolloutError(st.LastError) {
		summary := "Execution " + strings.ToLower(string(st.Phase))
		if st.Phase == core.PhaseDeleteFailed {
			summary = "Execution could not be deleted"
		}
		ps.add(nil, summary, errorDetail(st.LastError))
	}
	return ps
}

// storedExecution is what private state keeps for one execution.
type storedExecution struct {
	Status engine.Status `json:"status"`
	// Sensitive lists the items whose export was sensitive when last
	// applied, so their values stay masked after the flag or the item is
	// removed from the configuration.
	Sensitive []string `json:"sensitive,omitempty"`
}

// sensitiveNames merges the items sensitive now with those sensitive before.
func (s storedExecution) sensitiveNames(now map[string]bool) map[string]bool {
	out := make(map[string]bool, len(now)+len(s.Sensitive))
	maps.Copy(out, now)
	for _, n := range s.Sensitive {
		out[n] = true
	}
	return out
}

// decodeExecutionPrivate reads what private state keeps. Nothing (a new
// resource, or an import) is an empty status. Deployer state travels as
// blobs keyed by item name, outside the JSON document.
func decodeExecutionPrivate(private []byte) (storedExecution, error) {
	var s storedExecution
	doc, err := privatestate.Decode(private)
	if err != nil {
		return s, fmt.Errorf("%w; remove the resource from state and import it again", err)
	}
	if doc.JSON == nil {
		return s, nil
	}
	if err := json.Unmarshal(doc.JSON, &s); err != nil {
		return s, fmt.Errorf("the stored engine status cannot be read (%w); remove the resource from state and import it again", err)
	}
	for n, blob := range doc.Blobs {
		if is := s.Status.Items[n]; is != nil {
			is.State = blob
		}
	}
	return s, nil
}

// encodeExecutionPrivate stores st and the names of the items of st whose
// export is sensitive.
func encodeExecutionPrivate(st engine.Status, sensitive map[string]bool) ([]byte, error) {
	s := storedExecution{Status: st.Clone()}
	blobs := map[string][]byte{}
	for _, n := range slices.Sorted(maps.Keys(st.Items)) {
		if sensitive[n] {
			s.Sensitive = append(s.Sensitive, n)
		}
		if is := s.Status.Items[n]; len(is.State) > 0 {
			blobs[n], is.State = is.State, nil
		}
	}
	markSettled(blobs, st.Succeeded() && !st.Drifted())
	markTypes(blobs, st)
	markRefs(blobs, executionTargets(st, ""))
	return privatestate.Encode(s, blobs)
}

// typesKey is a blob listing the deploy item types in private state, so a
// refresh can tell without decoding the status whether any item's
// deployer checks for drift.
const typesKey = "\x00types"

func markTypes(blobs map[string][]byte, statuses ...engine.Status) {
	seen := map[string]bool{}
	for _, st := range statuses {
		for _, is := range st.Items {
			seen[is.Spec.Type] = true
		}
	}
	blobs[typesKey] = []byte(strings.Join(slices.Sorted(maps.Keys(seen)), "\n"))
}

// mayDrift reports whether private state holds an item whose deployer
// checks for drift; without a types mark it must assume so.
func mayDrift(private []byte, reg *deployer.Registry) bool {
	blobs, err := privatestate.Blobs(private)
	if err != nil {
		return false
	}
	types, ok := blobs[typesKey]
	if !ok {
		return true
	}
	for _, t := range strings.Split(string(types), "\n") {
		if d, ok := reg.Get(t); ok {
			if _, checks := d.(deployer.DriftChecker); checks {
				return true
			}
		}
	}
	return false
}

// settledKey is a blob that marks private state whose last job succeeded
// and found no drift since, so a no-op plan need not decode the status.
const settledKey = "\x00settled"

func markSettled(blobs map[string][]byte, settled bool) {
	if settled {
		blobs[settledKey] = []byte{1}
	}
}

func settledMark(private []byte) bool {
	blobs, err := privatestate.Blobs(private)
	return err == nil && len(blobs[settledKey]) == 1
}

func (x *executions) refreshes(private []byte) bool {
	return settledMark(private) && mayDrift(private, x.deployers)
}
