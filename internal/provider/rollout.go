package provider

import (
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/rollout"
)

// Progressive rollouts of both resources: the `rollout` attribute,
// `status.rollout` and `rollout_plan`, and the execution's
// `deploy_items[*].rollout_group`. The decisions are internal/rollout's,
// the engine's and (which items are members of an installation) the
// installation tree's; this file only translates.

const (
	attrRollout      = "rollout"
	attrRolloutGroup = "rollout_group"
	attrRolloutPlan  = "rollout_plan"
)

func rolloutPath(field ...string) *tftypes.AttributePath {
	p := tftypes.NewAttributePath().WithAttributeName(attrRollout)
	for _, f := range field {
		if name, idx, ok := strings.Cut(f, "["); ok {
			var i int
			_, _ = fmt.Sscanf(idx, "%d]", &i)
			p = p.WithAttributeName(name).WithElementKeyInt(i)
			continue
		}
		p = p.WithAttributeName(f)
	}
	return p
}

func maxRestartsObject(what string) schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		MarkdownDescription: what,
		Optional:            true,
		Attributes: map[string]schema.Attribute{
			"max_restarts": schema.Int64Attribute{Required: true, MarkdownDescription: "A canary member with more " +
				"restarts than this during the bake trips it. Restarts are those of the pods of the workloads a " +
				"Kubernetes item manages (the highest container restart count of a pod, as the ExtendedDaemonSet counts); " +
				"for other items each failed `health.command` counts as one."},
		},
	}
}

// rolloutSubject says what members are, for the descriptions of one resource.
type rolloutSubject struct {
	// members completes "Progressive rollout of ".
	members string
	// canaryMembers describes canary.members.
	canaryMembers string
	// others completes "... runs as before".
	others string
	// group names a group's key in status.rollout and rollout_plan.
	group string
	// member names a member's key in status.rollout.
	member string
}

var (
	executionRollout = rolloutSubject{
		members: "the deploy items that set `rollout_group` (the *members*; " +
			"items with the same group form one group, and every group follows this strategy)",
		canaryMembers: "Keys of `deploy_items` (members) that are the canary.",
		others:        "Items without a group",
		group:         "`rollout_group`",
		member:        "item key",
	}
	installationRollout = rolloutSubject{
		members: "what the blueprint renders per target: each deploy item that targets an element of a " +
			"target map or list import (`target: {import: clusters, key: eu-1}`) is part of the *member* named by " +
			"that key (a list's index), together with every other item the same installation renders for it, and " +
			"so is each sub-installation that imports the element (`target: clusters[eu-1]`), with everything " +
			"under it; the members of one installation that come from one import form a *group*, and every group " +
			"of the tree follows this strategy",
		canaryMembers: "Target map keys (or target list indexes) whose members are the canary, such as `[\"eu-1\"]`; " +
			"in every group that has them (a group with none of them has no canary stage).",
		others: "Items and sub-installations rendered for no element of a target map or list",
		group:  "`\"<installation path>/<target map or list import>\"` (the root's groups by the import's name alone)",
		member: "target map key (or target list index)",
	}
)

