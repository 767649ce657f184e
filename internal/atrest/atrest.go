// Package atrest keeps an installation tree at rest without the secrets it
// was given write-only: values that are in the configuration at plan and
// apply time and kept nowhere else. Wherever the tree is stored (Terraform
// state and private state), nothing a sealed value influenced is kept:
//
//   - A node is rendered again with every sealed import replaced by a
//     stand-in (Blueprint), once per round of masking.Rounds (sealed
//     booleans and numbers get more than one, as a branch on two of them
//     can come out the same for one set of stand-ins); each deploy item's
//     config, with every leaf
//     that differs masked and the data of Kubernetes Secrets masked, is
//     what is kept of it (engine.ItemSpec.AtRest). The item's hash covers
//     that masked config, what the node was rendered from without the
//     secrets (its import hash, in which sealed values count by their
//     stand-in, installation.Imports.Sealed) and, through those stand-ins,
//     the version the user bumps when a secret changed. No digest of a
//     secret is kept, keyed or not: there is no key that could be kept
//     nowhere and yet be there at every plan, refresh and destroy.
//   - A node's exports are computed again from stand-ins, round by round; those
//     that differ are sealed too, for whoever imports them.
//   - Status returns what may be stored of a tree: masked configs and
//     exports, deployer states without digests (deployer.Sealer).
//   - Force says what must run again before a job may use what was not
//     kept: items whose exports were masked, and nodes whose exports were.
//
// It knows nothing of Terraform: the caller says which imports are sealed,
// and what stands for them.
package atrest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/installation"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/masking"
)

// Seal keeps one tree at rest. Its zero value is not usable; see New.
type Seal struct {
	standin string
	// secretExport says whether an item's export may hold a secret on
	// its own account (it reads a Kubernetes Secret).
	secretExport func(engine.ItemSpec) bool

	mu sync.Mutex
	// derived are the texts of derived leaves found so far, for masking
	// them in logs and messages.
	derived []string
	// secretExports are, by "<path>/<item>", the items whose exports may
	// hold a secret, as the last rendering of their node found them.
	secretExports map[string]bool
}

// New returns a Seal for a tree whose sealed imports were marked by
// Sealed with version. secretExport tells items whose exports may hold a
// secret on their own account.
func New(version string, secretExport func(engine.ItemSpec) bool) *Seal {
	return &Seal{standin: standin(version), secretExport: secretExport, secretExports: map[string]bool{}}
}

// standin is what stands for sealed values in hashes: it changes when the
// user says the secrets did.
func standin(version string) string { return "sealed:" + version }

// Sealed marks the named data imports of a root's imports as sealed,
// standing for them by version (which the user changes when the secrets
// change).
func Sealed(imp installation.Imports, names []string, version string) installation.Imports {
	if len(names) == 0 {
		return imp
	}
	imp.Sealed = maps.Clone(imp.Sealed)
	if imp.Sealed == nil {
		imp.Sealed = map[string]string{}
	}
	for _, n := range names {
		imp.Sealed[n] = standin(version)
	}
	return imp
}

// Derived are the texts of leaves a sealed value influenced, as found by
// the renderings so far.
func (s *Seal) Derived() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.derived)
}

// Blueprint returns bp, and the blueprints of its sub-installations,
// rendering as described in the package documentation.
func (s *Seal) Blueprint(bp installation.Blueprint) installation.Blueprint {
	if b, ok := bp.(*sealed); ok && b.s == s {
		return bp
	}
	return &sealed{inner: bp, s: s}
}

type sealed struct {
	inner installation.Blueprint
	s     *Seal
}

func (b *sealed) Digest() string { return b.inner.Digest() }

// secretValues collects, under prefix/<name>, the values of data that
// names picks, for planning the rounds of stand-ins.
func secretValues(into map[string]any, prefix string, data map[string]any, names func(string) bool) {
	for n, v := range data {
		if names(n) {
			into[prefix+n] = v
		}
	}
}

// standinData replaces the values of data that names picks by their
// stand-ins of one round, found under prefix/<name> as secretValues
// collected them.
func standinData(st *masking.Standins, prefix string, data map[string]any, names func(string) bool) map[string]any {
	out := maps.Clone(data)
	for n, v := range out {
		if names(n) {
			out[n] = st.At(prefix+n, v)
		}
	}
	return out
}

