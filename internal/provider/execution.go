package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
)

// defaultOperationTimeout bounds a whole apply or destroy of one execution
// unless `timeouts` says otherwise. Items have their own, shorter default.
const defaultOperationTimeout = time.Hour

// privateKey is where the engine status lives in private state. It holds what the
// status attribute shows plus what users need not see: applied spec
// hashes, deployer state (exec's STATE_PATH) and the specs of items that
// must still be deleted.
const privateKey = "engine_status"

// problem is a diagnostic before it takes the framework's or the
// protocol's form.
type problem struct {
	summary, detail string
	path            *tftypes.AttributePath
}

type problems []problem

func (ps *problems) add(path *tftypes.AttributePath, summary, detail string) {
	*ps = append(*ps, problem{summary: summary, detail: detail, path: path})
}

// executions implements landscaper_execution on Terraform values: plan-time
// validation, planning, apply and destroy. The framework resource and the
// protocol fast path (protocol.go) both call it.
type executions struct {
	vt        valueTypes
	deployers *deployer.Registry
	// engine is set once the provider is configured.
	engine func() *engine.Engine
}

// desired is an execution as the engine sees it, plus where each export goes.
type desired struct {
	exec      engine.Execution
	sensitive map[string]bool
	// pending lists items with values only known after another resource's
	// apply; their specs here are placeholders. unrouted lists those whose
	// sensitive_export flag is among the unknowns.
	pending, unrouted map[string]bool
}

// desiredOf reads name and deploy_items of a resource value. known is
// false while the name or the set of items is unknown.
func desiredOf(v tftypes.Value) (desired, bool, problems) {
	f := fields(v)
	items := f[attrDeployItems]
	if !f["name"].IsKnown() || !items.IsKnown() {
		return desired{}, false, nil
	}
	var ps problems
	its := fields(items)
	d := desired{
		exec:      engine.Execution{Name: str(f["name"], ""), Items: make(map[string]engine.ItemSpec, len(its))},
		sensitive: make(map[string]bool, len(its)),
		pending:   map[string]bool{},
		unrouted:  map[string]bool{},
	}
	for name, it := range its {
		itf := fields(it)
		if !it.IsFullyKnown() {
			d.pending[name] = true
			d.unrouted[name] = !itf[attrSensitiveExport].IsKnown()
			d.exec.Items[name] = engine.ItemSpec{DependsOn: stringList(itf["depends_on"])}
		} else {
			spec, p := specOf(name, itf)
			ps = append(ps, p...)
			d.exec.Items[name] = spec
		}
		d.sensitive[name] = boolean(itf[attrSensitiveExport], defaultSensitiveExport)
	}
	return d, true, ps
}

// specOf converts one known deploy item; problems carry its field's path.
func specOf(name string, f map[string]tftypes.Value) (engine.ItemSpec, problems) {
	var ps problems
	spec := engine.ItemSpec{
		Type:               str(f["type"], ""),
		DependsOn:          stringList(f["depends_on"]),
		UpdateOnChangeOnly: boolean(f[attrUpdateOnChangeOnly], defaultUpdateOnChangeOnly),
	}
	cfg, err := deployer.NormalizeConfig(str(f["config"], ""))
	if err != nil {
		ps.add(itemPath(name, "config"), "Invalid deploy item config", err.Error())
	}
	spec.Config = cfg
	spec.Timeout = engine.DefaultTimeout
	if t := f["timeout"]; t.IsKnown() && !t.IsNull() {
		if spec.Timeout, err = engine.ParseTimeout(str(t, "")); err != nil {
			ps.add(itemPath(name, "timeout"), "Invalid deploy item timeout", err.Error())
		}
	}
	return spec, ps
}

// validate checks a configuration at plan time. Unknown parts are skipped
// and checked again when they are known.
func (x *executions) validate(config tftypes.Value) problems {
	var ps problems
	f := fields(config)
	if n := f["name"]; n.IsKnown() && !n.IsNull() && str(n, "") == "" {
		ps.add(tftypes.NewAttributePath().WithAttributeName("name"), "Invalid name", "name must not be empty")
	}
	for op, v := range fields(f["timeouts"]) {
		if s := str(v, ""); s != "" {
			if d, err := time.ParseDuration(s); err != nil || d <= 0 {
				ps.add(tftypes.NewAttributePath().WithAttributeName("timeouts").WithAttributeName(op),
					"Invalid timeout", fmt.Sprintf("%q is not a positive Go duration such as \"30m\" or \"2h\"", s))
			}
		}
	}
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
		spec, p := specOf(name, known)
		ps = append(ps, p...)
		if !itf["config"].IsKnown() || len(p) > 0 {
			spec.Config = nil // skip the deployer's check: unknown, or already reported
		}
		ex.Items[name] = spec
	}
	for _, p := range engine.Validate(ex, x.deployers) {
		if !graphKnown && p.Field == "depends_on" {
			continue // a "missing" item may be one whose type is not known yet
		}
		ps.add(itemPath(p.Item, p.Field), "Invalid deploy item "+p.Field, p.Message)
	}
	return ps
}

