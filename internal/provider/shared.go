package provider

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/target"
)

// Schema parts and value helpers that more than one resource uses.

// nameRuleDescription documents core.ValidName where a name is set.
const nameRuleDescription = "It follows Landscaper's name rule: " + core.NameRule + "."

// reconcileTriggerAttribute is reconcile_trigger, the counterpart of
// Landscaper's reconcile annotation.
func reconcileTriggerAttribute(noun string) schema.StringAttribute {
	return schema.StringAttribute{
		MarkdownDescription: "Any value. Whenever it changes, the next apply re-runs every deploy item of this " + noun +
			" in dependency order, as Landscaper's `landscaper.gardener.cloud/operation: reconcile` annotation does, " +
			"whatever `update_on_change_only` says; the plan shows every item as running. A job that fails part-way " +
			"is resumed with the items that did not finish. While it stays the same, only changes run items.",
		Optional: true,
	}
}

// triggerOf reads reconcile_trigger. Unknown, it is a value no job ran
// with, so a plan shows every item as running, as the apply will once
// it is known (the ID of a cluster being replaced, say).
func triggerOf(f map[string]tftypes.Value) string {
	if v := f[attrReconcileTrigger]; !v.IsKnown() {
		return "\x00known after apply"
	}
	return str(f[attrReconcileTrigger])
}

func errorSchema(of string) schema.SingleNestedAttribute {
	return errorSchemaDescribed("The last error of " + of + " in Landscaper's shape, or null.")
}

func errorSchemaDescribed(description string) schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		MarkdownDescription: description,
		Computed:            true,
		Attributes: map[string]schema.Attribute{
			"operation": schema.StringAttribute{Computed: true, MarkdownDescription: "What was being done: `Reconcile` or `Delete`."},
			"reason":    schema.StringAttribute{Computed: true, MarkdownDescription: "Short machine-readable cause, such as `ProgressingTimeout` or `CommandFailed`."},
			"message":   schema.StringAttribute{Computed: true, MarkdownDescription: "What happened, for humans."},
			"codes": schema.ListAttribute{Computed: true, ElementType: types.StringType,
				MarkdownDescription: "Landscaper error codes, such as `ERR_TIMEOUT` or `ERR_CONFIGURATION_PROBLEM`."},
			"last_transition_time": schema.StringAttribute{Computed: true, MarkdownDescription: "When an error " +
				"of this operation was first recorded in the run (RFC 3339), as in Landscaper."},
			"last_update_time": schema.StringAttribute{Computed: true, MarkdownDescription: "When the error last " +
				"changed (RFC 3339): a retry that fails the same way keeps it."},
		},
	}
}

// itemStatusAttributes is the status of one deploy item.
func itemStatusAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"phase": schema.StringAttribute{Computed: true, MarkdownDescription: "Phase of the item. " +
			"`Init` means it was declared but has not run yet."},
		"job_id_finished": schema.StringAttribute{Computed: true, MarkdownDescription: "The job in which the item " +
			"last finished a run. Items skipped because they did not change keep the job they last ran in."},
		"last_error": errorSchema("the deploy item"),
		"first_error": errorSchemaDescribed("The first error of the item's last run, or null; it stays after " +
			"retries that ended in success, as Landscaper's `firstError` does."),
		"provider_status": schema.StringAttribute{Computed: true, MarkdownDescription: "Deployer-specific " +
			"status as JSON text, or null."},
	}
}

// renderedItemAttributes describe a rendered deploy item: what it will be
// asked to do.
func renderedItemAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"type": schema.StringAttribute{Computed: true, MarkdownDescription: "Deployer type, as the blueprint names it."},
		"target": schema.StringAttribute{Computed: true, MarkdownDescription: "Where the item's target comes from: " +
			"the target import's name, `<import>[<key>]` or `<import>[<index>]` for an element of a target map or " +
			"list, or the target's name; null without one. For a target of the provider's `targets`, also its name and " +
			"where it points: `cluster -> provider target \"prod-eu\" (https://api.prod-eu.example)`. Never the target's config."},
		"config": schema.StringAttribute{Computed: true, MarkdownDescription: "The rendered deployer configuration " +
			"(Landscaper's ProviderConfiguration) as JSON text, with secrets shown as `***`."},
	}
}

