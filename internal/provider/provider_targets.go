package provider

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/installation"
)

// Provider-level targets keep cluster credentials out of state: Terraform
// never stores a provider's configuration, and provider blocks accept
// ephemeral values. Resources name such a target ({ name = "prod-eu" });
// what they keep of it is its name and where it points, and its config is
// looked up again whenever a deployer needs it, on apply, destroy and
// refresh alike.

const (
	attrAllowedDeployers = "allowed_deployers"
	// providerDocsRef points from resource docs to the provider form.
	providerTargetsDocs = "the provider's `targets`"
)

func providerTargetsAttribute() schema.MapNestedAttribute {
	return schema.MapNestedAttribute{
		MarkdownDescription: "Targets that resources use by name: a target of a resource given only its `name` " +
			"(`targets = { cluster = { name = \"prod-eu\" } }`, the same in `target_lists`, `target_maps` and " +
			"`landscaper_execution`'s `targets`) is the target of that name here. Terraform stores no provider " +
			"configuration, and these attributes accept ephemeral values (`variable \"kubeconfig\" { ephemeral = true }`), " +
			"so credentials given here never reach the state: resources keep only the target's name, type and " +
			"where it points (a cluster's server), and take its config from here on every apply, destroy and " +
			"refresh. A new credential for the same cluster plans nothing; pointing a name at another cluster plans " +
			"the deploy items that use it. Destroying a resource needs the targets it used to be defined still.",
		Optional:  true,
		Sensitive: true,
		NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"type": schema.StringAttribute{Required: true,
				MarkdownDescription: "Target type, such as `landscaper.gardener.cloud/kubernetes-cluster`."},
			"config": schema.StringAttribute{Required: true, Sensitive: true,
				MarkdownDescription: "The target's config as JSON or YAML text, in Landscaper's format for its type " +
					"(for a kubernetes-cluster: `yamlencode({ kubeconfig = var.kubeconfig })`)."},
			"labels": schema.MapAttribute{Optional: true, ElementType: types.StringType,
				MarkdownDescription: "The Target's `metadata.labels`, as templates see them."},
			"annotations": schema.MapAttribute{Optional: true, ElementType: types.StringType,
				MarkdownDescription: "The Target's `metadata.annotations`, as templates see them."},
		}},
	}
}

func allowedDeployersAttribute() schema.ListAttribute {
	return schema.ListAttribute{
		MarkdownDescription: "The deployer types deploy items may have, by Landscaper's type names " +
			"(`landscaper.gardener.cloud/kubernetes-manifest`, `landscaper.gardener.cloud/helm`, " +
			"`landscaper.gardener.cloud/mock`) or `exec`; aliases (`kubernetes-manifest`, `helm`, `mock`) mean the " +
			"same. A deploy item of another type, in an execution or anywhere in an installation's tree, is a " +
			"plan-time error naming the item, and nothing runs; so is deleting one (an orphan, or on destroy), as " +
			"deleting runs its deployer: allow the type for that apply, or drop the resource with a `removed` block. " +
			"Null allows every type. Set it in CI when " +
			"blueprints come from registries: a blueprint's `exec` item runs a command on the machine running Terraform.",
		Optional:    true,
		ElementType: types.StringType,
	}
}

// providerTargets are the provider's targets, with their configs.
type providerTargets struct {
	// known is false while the names, types or metadata of the provider's
	// targets are unknown: then no reference resolves.
	known  bool
	byName map[string]*deployer.Target
	// pending are the targets whose config alone is unknown: a cluster
	// created (or changed) in the same apply, its kubeconfig known once
	// that resource is applied. References to them resolve, to a target
	// with no config, and where they point is what a plan assumes (see
	// assuming).
	pending map[string]bool
}

// lookup returns the provider's target of that name, with its config
// (none while pending).
func (pt *providerTargets) lookup(name string) (*deployer.Target, bool) {
	if pt == nil {
		return nil, false
	}
	t, ok := pt.byName[name]
	return t, ok
}

// resolve is lookup for the engine, which hands configs to deployers: a
// pending target has none yet, so it resolves as not defined, and a
// refresh leaves its items unchecked.
func (pt *providerTargets) resolve(name string) (*deployer.Target, bool) {
	if pt != nil && pt.pending[name] {
		return nil, false
	}
	return pt.lookup(name)
}