// plan computes the planned state. It shows exactly what the next job
// will do, because it asks engine.PlanJob, as apply does: items that run
// have unknown status and export; the rest stays known.
func (x *executions) plan(prior, proposed tftypes.Value, priorPrivate []byte) (tftypes.Value, []*tftypes.AttributePath, problems) {
	if proposed.IsNull() {
		return proposed, nil, nil // destroy
	}
	var ps problems
	f := fields(proposed)
	f["id"] = f["name"]

	var replace []*tftypes.AttributePath
	if pf := fields(prior); pf != nil && !pf["name"].Equal(f["name"]) {
		replace = append(replace, tftypes.NewAttributePath().WithAttributeName("name"))
	}
	planned := tftypes.NewValue(x.vt.resource, f)
	want, known, p := desiredOf(planned)
	ps = append(ps, p...)
	if !known || len(ps) > 0 {
		return x.vt.withComputedUnknown(f), replace, ps
	}
	// With no prior state this plans a create, also when it replaces an
	// object: the replaced object's private state (which Terraform passes
	// along, and hands to its delete) is not the new object's status.
	if prior.IsNull() {
		priorPrivate = nil
	}
	saved, err := decodePrivate(priorPrivate)
	if err != nil {
		ps.add(nil, "Corrupt private state", err.Error())
		return planned, replace, ps
	}
	prev := saved.Status
	job := engine.PlanJob(want.exec, prev).WithRun(slices.Sorted(maps.Keys(want.pending))...)
	unknown := map[string]bool{}
	switch {
	case job.Noop():
		f["status"] = x.vt.statusValue(prev)
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
	if f["exports"], f["sensitive_exports"], err = exportValues(prev, slices.Sorted(maps.Keys(want.exec.Items)), want.sensitive, unknown, want.unrouted); err != nil {
		ps.add(tftypes.NewAttributePath().WithAttributeName("exports"), "Export cannot be represented", err.Error())
	}
	return tftypes.NewValue(x.vt.resource, f), replace, ps
}

// apply runs a reconcile job, or a delete job when planned is null, and
// returns the new state and private state. The state is written also when
// items failed: it must tell the truth about every item.
func (x *executions) apply(ctx context.Context, prior, planned tftypes.Value, private []byte) (tftypes.Value, []byte, problems) {
	var ps problems
	e := x.engine()
	if e == nil {
		ps.add(nil, "Provider not configured", "The landscaper provider was not configured before use.")
		return prior, private, ps
	}
	if prior.IsNull() {
		private = nil // a create; see plan
	}
	saved, err := decodePrivate(private)
	if err != nil {
		ps.add(nil, "Corrupt private state", err.Error())
		return prior, private, ps
	}
	prev := saved.Status
	if planned.IsNull() {
		return x.destroy(ctx, e, prior, saved)
	}
	want, known, p := desiredOf(planned)
	ps = append(ps, p...)
	if !known || len(want.pending) > 0 {
		ps.add(nil, "Deploy items not known", "deploy_items still holds unknown values at apply time.")
	}
	if len(ps) > 0 {
		return prior, private, ps
	}
	f := fields(planned)
	st := prev
	if job := engine.PlanJob(want.exec, prev); job.Noop() {
		// Nothing runs, so no job starts; only the recorded specs follow
		// the config (an edge or a timeout changed).
		st = prev.Clone()
		for n, spec := range want.exec.Items {
			st.Items[n].Spec = spec
		}
	} else {
		timeout := operationTimeout(f["timeouts"], map[bool]string{true: "create", false: "update"}[prior.IsNull()])
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		logs := newJobLogger(ctx, saved.sensitiveNames(want.sensitive), prev)
		run := *e
		run.Observe = logs.observe
		st = logs.redact(run.Reconcile(ctx, want.exec, prev, uuid.NewString()))
		ps = append(ps, itemProblems(st)...)
	}
	f["status"] = x.vt.statusValue(st)
	if f["exports"], f["sensitive_exports"], err = exportValues(st, slices.Sorted(maps.Keys(want.exec.Items)), want.sensitive, nil, nil); err != nil {
		ps.add(tftypes.NewAttributePath().WithAttributeName("exports"), "Export cannot be represented", err.Error())
	}
	priv, err := encodePrivate(st, saved.sensitiveNames(want.sensitive))
	if err != nil {
		ps.add(nil, "Cannot store engine status", err.Error())
	}
	return tftypes.NewValue(x.vt.resource, f), priv, ps
}

// destroy runs a delete job. What was not deleted stays in state, so a
// later destroy finishes the job.
func (x *executions) destroy(ctx context.Context, e *engine.Engine, prior tftypes.Value, saved stored) (tftypes.Value, []byte, problems) {
	f := fields(prior)
	ctx, cancel := context.WithTimeout(ctx, operationTimeout(f["timeouts"], "delete"))
	defer cancel()
	sensitive := map[string]bool{}
	for n, it := range fields(f[attrDeployItems]) {
		sensitive[n] = boolean(fields(it)[attrSensitiveExport], defaultSensitiveExport)
	}
	sensitive = saved.sensitiveNames(sensitive)
	prev := saved.Status
	logs := newJobLogger(ctx, sensitive, prev)
	run := *e
	run.Observe = logs.observe
	st := logs.redact(run.Delete(ctx, str(f["name"], ""), prev, uuid.NewString()))
	if len(st.Items) == 0 && st.LastError == nil {
		return tftypes.NewValue(x.vt.resource, nil), nil, nil
	}
	ps := itemProblems(st)
	f["status"] = x.vt.statusValue(st)
	var err error
	if f["exports"], f["sensitive_exports"], err = exportValues(st, slices.Sorted(maps.Keys(st.Items)), sensitive, nil, nil); err != nil {
		ps.add(nil, "Export cannot be represented", err.Error())
	}
	priv, err := encodePrivate(st, sensitive)
	if err != nil {
		ps.add(nil, "Cannot store engine status", err.Error())
	}
	return tftypes.NewValue(x.vt.resource, f), priv, ps
}

// operationTimeout reads timeouts.<op>, validated at plan time.
func operationTimeout(timeouts tftypes.Value, op string) time.Duration {
	if d, err := time.ParseDuration(str(fields(timeouts)[op], "")); err == nil && d > 0 {
		return d
	}
	return defaultOperationTimeout
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
		if is.Phase == engine.PhaseDeleteFailed {
			summary = fmt.Sprintf("Deploy item %q could not be deleted", n)
		}
		ps.add(itemPath(n), summary, errorDetail(is.LastError))
	}
	if st.LastError != nil && len(ps) == 0 {
		summary := "Execution " + strings.ToLower(string(st.Phase))
		if st.Phase == engine.PhaseDeleteFailed {
			summary = "Execution could not be deleted"
		}
		ps.add(nil, summary, errorDetail(st.LastError))
	}
	return ps
}

