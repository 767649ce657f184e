package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"slices"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/atrest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/installation"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/masking"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/rollout"
)

// Secrets at rest: an installation given sensitive_imports_wo keeps no
// secret, and nothing derived from one, in its state or private state.
// internal/atrest does the work; this file decides when, and what is
// refused because it would need a secret kept nowhere.

func (x *installations) writeOnly() []string { return []string{attrSensitiveImportsWO} }

// atRest reports whether the configuration (or planned value) f gives
// write-only imports: known or not yet known, they make the tree one that
// keeps no secret.
func atRest(f map[string]tftypes.Value) bool {
	wo, ok := f[attrSensitiveImportsWO]
	return ok && !wo.IsNull()
}

// woVersion is sensitive_imports_wo_version as text, "" when null.
func woVersion(f map[string]tftypes.Value) string {
	v := f[attrWOVersion]
	if !v.IsKnown() || v.IsNull() {
		return ""
	}
	var n big.Float
	if v.As(&n) != nil {
		return ""
	}
	return n.Text('f', -1)
}

// sealOf is the Seal of a tree that keeps no secret, or nil.
func sealOf(f map[string]tftypes.Value) *atrest.Seal {
	if !atRest(f) {
		return nil
	}
	return atrest.New(woVersion(f), readsSecret)
}

// readsSecret reports whether an item exports something it reads from a
// Kubernetes Secret: its exports may hold a secret on their own account.
func readsSecret(spec engine.ItemSpec) bool {
	_, _, reads := masking.SecretReads(spec)
	return reads
}

// sealedStatus reports whether a stored status was kept at rest: what it
// withheld must not be mistaken for what ran.
func sealedStatus(st *installation.Status) bool {
	return atrest.Forced(st) || slices.ContainsFunc(treeDeletions(st, ""), func(d deletion) bool { return d.withheld })
}

// eachTarget calls f for every target of an installation's configuration:
// targets, target_lists and target_maps, in a fixed order, with its path.
func eachTarget(cfg map[string]tftypes.Value, f func(at *tftypes.AttributePath, t tftypes.Value)) {
	tgts := fields(cfg[attrTargets])
	for _, name := range slices.Sorted(maps.Keys(tgts)) {
		f(attrPath(attrTargets).WithElementKeyString(name), tgts[name])
	}
	lists := fields(cfg["target_lists"])
	for _, name := range slices.Sorted(maps.Keys(lists)) {
		var elems []tftypes.Value
		_ = lists[name].As(&elems)
		for i, t := range elems {
			f(attrPath("target_lists").WithElementKeyString(name).WithElementKeyInt(i), t)
		}
	}
	tmaps := fields(cfg["target_maps"])
	for _, name := range slices.Sorted(maps.Keys(tmaps)) {
		m := fields(tmaps[name])
		for _, key := range slices.Sorted(maps.Keys(m)) {
			f(attrPath("target_maps").WithElementKeyString(name).WithElementKeyString(key), m[key])
		}
	}
}

// inlineConfig reports whether a target is given inline, with a config
// (or one not known yet).
func inlineConfig(t tftypes.Value) bool {
	c := fields(t)["config"]
	return !c.IsKnown() || !c.IsNull()
}