func rolloutAttribute(of rolloutSubject) schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		MarkdownDescription: "Progressive rollout of " + of.members + ". When members' specs " +
			"change (and on the first create), the canary runs the new spec first and bakes for `duration`, its health " +
			"watched; then the rest move batch by batch. " + of.others + " run as before, without waiting. " +
			"An apply that ends before the rollout completes (paused, failed, interrupted) ends with a diagnostic " +
			"naming the members on the new and on the old spec (a warning for a manual pause, else an error); " +
			"the next apply goes on from there. See the fleet rollouts guide.",
		Optional: true,
		Attributes: map[string]schema.Attribute{
			"canary": schema.SingleNestedAttribute{
				MarkdownDescription: "The members that run a new spec first. Set one of `members`, `count`, `percent`; " +
					"`count` and `percent` take the first members by name whose spec changes. Without a canary there is no bake.",
				Optional: true,
				Attributes: map[string]schema.Attribute{
					"members": schema.ListAttribute{Optional: true, ElementType: types.StringType,
						MarkdownDescription: of.canaryMembers},
					"count": schema.Int64Attribute{Optional: true, MarkdownDescription: "How many members are the canary."},
					"percent": schema.Int64Attribute{Optional: true, MarkdownDescription: "Which share of the members " +
						"is the canary, from 1 to 100, rounded up to at least one member."},
				},
			},
			"duration": schema.StringAttribute{Optional: true, MarkdownDescription: "Bake time after the canary is " +
				"ready, a Go duration (`10m`); the apply waits for it, watching health. Defaults to `0s`: one health check."},
			"batches": schema.ListAttribute{Optional: true, ElementType: types.StringType, MarkdownDescription: "How " +
				"the members after the canary move: cumulative shares (`\"25%\"`) or numbers of members (`\"5\"`), " +
				"ending at `\"100%\"`. `[\"25%\", \"100%\"]` moves a quarter, then the rest. Defaults to `[\"100%\"]`."},
			"auto_pause": maxRestartsObject("Pause the rollout when a canary member restarts too often during the " +
				"bake; the canary keeps the new spec. A new `reconcile_trigger` bakes it again and goes on. Without " +
				"`auto_pause` and `auto_fail`, any restart pauses."),
			"auto_fail": maxRestartsObject("Fail the rollout when a canary member restarts too often during the bake: " +
				"the canary members are reverted to the spec they ran before (kept in private state) and the apply fails. " +
				"A new spec, or a new `reconcile_trigger`, starts a new canary. A canary member whose deployer fails " +
				"fails the rollout the same way."),
			"paused": schema.BoolAttribute{Optional: true, MarkdownDescription: "Manual pause: each apply runs one " +
				"stage (the canary with its bake, or the next batch) and stops there. `false` (the default) lets the " +
				"next apply run all stages left."},
			"health": schema.SingleNestedAttribute{
				MarkdownDescription: "A command that checks a canary member's health during the bake, for items " +
					"whose deployer cannot tell (exec, mock). It runs for each canary member every `interval`, with " +
					"`LANDSCAPER_EXECUTION`, `LANDSCAPER_ROLLOUT_GROUP`, `LANDSCAPER_MEMBER`, `LANDSCAPER_MEMBER_ITEMS` " +
					"(the member's deploy items, comma-separated) and `LANDSCAPER_MEMBER_EXPORT` (the member's export as " +
					"JSON) set; a non-zero exit, or none within `interval`, counts as a restart.",
				Optional: true,
				Attributes: map[string]schema.Attribute{
					"command": schema.ListAttribute{Required: true, ElementType: types.StringType,
						MarkdownDescription: "Program and arguments, such as `[\"sh\", \"-c\", \"curl -fs $URL\"]`."},
					"interval": schema.StringAttribute{Optional: true, MarkdownDescription: "How often health is " +
						"checked during the bake, a Go duration. Defaults to `10s`."},
				},
			},
		},
	}
}

func rolloutGroupAttribute() schema.StringAttribute {
	return schema.StringAttribute{
		MarkdownDescription: "Makes the item a member of this rollout group: when `rollout` is set, members " +
			"move to a changed spec canary first, then in batches. Null: the item runs as soon as its dependencies allow.",
		Optional: true,
	}
}

func conditionAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"type": schema.StringAttribute{Computed: true, MarkdownDescription: "`Canary`, `CanaryPaused`, " +
			"`CanaryFailed`, `Paused` or `Completed`."},
		"status":  schema.StringAttribute{Computed: true, MarkdownDescription: "`True` or `False`."},
		"reason":  schema.StringAttribute{Computed: true, MarkdownDescription: "Machine-readable cause, such as `AutoPause`."},
		"message": schema.StringAttribute{Computed: true, MarkdownDescription: "What happened, for humans."},
		"last_transition_time": schema.StringAttribute{Computed: true, MarkdownDescription: "When `status` last " +
			"changed (RFC 3339), as in Landscaper."},
		"last_update_time": schema.StringAttribute{Computed: true, MarkdownDescription: "When the condition was " +
			"last set (RFC 3339)."},
	}
}