// targetObject is one target: Landscaper's Target spec inline, or the
// name of a target of the provider's targets. Only the config is
// sensitive, so a plan shows which target (and which type) a resource
// uses, and configuration generated from state keeps references.
func targetObject() schema.NestedAttributeObject {
	return schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
		"name": schema.StringAttribute{
			MarkdownDescription: "Given alone (no `type`, no `config`): the name of a target of " + providerTargetsDocs +
				", which keeps its credentials out of state. Given with `type` and `config`: the target's name.",
			Optional: true,
		},
		"type": schema.StringAttribute{
			MarkdownDescription: "Target type, such as `landscaper.gardener.cloud/kubernetes-cluster`, of an inline " +
				"target; null for a target of " + providerTargetsDocs + ".",
			Optional: true,
		},
		"config": schema.StringAttribute{
			MarkdownDescription: "An inline target's config as JSON or YAML text, in Landscaper's format for its type " +
				"(for a kubernetes-cluster: `yamlencode({ kubeconfig = file(\"...\") })`). Sensitive, and **stored in " +
				"the state** in clear text, as every attribute of a resource is: to keep credentials out of state, " +
				"define the target in " + providerTargetsDocs + " and give only its `name` here, or use a kubeconfig " +
				"whose user runs a credential plugin (`users[].user.exec`).",
			Optional:  true,
			Sensitive: true,
		},
	}}
}

func targetsAttribute(what string) schema.MapNestedAttribute {
	return schema.MapNestedAttribute{
		MarkdownDescription: what + ". Each is inline (`type` and `config`) or names a target of " + providerTargetsDocs +
			" (`{ name = \"prod-eu\" }`). An inline config holds credentials and is stored in the state; it is " +
			"never logged, shown in a diagnostic or written into a provider status.",
		Optional:     true,
		NestedObject: targetObject(),
	}
}

// timeoutsAttribute is the framework's timeouts attribute with our defaults
// described, since the framework leaves the attribute itself undocumented.
func timeoutsAttribute(ctx context.Context, noun string) schema.Attribute {
	a := timeouts.Attributes(ctx, timeouts.Opts{Create: true, Update: true, Delete: true})
	if n, ok := a.(schema.SingleNestedAttribute); ok {
		n.MarkdownDescription = "Bounds for a whole apply (`create`, `update`) or destroy (`delete`) of this " +
			noun + ", each `1h` by default. When one expires, running items are stopped and fail with `ERR_TIMEOUT`."
		return n
	}
	return a
}

// validateTimeouts checks the timeouts attribute.
func validateTimeouts(v tftypes.Value) problems {
	var ps problems
	for op, t := range fields(v) {
		if s := str(t); s != "" {
			if d, err := time.ParseDuration(s); err != nil || d <= 0 {
				ps.add(tftypes.NewAttributePath().WithAttributeName("timeouts").WithAttributeName(op),
					"Invalid timeout", fmt.Sprintf("%q is not a positive Go duration such as \"30m\" or \"2h\"", s))
			}
		}
	}
	return ps
}

// operationTimeout reads timeouts.<op>, validated at plan time.
func operationTimeout(timeouts tftypes.Value, op string) time.Duration {
	if d, err := time.ParseDuration(str(fields(timeouts)[op])); err == nil && d > 0 {
		return d
	}
	return defaultOperationTimeout
}

// targetOf converts one known target value; nil when it is not fully
// known, or names a provider target pt cannot resolve (not configured
// yet, unknown, or not defined: then a problem says which). A config that
// is neither JSON nor YAML is left out; validation reports it.
func targetOf(name string, v tftypes.Value, pt *providerTargets, at *tftypes.AttributePath) (*deployer.Target, problems) {
	if !v.IsFullyKnown() || v.IsNull() {
		return nil, nil
	}
	f := fields(v)
	if isTargetRef(f) {
		if pt == nil || !pt.known {
			return nil, nil
		}
		return pt.reference(f, at)
	}
	cfg, _ := deployer.NormalizeConfig(str(f["config"]))
	if n := str(f["name"]); n != "" {
		name = n
	}
	return &deployer.Target{Name: name, Type: str(f["type"]), Config: cfg,
		Labels: stringMap(f["labels"]), Annotations: stringMap(f["annotations"])}, nil
}