// isIn is a name picker of a set kept as a map.
func isIn[V any](set map[string]V) func(string) bool {
	return func(n string) bool { _, ok := set[n]; return ok }
}

func (b *sealed) Render(ctx context.Context, in installation.Input) (*installation.Rendered, error) {
	r, err := b.inner.Render(ctx, in)
	if err != nil {
		return r, err
	}
	var shadows []*installation.Rendered
	// mapped are the sub-installations whose importDataMappings a sealed
	// value decided.
	mapped := map[string]bool{}
	if len(in.Imports.Sealed) > 0 {
		secrets := map[string]any{}
		secretValues(secrets, "imports/", in.Imports.Data, isIn(in.Imports.Sealed))
		rounds := masking.NewRounds(secrets)
		failed := false
		for i := range rounds.Count() {
			sin := in
			sin.Imports.Data = standinData(rounds.Standins(i), "imports/", in.Imports.Data, isIn(in.Imports.Sealed))
			shadow, err := b.inner.Render(ctx, sin)
			if err != nil {
				// A schema refuses the stand-ins (a port's minimum and
				// the negative one), or a template checks them. Leaving
				// the round out would hide what only it finds (a
				// template failing for small values keeps out the round
				// that crosses a threshold), so nothing of the node is
				// compared: every config is withheld whole.
				// Names are kept in state, and a round left out may be
				// the one that would have told them from a secret's
				// (the tenth of a count below a minimum of 1, where
				// the count's "more than one" names an item).
				if err := namesUntold(r); err != nil {
					return nil, err
				}
				failed = true
				continue
			}
			if err := sameState(r.State, shadow); err != nil {
				return nil, err
			}
			// Names are kept in state: each round that renders must
			// agree on them.
			if err := sameNames(r, shadow, mapped); err != nil {
				return nil, err
			}
			shadows = append(shadows, shadow)
		}
		if failed {
			if err := sameState(r.State, nil); err != nil {
				return nil, err
			}
			shadows = nil
		}
	}
	// A copy: the inner blueprint may keep what it rendered for later calls.
	out := *r
	out.Items = make(map[string]engine.ItemSpec, len(r.Items))
	key := installation.InputHash(b.inner, in.Imports)
	for name, spec := range r.Items {
		var svs []any
		found := len(shadows) > 0
		for _, shadow := range shadows {
			si, ok := shadow.Items[name]
			var sv any
			if ok {
				sv, ok = masking.Decode(si.Config)
			}
			found = found && ok
			svs = append(svs, sv)
		}
		if !found {
			svs = nil
		}
		spec = b.s.item(spec, svs, found || len(in.Imports.Sealed) == 0, key)
		b.s.mu.Lock()
		b.s.secretExports[installation.Join(in.Path, name)] = spec.Withheld || b.s.secretExport != nil && b.s.secretExport(spec)
		b.s.mu.Unlock()
		out.Items[name] = spec
	}
	out.Subs = slices.Clone(r.Subs)
	for i := range out.Subs {
		out.Subs[i].Blueprint = b.s.Blueprint(out.Subs[i].Blueprint)
		if mapped[out.Subs[i].Name] {
			// The values it maps hold what the mappings were rendered
			// from: they are sealed in the sub, which renders them
			// again from stand-ins and counts them by a stand-in in
			// its imports' hash.
			out.Subs[i].MappingsSealed = b.s.standin
		}
	}
	return &out, nil
}