// assuming returns the targets with each pending one pointing where locs
// (by target name) says stored items last saw it, or nowhere known. A
// plan takes a cluster whose kubeconfig is known only after apply to be
// the cluster it was, so its items are not planned to run again for that
// alone; where that assumption could be proved wrong within the apply
// (Terraform plans a changing resource again once the config is known),
// the plan shows their outcome as unknown instead (mayRun).
func (pt *providerTargets) assuming(locs map[string]string) *providerTargets {
	if pt == nil || len(pt.pending) == 0 {
		return pt
	}
	c := &providerTargets{known: pt.known, byName: maps.Clone(pt.byName), pending: pt.pending}
	for n := range pt.pending {
		t := *pt.byName[n]
		t.Location = locs[n]
		c.byName[n] = &t
	}
	return c
}

// isPending reports whether t is a reference to a pending target.
func (pt *providerTargets) isPending(t *deployer.Target) bool {
	return pt != nil && t != nil && t.Ref != "" && pt.pending[t.Ref]
}

// pendingIn reports whether an installation imports a pending target.
func (pt *providerTargets) pendingIn(imp installation.Imports) bool {
	found := slices.ContainsFunc(slices.Collect(maps.Values(imp.Targets)), pt.isPending)
	for _, l := range imp.TargetLists {
		found = found || slices.ContainsFunc(l, pt.isPending)
	}
	for _, m := range imp.TargetMaps {
		found = found || slices.ContainsFunc(slices.Collect(maps.Values(m)), pt.isPending)
	}
	return found
}

// pendingTargetsUnknown makes the target of each rendered deploy item (in
// items, the deploy_items value) that acts on a pending provider target
// unknown: where it points is known after apply.
func pendingTargetsUnknown(items tftypes.Value, specs map[string]engine.ItemSpec, pt *providerTargets) tftypes.Value {
	m := fields(items)
	if m == nil {
		return items
	}
	for key, spec := range specs {
		if v, ok := m[key]; ok && pt.isPending(spec.Target) {
			f := fields(v)
			f["target"] = tftypes.NewValue(tftypes.String, tftypes.UnknownValue)
			m[key] = tftypes.NewValue(v.Type(), f)
		}
	}
	return tftypes.NewValue(items.Type(), m)
}

// locations are where stored items' provider targets pointed, by name.
func locations(targets map[string]*deployer.Target) map[string]string {
	out := map[string]string{}
	for _, t := range targets {
		if t != nil && t.Ref != "" {
			out[t.Ref] = t.Location
		}
	}
	return out
}

func (pt *providerTargets) names() string {
	if pt == nil {
		return orNone(nil)
	}
	return orNone(slices.Sorted(maps.Keys(pt.byName)))
}

// decodeProviderTargets reads the provider's targets attribute. Problems
// are returned as framework diagnostics, on their paths.
func decodeProviderTargets(v tftypes.Value, reg *deployer.Registry) (*providerTargets, diag.Diagnostics) {
	var diags diag.Diagnostics
	pt := &providerTargets{known: v.IsKnown(), byName: map[string]*deployer.Target{}, pending: map[string]bool{}}
	for _, e := range fields(v) {
		f := fields(e)
		if !e.IsKnown() || !f["type"].IsKnown() || !f["labels"].IsFullyKnown() || !f["annotations"].IsFullyKnown() {
			// What templates would see of it is unknown.
			pt.known = false
		}
	}
	if !pt.known {
		return pt, nil
	}
	for _, n := range slices.Sorted(maps.Keys(fields(v))) {
		at := path.Root(attrTargets).AtMapKey(n)
		if !fields(v)[n].IsFullyKnown() {
			pt.pending[n] = true
		}
		if err := validTargetName(n); err != nil {
			diags.AddAttributeError(at, "Invalid provider target name", err.Error()+"; resources name the target by it")
			continue
		}
		for _, p := range validateTarget(fields(v)[n], reg, tftypes.NewAttributePath()) {
			field := "config"
			if strings.Contains(p.summary, "type") {
				field = "type"
			}
			diags.AddAttributeError(at.AtName(field), p.summary, fmt.Sprintf("provider target %q: %s", n, p.detail))
		}
		f := fields(fields(v)[n])
		cfg, _ := deployer.NormalizeConfig(str(f["config"]))
		typ := str(f["type"])
		t := &deployer.Target{Name: n, Ref: n, Type: typ, Labels: stringMap(f["labels"]), Annotations: stringMap(f["annotations"])}
		if !pt.pending[n] {
			t.Config, t.Location = cfg, reg.TargetLocation(typ, cfg)
		}
		pt.byName[n] = t
	}
	return pt, diags
}