func rolloutStatusAttribute(of rolloutSubject) schema.MapNestedAttribute {
	return schema.MapNestedAttribute{
		MarkdownDescription: "The rollout of each group, by " + of.group + "; null without `rollout`.",
		Computed:            true,
		NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"phase": schema.StringAttribute{Computed: true, MarkdownDescription: "`Canary` (the canary runs the " +
				"new spec, or bakes), `CanaryPaused`, `CanaryFailed` (the canary failed, and was reverted where it could be), `RollingOut` " +
				"(batches move) or `Completed`."},
			"revision": schema.StringAttribute{Computed: true, MarkdownDescription: "Identifies the members' specs " +
				"being rolled out."},
			"reason": schema.StringAttribute{Computed: true, MarkdownDescription: "Why the rollout stopped short: " +
				"`ManualPause`, `AutoPause`, `AutoFail`, `CanaryMemberFailed`, `BatchMemberFailed`, `Interrupted`; null when it did not."},
			"message": schema.StringAttribute{Computed: true, MarkdownDescription: "Why, for humans."},
			"canary":  schema.ListAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: "The canary members."},
			"members": schema.MapNestedAttribute{
				Computed:            true,
				MarkdownDescription: "Every member, by " + of.member + ".",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"revision": schema.StringAttribute{Computed: true, MarkdownDescription: "Short hash of the spec " +
						"the member last ran successfully; null when it never did."},
					"new_spec": schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether the member runs " +
						"the spec being rolled out (else the old one, or none)."},
					"canary":   schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether it is a canary member."},
					"restarts": schema.Int64Attribute{Computed: true, MarkdownDescription: "Restarts counted in the last bake."},
				}},
			},
			"conditions": schema.ListNestedAttribute{
				Computed:            true,
				MarkdownDescription: "Landscaper-style conditions, by type.",
				NestedObject:        schema.NestedAttributeObject{Attributes: conditionAttributes()},
			},
		}},
	}
}

func rolloutPlanAttribute(of rolloutSubject) schema.MapNestedAttribute {
	return schema.MapNestedAttribute{
		MarkdownDescription: "What the apply planned for each rollout group, by " + of.group + ": the members it " +
			"may move (the canary, then batches, in order) and those it leaves as they are. It may stop earlier " +
			"(health, failure). Null without `rollout`.",
		Computed: true,
		NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"canary": schema.ListAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: "Canary " +
				"members that run the new spec first."},
			"bake": schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether the canary bakes in this apply."},
			"batches": schema.ListAttribute{Computed: true, ElementType: types.ListType{ElemType: types.StringType},
				MarkdownDescription: "Members of each batch that moves after the canary, in order."},
			"hold": schema.ListAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: "Members " +
				"whose spec changes but which this apply leaves on what they run."},
			"hold_reason": schema.StringAttribute{Computed: true, MarkdownDescription: "Why they are held: " +
				"`ManualPause`, `AutoPause`, `AutoFail`, `CanaryMemberFailed`; null when nothing is."},
		}},
	}
}