// validateAtRest refuses what cannot be kept without a secret when
// write-only imports are given: secrets in sensitive_imports, an import
// given twice, inline target configs (stored in the state, and needed to
// delete), and rollouts (which keep the specs their canaries ran before,
// to revert to).
func validateAtRest(f map[string]tftypes.Value) problems {
	var ps problems
	if !atRest(f) {
		return ps
	}
	if v := f[attrSensitiveImports]; !v.IsKnown() || !v.IsNull() {
		ps.add(attrPath(attrSensitiveImports), "Invalid imports", "sensitive_imports and sensitive_imports_wo "+
			"cannot be given together: sensitive_imports are stored in the state, and sensitive_imports_wo promises "+
			"a state without secrets; give every secret in sensitive_imports_wo")
	}
	plain := fields(f["imports"])
	for _, n := range slices.Sorted(maps.Keys(fields(f[attrSensitiveImportsWO]))) {
		if _, ok := plain[n]; ok {
			ps.add(attrPath(attrSensitiveImportsWO).WithElementKeyString(n), "Invalid imports",
				fmt.Sprintf("import %q is given in both imports and sensitive_imports_wo; give it in one", n))
		}
	}
	if r := f[attrRollout]; !r.IsKnown() || !r.IsNull() {
		ps.add(attrPath(attrRollout), "Rollouts keep what their canaries ran", "rollout cannot be used with "+
			"sensitive_imports_wo: a rollout keeps the configs its canaries ran before, to revert to them, and with "+
			"write-only imports no config a secret influenced is kept")
	}
	eachTarget(f, func(at *tftypes.AttributePath, t tftypes.Value) {
		if inlineConfig(t) {
			ps.add(at.WithAttributeName("config"), "Inline target config with write-only imports", fmt.Sprintf(
				"%s gives a target's config inline, which the state stores; with sensitive_imports_wo the state holds "+
					"no secret. Define the target in the provider's targets and use it by name, { name = \"...\" }: the "+
					"provider's configuration is stored nowhere, and destroy takes the config from there.", pathText(at)))
		}
	})
	return ps
}

// refusedWithheld reports every item of dels that cannot be deleted
// because a secret kept nowhere influenced its config and its deployer
// needs that config to delete it (an exec item's command runs again with
// it). why says why the items go.
func refusedWithheld(reg *deployer.Registry, dels []deletion, why string) problems {
	var ps problems
	for _, d := range dels {
		if !d.withheld {
			continue
		}
		dep, _ := reg.Get(d.typ)
		if _, ok := dep.(deployer.Sealer); ok {
			continue
		}
		ps.add(d.at, "Deploy item cannot be deleted without its secret", fmt.Sprintf("deploy item %q (%s) %s, but "+
			"a value of sensitive_imports_wo influenced its config, and its deployer (%s) runs its delete with the "+
			"config it ran with (an exec item's command gets it again with OPERATION=DELETE). That value is kept "+
			"nowhere, so the delete would get *** instead; nothing runs. To delete it, first apply a configuration "+
			"in which this item is still rendered but without the secret (its reconcile then runs with a config "+
			"that is kept); or leave what it did in place and drop the resource from Terraform's state with a "+
			"removed block: removed { from = <this resource's address> lifecycle { destroy = false } }.",
			d.key, pathText(d.at), why, d.typ))
	}
	return ps
}

// sealed is bp as a tree without secrets at rest renders it (seal set),
// or bp.
func sealed(seal *atrest.Seal, bp installation.Blueprint) installation.Blueprint {
	if seal == nil {
		return bp
	}
	return seal.Blueprint(bp)
}

// planTree is installation.PlanTree as plan and apply both ask it: a tree
// without secrets at rest renders through its Seal, and when the job runs
// anything, what the stored status did not keep runs again first
// (atrest.Force). It returns the status the job starts from.
func (x *installations) planTree(ctx context.Context, seal *atrest.Seal, bp installation.Blueprint, imp installation.Imports,
	prev *installation.Status, trigger string, strategy *rollout.Strategy) (*installation.Plan, *installation.Status, error) {
	bp = sealed(seal, bp)
	p, err := installation.PlanTree(ctx, bp, imp, prev, trigger, strategy)
	if err != nil || p.Noop || !atrest.Forced(prev) {
		return p, prev, err
	}
	prev = atrest.Force(prev)
	p, err = installation.PlanTree(ctx, bp, imp, prev, trigger, strategy)
	return p, prev, err
}

// sealStatus is what private state keeps of a tree's status in a tree
// without secrets at rest (see atrest.Seal.Status); others are kept as
// they are.
func (x *installations) sealStatus(st *installation.Status, seal *atrest.Seal, sec *masking.Tree) *installation.Status {
	if seal == nil {
		if !sealedStatus(st) {
			return st
		}
		// Kept at rest before (a destroy has no configuration): what is
		// left stays so.
		seal = atrest.New("", readsSecret)
	}
	for _, d := range seal.Derived() {
		sec.AddText(d)
	}
	return seal.Status(st, x.deployers, func(raw json.RawMessage) json.RawMessage { return sec.JSON(raw) })
}