// item sets what is kept of spec: its config with what a sealed value
// influenced masked (compared with shadows, the same config rendered from
// each round's stand-ins, when comparable; a node without sealed imports
// has none; a node with sealed imports but nothing to compare with has
// every leaf masked), and the data of Kubernetes Secrets masked.
func (s *Seal) item(spec engine.ItemSpec, shadows []any, compared bool, key string) engine.ItemSpec {
	v, ok := masking.Decode(spec.Config)
	if !ok {
		v = string(spec.Config)
	}
	var c masking.Comparison
	switch {
	case compared && len(shadows) == 0 && !ok:
		c = masking.Comparison{Masked: v}
	case compared && len(shadows) == 0:
		c = masking.Compare(v, []any{v}, same, []masking.Literal{same})
	case compared:
		literals := make([]masking.Literal, len(shadows))
		for i := range literals {
			literals[i] = same
		}
		c = masking.Compare(v, shadows, same, literals)
	default:
		c = masking.All(v)
	}
	masked, found, secretData := masking.SecretData(c.Masked)
	s.mu.Lock()
	s.derived = append(s.derived, c.Derived...)
	s.derived = append(s.derived, found...)
	s.mu.Unlock()
	raw, err := json.Marshal(masked)
	if err != nil {
		raw = json.RawMessage(`"` + masking.Mask + `"`)
	}
	spec.AtRest = raw
	spec.Withheld = c.Changed || secretData
	if spec.Withheld {
		// A masked value stands for what it was derived from: anything
		// else the node was rendered from may have changed it.
		spec.AtRestKey = key
	}
	return spec
}

// same leaves text as it is: a leaf a secret influenced is masked whole.
func same(x string) string { return x }

// sameState refuses template state that a sealed value influenced: it is
// handed to the next rendering, so it would have to be kept as it is.
func sameState(state map[string][]byte, shadow *installation.Rendered) error {
	for _, k := range slices.Sorted(maps.Keys(state)) {
		if shadow == nil || !bytes.Equal(state[k], shadow.State[k]) {
			return refused("the template state %q holds a value derived from a write-only secret; "+
				"it would have to be kept in private state, which holds no secret: keep it out of the state", k)
		}
	}
	return nil
}

// namesUntold refuses a node one of whose shadows failed while it renders
// deploy items or sub-installations: without that round nothing tells
// whether a write-only secret named them, or decided whether they exist,
// and their names are kept in state.
func namesUntold(r *installation.Rendered) error {
	if len(r.Items) == 0 && len(r.Subs) == 0 {
		return nil
	}
	return refused("the blueprint refuses the stand-ins of write-only secrets in some round (a schema's pattern, " +
		"enum or bounds such as a minimum, or a template's check?), so nothing tells whether the names of its deploy items and " +
		"sub-installations derive from one; they would be kept in the state, which holds no secret: give such " +
		"secrets in sensitive_imports, or leave the check to the deployer")
}

// Refused is a tree that cannot be kept at rest. Its message names no
// value, only what would have to be kept, so it is shown even where a
// secret decided that the tree is refused.
type Refused struct{ Reason string }

func (r *Refused) Error() string { return r.Reason }

func refused(format string, args ...any) error { return &Refused{Reason: fmt.Sprintf(format, args...)} }

// sameNames refuses deploy items and sub-installations whose names, and
// items whose types, targets or other fields, a sealed value decided: a
// status is kept by those names and with those fields (private state,
// the deploy_items keys of state), so they cannot be masked there, and a
// digest of a secret in a name is as good as the secret to whoever can
// guess it. Names are compared both ways: an item or sub-installation
// left out because of a secret tells as much as one there because of it.
// A sub-installation's template must render the same but for its
// importDataMappings; mapped names those that differ, whose values are
// then derived from a sealed value (Sub.MappingsSealed). The message
// says what, not which name.
func sameNames(r, shadow *installation.Rendered, mapped map[string]bool) error {
	if shadow == nil {
		return nil
	}
	const keep = "; it would be kept in the state, which holds no secret"
	for _, name := range slices.Sorted(maps.Keys(r.Items)) {
		si, found := shadow.Items[name]
		ri := r.Items[name]
		switch {
		case !found:
			// Named after a secret, or there only because of one (if
			// gt .n 0, if eq .env "prod"): either way the name kept
			// in state tells of the secret.
			return refused("a deploy item is named after a write-only secret, or exists only because of one%s: "+
				"name it after something else, and decide with a plain import whether it exists", keep)
		case si.Type != ri.Type:
			return refused("the type of the deploy item %q is derived from a write-only secret%s", name, keep)
		case si.TargetRef != ri.TargetRef:
			return refused("the target of the deploy item %q is derived from a write-only secret%s", name, keep)
		case si.Timeout != ri.Timeout || si.UpdateOnChangeOnly != ri.UpdateOnChangeOnly ||
			!slices.Equal(sortedCopy(si.DependsOn), sortedCopy(ri.DependsOn)):
			return refused("the timeout, dependsOn or updateOnChangeOnly of the deploy item %q is derived from a "+
				"write-only secret%s: decide them with a plain import", name, keep)
		}
	}
	for name := range shadow.Items {
		if _, found := r.Items[name]; !found {
			return refused("a deploy item is left out because of a write-only secret (if ne .env \"prod\", say)%s "+
				"that it is missing: decide with a plain import whether it exists", keep)
		}
	}
	subs := map[string]installation.Sub{}
	for _, sub := range shadow.Subs {
		subs[sub.Name] = sub
	}
	for _, sub := range r.Subs {
		ss, found := subs[sub.Name]
		switch {
		case !found:
			return refused("the name of a sub-installation is derived from a write-only secret, or it exists only "+
				"because of one%s: name it after something else, and decide with a plain import whether it exists", keep)
		case !bytes.Equal(sub.Template, ss.Template) || sub.Blueprint.Digest() != ss.Blueprint.Digest():
			return refused("the template of the sub-installation %q is derived from a write-only secret beyond its "+
				"importDataMappings (its blueprint, imports or exports)%s: pass the secret to it as an import", sub.Name, keep)
		case !bytes.Equal(sub.ImportMappings, ss.ImportMappings):
			mapped[sub.Name] = true
		}
		delete(subs, sub.Name)
	}
	if len(subs) > 0 {
		return refused("a sub-installation is left out because of a write-only secret%s that it is missing: "+
			"decide with a plain import whether it exists", keep)
	}
	return nil
}