// strategyOf reads the rollout attribute. known is false while any part
// is unknown; nil strategy means no rollout.
func strategyOf(v tftypes.Value) (s *rollout.Strategy, known bool, ps problems) {
	if v.IsNull() {
		return nil, true, nil
	}
	if !v.IsFullyKnown() {
		return nil, false, nil
	}
	f := fields(v)
	s = &rollout.Strategy{Paused: boolean(f["paused"], false)}
	if c := fields(f["canary"]); c != nil {
		s.CanaryMembers = stringList(c["members"])
		s.CanaryCount = int(integer(c["count"]))
		s.CanaryPercent = int(integer(c["percent"]))
		set := 0
		for _, k := range []string{"members", "count", "percent"} {
			if !c[k].IsNull() {
				set++
			}
		}
		if set != 1 {
			ps.add(rolloutPath("canary"), "Invalid rollout canary", "set exactly one of members, count and percent")
		}
		if !c["count"].IsNull() && s.CanaryCount < 1 {
			ps.add(rolloutPath("canary", "count"), "Invalid rollout canary", fmt.Sprintf("count %d must be at least 1", s.CanaryCount))
		}
		if !c["percent"].IsNull() && (s.CanaryPercent < 1 || s.CanaryPercent > 100) {
			ps.add(rolloutPath("canary", "percent"), "Invalid rollout canary", fmt.Sprintf("%d is not a percentage from 1 to 100", s.CanaryPercent))
			s.CanaryPercent = 0
		}
		if !c["members"].IsNull() && len(s.CanaryMembers) == 0 {
			ps.add(rolloutPath("canary", "members"), "Invalid rollout canary", "name at least one member")
		}
	}
	if d := str(f["duration"]); d != "" {
		var err error
		if s.Duration, err = time.ParseDuration(d); err != nil || s.Duration < 0 {
			ps.add(rolloutPath("duration"), "Invalid rollout duration", fmt.Sprintf("%q is not a non-negative Go duration such as \"10m\"", d))
			s.Duration = 0
		}
	}
	for i, b := range stringList(f["batches"]) {
		step, err := rollout.ParseStep(b)
		if err != nil {
			ps.add(rolloutPath(fmt.Sprintf("batches[%d]", i)), "Invalid rollout batch", err.Error())
			continue
		}
		s.Batches = append(s.Batches, step)
	}
	if !f["batches"].IsNull() && len(stringList(f["batches"])) == 0 {
		ps.add(rolloutPath("batches"), "Invalid rollout batches", "list at least one batch, the last \"100%\"")
	}
	if a := fields(f["auto_pause"]); a != nil {
		n := int(integer(a["max_restarts"]))
		s.AutoPause = &n
	}
	if a := fields(f["auto_fail"]); a != nil {
		n := int(integer(a["max_restarts"]))
		s.AutoFail = &n
	}
	if h := fields(f["health"]); h != nil {
		s.Health.Command = stringList(h["command"])
		if len(s.Health.Command) == 0 {
			ps.add(rolloutPath("health", "command"), "Invalid rollout health command", "name a program to run")
		}
		if iv := str(h["interval"]); iv != "" {
			var err error
			if s.Health.Interval, err = time.ParseDuration(iv); err != nil || s.Health.Interval <= 0 {
				ps.add(rolloutPath("health", "interval"), "Invalid rollout health interval", fmt.Sprintf("%q is not a positive Go duration such as \"10s\"", iv))
			}
		}
	}
	return s, true, ps
}

func integer(v tftypes.Value) int64 {
	var f *big.Float
	if !v.IsKnown() || v.As(&f) != nil || f == nil {
		return 0
	}
	n, _ := f.Int64()
	return n
}

// rolloutOf reads the strategy and the groups of the items into ex.
func rolloutOf(f map[string]tftypes.Value, ex *engine.Execution) problems {
	s, known, ps := strategyOf(f[attrRollout])
	if !known || ps.errors() {
		return ps
	}
	groups := map[string]string{}
	for name, it := range fields(f[attrDeployItems]) {
		if g := str(fields(it)[attrRolloutGroup]); g != "" {
			groups[name] = g
		}
	}
	if s != nil && len(groups) > 0 {
		ex.Rollout, ex.Groups = s, groups
	}
	return ps
}