// isTargetRef reports whether a resource's target value names a provider
// target: a name, and neither type nor config.
func isTargetRef(f map[string]tftypes.Value) bool {
	n, typ, cfg := f["name"], f["type"], f["config"]
	return n.IsKnown() && !n.IsNull() && typ.IsKnown() && typ.IsNull() && cfg.IsKnown() && cfg.IsNull()
}

// reference is a resource's target that names the provider's target ref,
// as it is kept in the tree and in state: no config, only where it points.
// Metadata given with the reference replaces the provider's.
func (pt *providerTargets) reference(f map[string]tftypes.Value, at *tftypes.AttributePath) (*deployer.Target, problems) {
	var ps problems
	ref := str(f["name"])
	t, ok := pt.lookup(ref)
	if !ok {
		ps.add(at.WithAttributeName("name"), "Provider target not defined", fmt.Sprintf("%q names no target of the "+
			"provider's targets; the provider defines: %s. A target given only a name is the provider's target of "+
			"that name; give type and config for an inline target.", ref, pt.names()))
		return nil, ps
	}
	c := &deployer.Target{Name: ref, Ref: ref, Type: t.Type, Location: t.Location, Labels: t.Labels, Annotations: t.Annotations}
	if l := stringMap(f["labels"]); l != nil {
		c.Labels = l
	}
	if a := stringMap(f["annotations"]); a != nil {
		c.Annotations = a
	}
	return c, ps
}

// validateTargetShape checks that a resource's target is either inline
// (type and config) or a reference (name alone).
func validateTargetShape(f map[string]tftypes.Value, at *tftypes.AttributePath) problems {
	var ps problems
	typ, cfg, n := f["type"], f["config"], f["name"]
	if !typ.IsKnown() || !cfg.IsKnown() {
		return ps
	}
	switch {
	case typ.IsNull() && !cfg.IsNull():
		ps.add(at.WithAttributeName("type"), "Invalid target", "an inline target has both type and config; "+
			"to use a target of the provider's targets, give its name alone")
	case !typ.IsNull() && cfg.IsNull():
		ps.add(at.WithAttributeName("config"), "Invalid target", "an inline target has both type and config; "+
			"to use a target of the provider's targets, give its name alone")
	case typ.IsNull() && cfg.IsNull() && n.IsKnown() && n.IsNull():
		ps.add(at, "Invalid target", "give type and config for an inline target, or a name alone for a target of "+
			"the provider's targets")
	}
	return ps
}

// storedRefs are the provider targets the items of stored statuses use,
// sorted, with the items using each.
func storedRefs(specs map[string]*deployer.Target) map[string][]string {
	out := map[string][]string{}
	for item, t := range specs {
		if t != nil && t.Ref != "" {
			out[t.Ref] = append(out[t.Ref], item)
		}
	}
	for _, items := range out {
		slices.Sort(items)
	}
	return out
}