func sortedCopy(s []string) []string { return slices.Sorted(slices.Values(s)) }

func (b *sealed) Exports(ctx context.Context, in installation.Input, values installation.ExportValues) (installation.Exports, error) {
	ex, err := b.inner.Exports(ctx, in, values)
	if err != nil {
		return ex, err
	}
	ex.Sealed = nil
	items := map[string]bool{}
	b.s.mu.Lock()
	for name := range values.DeployItems {
		items[name] = b.s.secretExports[installation.Join(in.Path, name)]
	}
	b.s.mu.Unlock()
	if len(in.Imports.Sealed) == 0 && len(values.Sealed) == 0 && !slices.Contains(slices.Collect(maps.Values(items)), true) {
		return ex, nil
	}
	secretItem := func(n string) bool { return items[n] }
	secrets := map[string]any{}
	secretValues(secrets, "imports/", in.Imports.Data, isIn(in.Imports.Sealed))
	secretValues(secrets, "dataobjects/", values.DataObjects, isIn(values.Sealed))
	secretValues(secrets, "deployitems/", values.DeployItems, secretItem)
	rounds := masking.NewRounds(secrets)
	for i := range rounds.Count() {
		st := rounds.Standins(i)
		sin := in
		sin.Imports.Data = standinData(st, "imports/", in.Imports.Data, isIn(in.Imports.Sealed))
		sv := values
		sv.DataObjects = standinData(st, "dataobjects/", values.DataObjects, isIn(values.Sealed))
		sv.DeployItems = standinData(st, "deployitems/", values.DeployItems, secretItem)
		shadow, err := b.inner.Exports(ctx, sin, sv)
		if err := b.s.sealDiffering(&ex, shadow, err); err != nil {
			return ex, err
		}
	}
	return ex, nil
}

// sealDiffering seals the data exports of ex that differ in shadow (all
// of them when the shadow failed), and refuses a target export that does.
func (s *Seal) sealDiffering(ex *installation.Exports, shadow installation.Exports, err error) error {
	for _, n := range slices.Sorted(maps.Keys(ex.Data)) {
		if err != nil || !sameJSON(ex.Data[n], shadow.Data[n]) {
			if ex.Sealed == nil {
				ex.Sealed = map[string]string{}
			}
			ex.Sealed[n] = s.standin
		}
	}
	for _, n := range slices.Sorted(maps.Keys(ex.Targets)) {
		t := ex.Targets[n]
		if len(t.Config) == 0 {
			continue
		}
		if err != nil || !bytes.Equal(t.Config, shadow.Targets[n].Config) {
			return fmt.Errorf("the target export %q is built from a write-only secret; its config would have to be "+
				"kept in the state, which holds no secret: export a target of the provider's targets instead", n)
		}
	}
	return nil
}