// validateRollout checks the rollout attribute at plan time, against the
// members as far as they are known.
func validateRollout(f map[string]tftypes.Value) problems {
	s, known, ps := strategyOf(f[attrRollout])
	if s == nil || !known {
		return ps
	}
	items := f[attrDeployItems]
	if !items.IsKnown() {
		return ps
	}
	var members []string
	allKnown := true
	for name, it := range fields(items) {
		g := fields(it)[attrRolloutGroup]
		if !g.IsKnown() {
			allKnown = false
		} else if str(g) != "" {
			members = append(members, name)
		}
	}
	slices.Sort(members)
	for _, p := range s.Validate(members, "a deploy item with a rollout_group") {
		if !allKnown && strings.HasPrefix(p.Field, "canary.members") {
			continue
		}
		ps.add(rolloutPath(strings.Split(p.Field, ".")...), "Invalid rollout", p.Message)
	}
	return ps
}

// rolloutStatusValue renders rollouts by group; null when there are none.
func rolloutStatusValue(t tftypes.Map, rollouts map[string]*rollout.State) tftypes.Value {
	if rollouts == nil {
		return tftypes.NewValue(t, nil)
	}
	ot := as[tftypes.Object](t.ElementType)
	mt := as[tftypes.Map](ot.AttributeTypes["members"])
	mot := as[tftypes.Object](mt.ElementType)
	ct := as[tftypes.List](ot.AttributeTypes["conditions"])
	cot := as[tftypes.Object](ct.ElementType)
	out := map[string]tftypes.Value{}
	for g, rs := range rollouts {
		members := map[string]tftypes.Value{}
		for m, ms := range rs.Members {
			members[m] = tftypes.NewValue(mot, map[string]tftypes.Value{
				"revision": stringOrNull(ms.Revision),
				"new_spec": tftypes.NewValue(tftypes.Bool, ms.New),
				"canary":   tftypes.NewValue(tftypes.Bool, ms.Canary),
				"restarts": tftypes.NewValue(tftypes.Number, big.NewFloat(float64(ms.Restarts))),
			})
		}
		conds := make([]tftypes.Value, 0, len(rs.Conditions))
		for _, c := range rs.Conditions {
			conds = append(conds, tftypes.NewValue(cot, map[string]tftypes.Value{
				"type": stringValue(c.Type), "status": stringValue(c.Status),
				"reason": stringOrNull(c.Reason), "message": stringOrNull(c.Message),
				"last_transition_time": timeOrNull(c.LastTransitionTime),
				"last_update_time":     timeOrNull(c.LastUpdateTime),
			}))
		}
		out[g] = tftypes.NewValue(ot, map[string]tftypes.Value{
			"phase":      stringValue(string(rs.Phase)),
			"revision":   stringOrNull(rs.Revision),
			"reason":     stringOrNull(rs.Reason),
			"message":    stringOrNull(rs.Message),
			"canary":     stringListValue(rs.Canary),
			"members":    tftypes.NewValue(mt, members),
			"conditions": tftypes.NewValue(ct, conds),
		})
	}
	return tftypes.NewValue(t, out)
}

func stringListValue(s []string) tftypes.Value {
	vals := make([]tftypes.Value, len(s))
	for i, v := range s {
		vals[i] = stringValue(v)
	}
	return tftypes.NewValue(tftypes.List{ElementType: tftypes.String}, vals)
}

// rolloutPlanValue renders what a job may do with each group; null
// without rollouts.
func rolloutPlanValue(t tftypes.Map, decisions map[string]rollout.Decision) tftypes.Value {
	if decisions == nil {
		return tftypes.NewValue(t, nil)
	}
	ot := as[tftypes.Object](t.ElementType)
	out := map[string]tftypes.Value{}
	for g, d := range decisions {
		var canary []string
		bake := false
		var batches []tftypes.Value
		for _, s := range d.Stages {
			if s.Canary {
				canary, bake = s.Run, !d.State.Baked
				continue
			}
			batches = append(batches, stringListValue(s.Run))
		}
		out[g] = tftypes.NewValue(ot, map[string]tftypes.Value{
			"canary":      stringListValue(canary),
			"bake":        tftypes.NewValue(tftypes.Bool, bake),
			"batches":     tftypes.NewValue(ot.AttributeTypes["batches"], batches),
			"hold":        stringListValue(d.Hold),
			"hold_reason": stringOrNull(d.Why),
		})
	}
	return tftypes.NewValue(t, out)
}