// missingForDestroy reports the provider targets that stored items use
// and the provider no longer defines: destroying them needs their configs.
func (pt *providerTargets) missingForDestroy(targets map[string]*deployer.Target, verb string) problems {
	var ps problems
	if pt == nil || !pt.known {
		return ps
	}
	refs := storedRefs(targets)
	for _, ref := range slices.Sorted(maps.Keys(refs)) {
		if _, ok := pt.lookup(ref); ok {
			continue
		}
		ps.add(nil, "Provider target not defined", fmt.Sprintf("The deploy items %s use the provider's target %q, "+
			"which the provider no longer defines; %s them needs it, since the state keeps no config for it. "+
			"Define %q in the provider's targets again (it may point to the same cluster with a new credential). "+
			"The provider defines: %s.", quoteAll(refs[ref]), ref, verb, ref, pt.names()))
	}
	return ps
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// allowedDeployers is the provider's allowed_deployers; nil allows all.
type allowedDeployers struct {
	names []string // as configured, for messages
	set   map[string]bool
	reg   *deployer.Registry
}

func decodeAllowedDeployers(v tftypes.Value, reg *deployer.Registry) (*allowedDeployers, diag.Diagnostics) {
	var diags diag.Diagnostics
	if !v.IsFullyKnown() || v.IsNull() {
		return nil, nil
	}
	a := &allowedDeployers{set: map[string]bool{}, reg: reg}
	for i, n := range stringList(v) {
		c, ok := reg.Canonical(n)
		if !ok {
			diags.AddAttributeError(path.Root(attrAllowedDeployers).AtListIndex(i), "Unknown deployer type",
				fmt.Sprintf("%q is not a deployer type; known types: %s", n, strings.Join(reg.Types(), ", ")))
			continue
		}
		a.names = append(a.names, n)
		a.set[c] = true
	}
	return a, diags
}

// check returns an error when items of type typ may not run.
func (a *allowedDeployers) check(typ string) error {
	if a == nil {
		return nil
	}
	c, ok := a.reg.Canonical(typ)
	if ok && a.set[c] {
		return nil
	}
	return fmt.Errorf("its type %q is not in the provider's allowed_deployers [%s]", typ, strings.Join(a.names, ", "))
}

// deletion is a stored deploy item a job would delete: its key and
// attribute path in the resource, and its type.
type deletion struct {
	key, typ string
	at       *tftypes.AttributePath
	// withheld is set when the item's stored config has values masked
	// (engine.ItemSpec.Withheld).
	withheld bool
}

// refusedDeletes reports every item of dels whose type allowed_deployers
// does not list. Deleting runs an item's deployer as reconciling does (an
// exec item's command runs with OPERATION=DELETE), so the list covers the
// whole lifecycle: such a delete is refused at plan time, and the engine
// refuses it too. why says why the items go.
func (a *allowedDeployers) refusedDeletes(dels []deletion, why string) problems {
	var ps problems
	if a == nil {
		return ps
	}
	for _, d := range dels {
		err := a.check(d.typ)
		if err == nil {
			continue
		}
		ps.add(d.at, "Deployer not allowed to delete", fmt.Sprintf("deploy item %q (%s) %s, and deleting it "+
			"runs its deployer, but %v; nothing runs. To delete it, allow %q in the provider's allowed_deployers "+
			"for this apply. To leave what it installed in place, drop the resource from Terraform's state instead, "+
			"with a removed block: removed { from = <this resource's address> lifecycle { destroy = false } }.",
			d.key, pathText(d.at), why, err, d.typ))
	}
	return ps
}

// addProviderTargets masks the credentials of the provider's targets in
// what a job logs and in the errors it records: a deployer's message may
// quote what it was given.
func (l *jobLogger) addProviderTargets(pt *providerTargets) {
	if pt == nil {
		return
	}
	for _, t := range pt.byName {
		l.secrets.AddJSON(t.Config)
	}
}

// providerTargetLabel says where an item's target comes from when it is
// a provider's target: `cluster -> provider target "prod-eu" (https://...)`.
func providerTargetLabel(from string, t *deployer.Target) string {
	label := fmt.Sprintf("provider target %q", t.Ref)
	if from != "" && from != t.Ref {
		label = from + " -> " + label
	}
	if t.Location != "" {
		label += " (" + t.Location + ")"
	}
	return label
}

// refsKey is a blob of private state listing the provider targets its
// items use and where each pointed ("<name>\x00<location>" lines), so a
// settled plan can tell without decoding the status that none points
// elsewhere now: the configuration, which names them, does not change.
const refsKey = "\x00refs"

func markRefs(blobs map[string][]byte, targets map[string]*deployer.Target) {
	seen := map[string]bool{}
	for _, t := range targets {
		if t != nil && t.Ref != "" {
			seen[t.Ref+"\x00"+t.Location] = true
		}
	}
	if len(seen) > 0 {
		blobs[refsKey] = []byte(strings.Join(slices.Sorted(maps.Keys(seen)), "\n"))
	}
}

// pointAsBefore reports whether every provider target that the items of
// private state (its blobs) use is defined and points where it did.
func (pt *providerTargets) pointAsBefore(blobs map[string][]byte) bool {
	refs, ok := blobs[refsKey]
	if !ok {
		return true
	}
	if pt == nil || !pt.known {
		return false
	}
	for name, loc := range storedLocations(refs) {
		if t, ok := pt.lookup(name); !ok || t.Location != loc && !pt.pending[name] {
			return false
		}
	}
	return true
}

// storedLocations reads the blob markRefs writes: where each provider
// target pointed, by name.
func storedLocations(refs []byte) map[string]string {
	out := map[string]string{}
	if len(refs) == 0 {
		return out
	}
	for _, line := range strings.Split(string(refs), "\n") {
		name, loc, _ := strings.Cut(line, "\x00")
		out[name] = loc
	}
	return out
}