func sameJSON(a, b any) bool {
	x, errA := json.Marshal(a)
	y, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(x, y)
}

// Status returns what may be kept of a tree's status: every item's
// config as Blueprint masked it; the exports of items that may hold a
// secret, and every sealed or sensitive export of a node, masked (and
// marked, so that Force runs them again before they are used); deployer
// states without what was derived from withheld configs (a deployer
// that is no deployer.Sealer keeps none); provider statuses and template
// states through mask. st is not changed.
func (s *Seal) Status(st *installation.Status, reg *deployer.Registry, mask func(json.RawMessage) json.RawMessage) *installation.Status {
	st = st.Clone()
	st.Walk(func(path string, n *installation.Status) {
		names := slices.Collect(maps.Keys(n.Exports.Sealed))
		names = append(names, n.SensitiveExports...)
		if len(names) > 0 {
			n.Exports.Data = maps.Clone(n.Exports.Data)
			n.Exports.Sealed = maps.Clone(n.Exports.Sealed)
			if n.Exports.Sealed == nil {
				n.Exports.Sealed = map[string]string{}
			}
			for _, name := range names {
				if v, ok := n.Exports.Data[name]; ok {
					n.Exports.Data[name] = masking.All(v).Masked
					if _, marked := n.Exports.Sealed[name]; !marked {
						n.Exports.Sealed[name] = s.standin
					}
				}
			}
		}
		for k, v := range n.State {
			n.State[k] = mask(v)
		}
		for name, is := range n.Execution.Items {
			if is.Spec.AtRest != nil {
				is.Spec.Config, is.Spec.AtRest, is.Spec.AtRestKey = is.Spec.AtRest, nil, ""
			}
			s.mu.Lock()
			secret := s.secretExports[installation.Join(path, name)]
			s.mu.Unlock()
			if (secret || is.Spec.Withheld) && len(is.Export) > 0 && !is.ExportWithheld {
				if v, ok := masking.Decode(is.Export); ok {
					is.Export, _ = json.Marshal(masking.All(v).Masked)
				} else {
					is.Export = json.RawMessage(`"` + masking.Mask + `"`)
				}
				is.ExportWithheld = true
			}
			if is.Spec.Withheld {
				is.State = sealState(reg, is.Spec.Type, is.State)
			}
			if len(is.ProviderStatus) > 0 {
				is.ProviderStatus = mask(is.ProviderStatus)
			}
		}
	})
	return st
}

func sealState(reg *deployer.Registry, typ string, state []byte) []byte {
	if len(state) == 0 {
		return nil
	}
	d, _ := reg.Get(typ)
	if sl, ok := d.(deployer.Sealer); ok {
		return sl.Seal(state)
	}
	return nil
}

// Force returns prev with what was not kept made to run again: every item
// whose export was masked, and every node whose exports were. A caller
// forces the tree only when it runs anyway (a job that changes nothing
// needs nothing that was not kept), so that the plan and the apply agree.
func Force(prev *installation.Status) *installation.Status {
	if prev == nil {
		return nil
	}
	prev = prev.Clone()
	prev.Walk(func(_ string, n *installation.Status) {
		if len(n.Exports.Sealed) > 0 {
			n.InputHash = ""
		}
		for _, is := range n.Execution.Items {
			if is.ExportWithheld {
				is.AppliedHash = ""
			}
		}
	})
	return prev
}

// Forced reports whether Force changes anything in prev.
func Forced(prev *installation.Status) bool {
	found := false
	prev.Walk(func(_ string, n *installation.Status) {
		found = found || len(n.Exports.Sealed) > 0
		for _, is := range n.Execution.Items {
			found = found || is.ExportWithheld
		}
	})
	return found
}

// Undeletable reports whether an item kept at rest cannot be deleted: its
// config was withheld and its deployer needs the config it ran with.
func Undeletable(reg *deployer.Registry, spec engine.ItemSpec) bool {
	if !spec.Withheld {
		return false
	}
	d, _ := reg.Get(spec.Type)
	_, ok := d.(deployer.Sealer)
	return !ok
}