func errorDetail(e *engine.Error) string {
	codes := strings.Join(e.Codes, ", ")
	if codes == "" {
		codes = "none"
	}
	return fmt.Sprintf("operation: %s\nreason: %s\nmessage: %s\ncodes: %s", e.Operation, e.Reason, e.Message, codes)
}

// stored is what private state keeps for one execution.
type stored struct {
	Status engine.Status `json:"status"`
	// Sensitive lists the items whose export was sensitive when last
	// applied, so their values stay masked after the flag or the item is
	// removed from the configuration.
	Sensitive []string `json:"sensitive,omitempty"`
}

// sensitiveNames merges the items sensitive now with those sensitive before.
func (s stored) sensitiveNames(now map[string]bool) map[string]bool {
	out := make(map[string]bool, len(now)+len(s.Sensitive))
	for n, v := range now {
		out[n] = v
	}
	for _, n := range s.Sensitive {
		out[n] = true
	}
	return out
}

// decodePrivate reads what private state keeps. Anything without our key
// (nothing yet, or an import) is an empty status.
//
// Private state uses the framework's wire format, a JSON object of base64
// values, so the framework adapters and the protocol path read each
// other's state.
func decodePrivate(private []byte) (stored, error) {
	var s stored
	raw, err := privateValue(private)
	if err != nil || raw == nil {
		return s, err
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return s, fmt.Errorf("the stored engine status cannot be read (%w); remove the resource from state and import it again", err)
	}
	return s, nil
}

func privateValue(private []byte) ([]byte, error) {
	if len(private) == 0 {
		return nil, nil
	}
	var keys map[string][]byte
	if err := json.Unmarshal(private, &keys); err != nil {
		return nil, fmt.Errorf("private state is not in the expected format: %w", err)
	}
	return keys[privateKey], nil
}

// settled reports whether private state records a job that ran to its end
// and succeeded: then every item succeeded with its current spec and no
// orphan is left (see engine.PlanJob).
func settled(private []byte) bool {
	raw, err := privateValue(private)
	var head struct {
		Status struct {
			Phase         engine.Phase `json:"phase"`
			JobID         string       `json:"jobID"`
			JobIDFinished string       `json:"jobIDFinished"`
		} `json:"status"`
	}
	if err != nil || raw == nil || json.Unmarshal(raw, &head) != nil {
		return false
	}
	h := head.Status
	return engine.Status{Phase: h.Phase, JobID: h.JobID, JobIDFinished: h.JobIDFinished}.Succeeded()
}

// encodePrivate stores st and the names of the items of st whose export
// is sensitive.
func encodePrivate(st engine.Status, sensitive map[string]bool) ([]byte, error) {
	s := stored{Status: st}
	for _, n := range slices.Sorted(maps.Keys(st.Items)) {
		if sensitive[n] {
			s.Sensitive = append(s.Sensitive, n)
		}
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string][]byte{privateKey: raw})
}