// rolloutProblems reports every group the job left short of completion,
// on the rollout attribute: which members run the new spec, which the
// old, and why it stopped. A failure is an error. A manual pause is a
// warning: the apply did what was asked. Other stops (auto-pause, out of
// time) are errors, except in a create: Terraform taints a resource
// whose create fails, and its replacement would start the rollout over.
// states are the groups the job moved, by name.
func rolloutProblems(states map[string]*rollout.State, create bool) problems {
	var ps problems
	for _, g := range slices.Sorted(maps.Keys(states)) {
		rs := states[g]
		if rs.Phase == rollout.PhaseCompleted {
			continue
		}
		var newSpec, oldSpec, none []string
		for _, m := range slices.Sorted(maps.Keys(rs.Members)) {
			switch ms := rs.Members[m]; {
			case ms.New:
				newSpec = append(newSpec, m)
			case ms.Revision == "":
				none = append(none, m)
			default:
				oldSpec = append(oldSpec, m)
			}
		}
		summary := fmt.Sprintf("Rollout of group %q is %s", g, rs.Phase)
		switch rs.Reason {
		case rollout.ReasonManualPause:
			summary = fmt.Sprintf("Rollout of group %q paused by hand", g)
		case rollout.ReasonAutoPause:
			summary = fmt.Sprintf("Rollout of group %q paused: the canary restarted too often", g)
		case rollout.ReasonAutoFail, rollout.ReasonCanaryFailed:
			summary = fmt.Sprintf("Rollout of group %q failed at the canary", g)
		case rollout.ReasonInterrupted:
			summary = fmt.Sprintf("Rollout of group %q in progress", g)
		}
		detail := fmt.Sprintf("Phase %s (%s): %s\nNew spec (revision %s): %s\nOld spec: %s",
			rs.Phase, rs.Reason, rs.Message, rs.Revision, orNone(newSpec), orNone(oldSpec))
		if len(none) > 0 {
			detail += "\nNot deployed yet: " + strings.Join(none, ", ")
		}
		failed := rs.Phase == rollout.PhaseCanaryFailed || rs.Reason == rollout.ReasonBatchFailed
		if rs.Reason == rollout.ReasonManualPause || (create && !failed) {
			ps.warn(tftypes.NewAttributePath().WithAttributeName(attrRollout), summary, detail+"\nThe next apply goes on from here.")
			continue
		}
		ps.add(tftypes.NewAttributePath().WithAttributeName(attrRollout), summary, detail)
	}
	return ps
}

func (vt valueTypes) rolloutStatus() tftypes.Map {
	return as[tftypes.Map](vt.status.AttributeTypes[attrRollout])
}

func (vt valueTypes) rolloutPlan() tftypes.Map {
	return as[tftypes.Map](vt.resource.AttributeTypes[attrRolloutPlan])
}

// executionRollouts are an execution's rollouts by group; moved only
// those its last job moved.
func executionRollouts(st engine.Status, moved bool) map[string]*rollout.State {
	if st.Rollouts == nil {
		return nil
	}
	out := map[string]*rollout.State{}
	for g, rs := range st.Rollouts {
		if !moved || rs.JobID == st.JobID {
			out[g] = &rs.State
		}
	}
	return out
}

// rolloutError reports whether an execution's error is a rollout's stop,
// which rolloutProblems explains better.
func rolloutError(e *core.Error) bool {
	return e.Reason == engine.ReasonRolloutStopped || e.Reason == engine.ReasonCanaryFailed
}