// stringMap reads a map of strings; nil when null, unknown or absent
// (the execution's targets have no metadata).
func stringMap(v tftypes.Value) map[string]string {
	if v.Type() == nil {
		return nil
	}
	m := fields(v)
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, e := range m {
		out[k] = str(e)
	}
	return out
}

// targetsOf converts a map of targets; known is false while the map or
// any target in it is unknown, or names a provider target that cannot be
// resolved yet. Provider targets that are not defined are problems.
func targetsOf(v tftypes.Value, pt *providerTargets, at *tftypes.AttributePath) (map[string]*deployer.Target, bool, problems) {
	out := map[string]*deployer.Target{}
	if !v.IsFullyKnown() {
		return out, false, nil
	}
	known := true
	var ps problems
	for _, n := range slices.Sorted(maps.Keys(fields(v))) {
		t := fields(v)[n]
		tg, p := targetOf(n, t, pt, at.WithElementKeyString(n))
		ps = append(ps, p...)
		switch {
		case tg != nil:
			out[n] = tg
		case len(p) > 0:
			// Not defined: items naming it get a target of no known
			// type, so the problem above is the only one reported.
			out[n] = &deployer.Target{Name: n, Ref: str(fields(t)["name"])}
		case len(p) == 0 && !t.IsNull():
			known = false
		}
	}
	return out, known, ps
}

// validateTargets checks a map of targets at plan time: known types and
// configs their type accepts. Messages never quote a config.
func validateTargets(v tftypes.Value, reg *deployer.Registry, at *tftypes.AttributePath) problems {
	var ps problems
	for _, n := range slices.Sorted(maps.Keys(fields(v))) {
		ps = append(ps, validateTarget(fields(v)[n], reg, at.WithElementKeyString(n))...)
	}
	return ps
}

func validateTarget(v tftypes.Value, reg *deployer.Registry, at *tftypes.AttributePath) problems {
	var ps problems
	f := fields(v)
	if _, named := f["name"]; named {
		// A resource's target; the provider's own have no name attribute.
		if ps = validateTargetShape(f, at); len(ps) > 0 {
			return ps
		}
	}
	typ := f["type"]
	if !typ.IsKnown() || typ.IsNull() {
		return nil
	}
	check, ok := reg.TargetType(str(typ))
	if !ok {
		ps.add(at.WithAttributeName("type"), "Unknown target type", fmt.Sprintf("%q is not a known target type; known types: %s",
			str(typ), orNone(reg.TargetTypes())))
		return ps
	}
	cfg := f["config"]
	if !cfg.IsKnown() || cfg.IsNull() {
		return ps
	}
	norm, err := deployer.NormalizeConfig(str(cfg))
	if err == nil && check != nil {
		err = check(norm)
	} else if err != nil {
		err = fmt.Errorf("the config is neither a JSON nor a YAML object")
	}
	switch {
	case errors.Is(err, target.ErrSelfTarget):
		ps.add(at.WithAttributeName("config"), "Self targets are not supported", err.Error())
	case err != nil:
		ps.add(at.WithAttributeName("config"), "Invalid target config", err.Error())
	}
	return ps
}

// validateName checks a name attribute against Landscaper's name rule.
func validateName(ps *problems, at *tftypes.AttributePath, what string, v tftypes.Value) {
	if !v.IsKnown() || v.IsNull() {
		return
	}
	if err := core.ValidName(str(v)); err != nil {
		ps.add(at, "Invalid "+what, err.Error())
	}
}

func errorDetail(e *core.Error) string {
	codes := strings.Join(e.Codes, ", ")
	if codes == "" {
		codes = "none"
	}
	return fmt.Sprintf("operation: %s\nreason: %s\nmessage: %s\ncodes: %s", e.Operation, e.Reason, e.Message, codes)
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "(none)"
	}
	return strings.Join(names, ", ")
}
