package masking

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/installation"
)

// Tree is the masking policy for one installation tree in one RPC: which
// values are secret, the shadow renderings of the tree, and how every
// deploy item, import, export and text that leaves the provider is shown.
// Callers (the provider's glue) record what is secret, ask for the
// shadows where the tree is rendered, and then only ask.
//
// What it promises, for templates that do not set out to leak: no secret
// and nothing a template derived from one (a transformation, a part, a
// branch it decided, a name or key it made) shows in an item's config,
// name, type or target, in a node's imports, in an export that is not
// sensitive, or in a text that goes through Text or Error. How: a leaf,
// key, name or message that differs between the real rendering and any
// shadow rendering (stand-ins for every secret, see Rounds) is masked,
// and its real text is masked wherever it is quoted; what cannot be
// compared (a shadow failed) is masked whole.
type Tree struct {
	lit Secrets
	// secret is set once the tree is known to hold a secret.
	secret bool
	// shadows are the shadow renderings, one per round, and standins
	// their stand-in texts, masked in them as lit is in the real one.
	shadows  []*installation.Shadow
	standins []*Secrets
	// items are the items as shown, by key, derived once.
	items map[string]Item
	// current are the configs the tree renders now, by key, where known:
	// an item showing another config (held by a rollout, reverted by
	// auto-fail) is not compared with the shadow, which renders now.
	current map[string]json.RawMessage
	// prior are the items of the prior state, by key: their config and
	// how they were shown.
	prior map[string]priorItem
	// partners are, per round, the shadow items that stand for real
	// items whose names a secret made, by real key (see pair).
	partners []map[string]string
	// paths are the paths nodes are shown under, by real path (see
	// nodePaths).
	paths map[string]string
}

// Item is a deploy item as it is shown.
type Item struct {
	// Key is the item's key ("<path>/<name>"), or, when its name is
	// derived from a secret, "<path>/" and a MaskedKey.
	Key string
	// Type is the item's type, or Mask.
	Type string
	// TargetMasked says that the item's target (its import name, and
	// where a provider target points) is derived from a secret.
	TargetMasked bool
	// Target is the target as shown, where a caller read it (Prior,
	// Align): the caller words it.
	Target string
	// Config is the config as JSON, with what a secret influenced masked.
	Config json.RawMessage
	// Influenced is set when a secret influenced anything of the item:
	// its export may hold one.
	Influenced bool
}

type priorItem struct {
	config json.RawMessage
	shown  Item
}

// NewTree starts the policy of one tree.
func NewTree() *Tree { return &Tree{} }

// AddValue records a secret value: the leaves of a sensitive import.
func (t *Tree) AddValue(v any) {
	t.secret = true
	t.lit.AddValue(v)
}

// AddImports records the configs of the targets a node imports.
func (t *Tree) AddImports(imp installation.Imports) {
	for _, tg := range importTargets(imp) {
		t.AddTarget(tg)
	}
}

// AddTarget records what a target's config holds: whatever an item acts
// on is secret, wherever it was imported from.
func (t *Tree) AddTarget(tg *deployer.Target) {
	if carriesConfig(tg) {
		t.secret = true
		t.lit.AddJSON(tg.Config)
	}
}

// AddTree records the targets a tree's installations export to each
// other: a sub-installation may import a sibling's exported cluster and
// render its kubeconfig into an item.
func (t *Tree) AddTree(st *installation.Status) {
	st.Walk(func(_ string, n *installation.Status) {
		for _, tg := range n.Exports.Targets {
			t.AddTarget(tg)
		}
	})
}

// Text masks every secret, and every text derived from one that was

// AddText records a text known to be secret, or derived from one, as it
// is (a sealed secret's derived texts, say).
func (t *Tree) AddText(x string) { t.lit.AddText(x) }

// found so far, in text.
func (t *Tree) Text(text string) string { return t.lit.Text(text) }

// JSON masks the secrets in the keys, strings and numbers of a JSON
// document (see Secrets.JSON).
func (t *Tree) JSON(raw json.RawMessage) json.RawMessage { return t.lit.JSON(raw) }

// List are the secret and derived texts found so far, for a log that
// masks them as it goes.
func (t *Tree) List() []string { return t.lit.List() }

// ShadowInput is what Shadow renders a tree from.
type ShadowInput struct {
	Blueprint installation.Blueprint
	// Imports are the root's imports, and Sensitive the values of the
	// data imports that are secret, by import name.
	Imports   installation.Imports
	Sensitive map[string]any
	// Status gives the template state and the sub-installations'
	// exports; Known, when set, limits the nodes rendered (a plan's).
	Status *installation.Status
	Known  func(path string) bool
	// Exports asks to find which data exports of Status's nodes a
	// secret influenced, into their SensitiveExports.
	Exports bool
	// SkipItems renders no deploy executions: the items were derived
	// before (Align), the shadow is for the exports.
	SkipItems bool
}

// Shadow renders the shadows of a tree that holds a secret, and derives
// how specs, its items, are shown. A tree without secrets is not rendered
// again.
func (t *Tree) Shadow(ctx context.Context, in ShadowInput, specs map[string]engine.ItemSpec) {
	if !t.holdsSecrets(in, specs) {
		t.Derive(specs)
		return
	}
	secrets := map[string]any{}
	for n, v := range in.Sensitive {
		secrets["data/"+n] = v
	}
	for p, tg := range importTargetPaths(in.Imports) {
		if v, ok := decode(tg.Config); ok && carriesConfig(tg) {
			secrets[p] = v
		}
	}
	flowingSecrets(secrets, in.Status)
	rounds := NewRounds(secrets)
	t.shadows, t.standins = nil, nil
	sensitive := map[string]map[string]bool{}
	for i := range rounds.Count() {
		st := rounds.Standins(i)
		imp := standinImports(st, in.Imports, in.Sensitive)
		// What flows between nodes gets stand-ins of its own: a
		// stand-in of a whole export is no secret's text, so it must
		// not be masked as one in the shadow (it would mask whole
		// values that the real rendering only masks in part).
		flow := rounds.Standins(i)
		sh := installation.RenderShadow(ctx, in.Blueprint, installation.ShadowInput{
			Imports: imp, Status: in.Status, Known: in.Known, Standin: flow.At, ExportSecret: t.exportSecret,
			Exports: in.Exports, SkipItems: in.SkipItems,
		})
		secrets := &Secrets{}
		for _, x := range st.Strings() {
			secrets.Add(x)
		}
		t.shadows = append(t.shadows, sh)
		t.standins = append(t.standins, secrets)
		for p, names := range sh.Exports {
			if sensitive[p] == nil {
				sensitive[p] = map[string]bool{}
			}
			for _, n := range names {
				sensitive[p][n] = true
			}
		}
	}
	if in.Exports {
		in.Status.Walk(func(p string, n *installation.Status) {
			if s, ok := sensitive[p]; ok {
				n.SensitiveExports = slices.Sorted(maps.Keys(s))
			}
		})
	}
	t.Derive(specs)
}

// flowingSecrets collects, by the paths the shadow walk gives their
// stand-ins (installation.ShadowInput.Standin), the values that become
// secret inside the tree: what items read from Kubernetes Secrets, and
// the sensitive exports and exported targets of its installations. The
// rounds are planned for them as for the root's secrets: a number read
// from a Secret gets the numbers' rounds, a boolean its own.
func flowingSecrets(into map[string]any, st *installation.Status) {
	st.Walk(func(p string, n *installation.Status) {
		for name, is := range n.Execution.Items {
			keys, all, reads := SecretReads(is.Spec)
			v, ok := decode(is.Export)
			if !reads || !ok {
				continue
			}
			key := installation.Join(p, name)
			if m, isMap := v.(map[string]any); isMap && !all {
				for _, k := range keys {
					if e, ok := m[k]; ok {
						into["item/"+key+"/"+k] = e
					}
				}
				continue
			}
			into["item/"+key] = v
		}
		for _, e := range n.SensitiveExports {
			if v, ok := n.Exports.Data[e]; ok {
				into["flow/"+p+"/"+e] = v
			}
		}
		for e, tg := range n.Exports.Targets {
			if v, ok := decode(tg.Config); ok && carriesConfig(tg) {
				into["flow/"+p+"/target/"+e] = v
			}
		}
	})
}

// holdsSecrets reports whether anything in a tree is secret: a sensitive
// import, a target config anywhere, an item reading a Secret, or a
// sub-installation's sensitive export. A reference to a provider target
// carries no config into the tree, so a tree whose targets are all
// references has nothing to render a shadow for.
func (t *Tree) holdsSecrets(in ShadowInput, specs map[string]engine.ItemSpec) bool {
	if len(in.Sensitive) > 0 || slices.ContainsFunc(importTargets(in.Imports), carriesConfig) {
		t.secret = true
	}
	for _, spec := range specs {
		if carriesConfig(spec.Target) {
			t.secret = true
		}
		if _, _, reads := SecretReads(spec); reads {
			t.secret = true
		}
	}
	in.Status.Walk(func(_ string, n *installation.Status) {
		if len(n.SensitiveExports) > 0 || len(n.Exports.Targets) > 0 {
			t.secret = true
		}
	})
	return t.secret
}

// HoldsSecrets reports whether a tree holds a secret (see Shadow), from
// its imports, the values of its sensitive imports, its status and the
// specs of its items, without rendering anything.
func HoldsSecrets(imp installation.Imports, sensitive map[string]any, st *installation.Status, specs map[string]engine.ItemSpec) bool {
	return NewTree().holdsSecrets(ShadowInput{Imports: imp, Sensitive: sensitive, Status: st}, specs)
}

func carriesConfig(t *deployer.Target) bool { return t != nil && len(t.Config) > 0 }

// importTargets are every target of imp.
func importTargets(imp installation.Imports) []*deployer.Target {
	return slices.Collect(maps.Values(importTargetPaths(imp)))
}

// importTargetPaths are every target of imp, by a path naming it.
func importTargetPaths(imp installation.Imports) map[string]*deployer.Target {
	out := map[string]*deployer.Target{}
	for n, tg := range imp.Targets {
		out["target/"+n] = tg
	}
	for n, l := range imp.TargetLists {
		for i, tg := range l {
			out["list/"+n+"/"+strconv.Itoa(i)] = tg
		}
	}
	for n, m := range imp.TargetMaps {
		for k, tg := range m {
			out["map/"+n+"/"+k] = tg
		}
	}
	return out
}

// standinImports replaces the sensitive data imports and every target's
// config by stand-ins.
func standinImports(st *Standins, imp installation.Imports, sensitive map[string]any) installation.Imports {
	out := installation.Imports{Data: make(map[string]any, len(imp.Data))}
	for n, v := range imp.Data {
		if _, ok := sensitive[n]; ok {
			v = st.At("data/"+n, v)
		}
		out.Data[n] = v
	}
	target := func(path string, t *deployer.Target) *deployer.Target {
		if t == nil {
			return nil
		}
		c := *t
		c.Config = st.JSON(path, t.Config)
		return &c
	}
	if imp.Targets != nil {
		out.Targets = make(map[string]*deployer.Target, len(imp.Targets))
		for n, t := range imp.Targets {
			out.Targets[n] = target("target/"+n, t)
		}
	}
	if imp.TargetLists != nil {
		out.TargetLists = make(map[string][]*deployer.Target, len(imp.TargetLists))
		for n, l := range imp.TargetLists {
			c := make([]*deployer.Target, len(l))
			for i, t := range l {
				c[i] = target("list/"+n+"/"+strconv.Itoa(i), t)
			}
			out.TargetLists[n] = c
		}
	}
	if imp.TargetMaps != nil {
		out.TargetMaps = make(map[string]map[string]*deployer.Target, len(imp.TargetMaps))
		for n, m := range imp.TargetMaps {
			c := make(map[string]*deployer.Target, len(m))
			for k, t := range m {
				c[k] = target("map/"+n+"/"+k, t)
			}
			out.TargetMaps[n] = c
		}
	}
	return out
}

// SecretReads says which exports of an item it reads from a Kubernetes
// Secret (an export's fromResource or fromObjectRef of kind Secret), as
// Landscaper's guided tour exports a ServiceAccount's token: the keys of
// those exports, or all when an export reading a Secret names no key. An
// export read from a ConfigMap beside them is no secret.
func SecretReads(spec engine.ItemSpec) (keys []string, all, reads bool) {
	if !bytes.Contains(spec.Config, []byte(`"Secret"`)) {
		return nil, false, false
	}
	v, ok := decode(spec.Config)
	if !ok {
		return nil, false, false
	}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			secret := false
			for _, k := range []string{"fromResource", "fromObjectRef"} {
				if ref, ok := x[k].(map[string]any); ok && ref["kind"] == "Secret" {
					secret = true
				}
			}
			if secret {
				reads = true
				if key, ok := x["key"].(string); ok && key != "" {
					keys = append(keys, key)
				} else {
					all = true
				}
			}
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	slices.Sort(keys)
	return slices.Compact(keys), all, reads
}

// exportSecret decides, for a shadow's export executions, which part of
// an item's export may hold a secret: all of it when a secret reached
// its spec (or that cannot be told), else the exports it reads from
// Secrets.
func (t *Tree) exportSecret(key string, spec engine.ItemSpec, shadow *engine.ItemSpec) (bool, []string) {
	keys, all, _ := SecretReads(spec)
	switch {
	case all:
		return true, nil
	case shadow != nil:
		if !sameSpec(spec, *shadow) {
			return true, nil
		}
	default:
		it, ok := t.items[key]
		if !ok || it.Influenced {
			return true, nil
		}
	}
	return false, keys
}

func sameSpec(a, b engine.ItemSpec) bool {
	if a.Type != b.Type || a.TargetRef != b.TargetRef {
		return false
	}
	x, okA := decode(a.Config)
	y, okB := decode(b.Config)
	if !okA || !okB {
		return false
	}
	bx, _ := json.Marshal(x)
	by, _ := json.Marshal(y)
	return bytes.Equal(bx, by)
}

// Current records the configs the tree renders now, by key.
func (t *Tree) Current(specs map[string]engine.ItemSpec) {
	t.current = make(map[string]json.RawMessage, len(specs))
	for k, spec := range specs {
		t.current[k] = compacted(spec.Config)
	}
}

// Prior records how the prior state showed the items of st, the status it
// was written with: shown are its items by the keys it shows them under.
// An item shown again with the same config shows the same way.
func (t *Tree) Prior(shown map[string]Item, st *installation.Status) {
	if shown == nil || st == nil {
		return
	}
	t.prior = map[string]priorItem{}
	for key, spec := range st.ItemSpecs() {
		if k, ok := priorKey(key, shown, st); ok {
			it := shown[k]
			it.Key = k
			it.Influenced = true
			t.prior[key] = priorItem{config: compacted(spec.Config), shown: it}
		}
	}
}

// priorKey finds the key the prior state showed an item under: its own,
// or the masked key Derive gave it, which numbers the masked names of a
// node in order.
func priorKey(key string, shown map[string]Item, st *installation.Status) (string, bool) {
	if _, ok := shown[key]; ok {
		return key, true
	}
	path, name := splitKey(key)
	sp := priorPath(path, shown, st)
	if k := installation.Join(sp, name); k != key {
		if _, ok := shown[k]; ok {
			return k, true
		}
	}
	var masked []string
	for n := range nodeAt(st, path).Execution.Items {
		if _, ok := shown[installation.Join(sp, n)]; !ok {
			masked = append(masked, n)
		}
	}
	slices.Sort(masked)
	i := slices.Index(masked, name)
	k := installation.Join(sp, MaskedKey(i))
	_, ok := shown[k]
	return k, i >= 0 && ok
}

// priorPath finds the path the prior state showed the node at path under:
// each sub-installation's name that no shown key holds is masked,
// numbered among its masked siblings with items as nodePaths numbers
// them.
func priorPath(path string, shown map[string]Item, st *installation.Status) string {
	if path == "" {
		return ""
	}
	under := func(p string) bool {
		for k := range shown {
			if strings.HasPrefix(k, p+"/") {
				return true
			}
		}
		return false
	}
	realPath, out := "", ""
	for _, seg := range strings.Split(path, "/") {
		if under(installation.Join(out, seg)) {
			out = installation.Join(out, seg)
		} else {
			var masked []string
			for n, sub := range nodeAt(st, realPath).Subs {
				if !under(installation.Join(out, n)) && len(sub.ItemSpecs()) > 0 {
					masked = append(masked, n)
				}
			}
			slices.Sort(masked)
			if i := slices.Index(masked, seg); i >= 0 {
				out = installation.Join(out, MaskedKey(i))
			} else {
				out = installation.Join(out, seg)
			}
		}
		realPath = installation.Join(realPath, seg)
	}
	return out
}

func nodeAt(st *installation.Status, path string) *installation.Status {
	n := st.ByPath()[path]
	if n == nil {
		return &installation.Status{}
	}
	return n
}

// splitKey splits an item key into its node's path and its name.
func splitKey(key string) (string, string) {
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		return key[:i], key[i+1:]
	}
	return "", key
}

// Derive computes how every item of specs is shown (see Item), once per
// item: compared with its shadows, or kept as the prior state showed it
// when it is not rendered now; the data of Kubernetes Secrets and literal
// secrets masked either way. What it masks joins the secret texts.
func (t *Tree) Derive(specs map[string]engine.ItemSpec) {
	if t.items == nil {
		t.items = make(map[string]Item, len(specs))
	}
	var derived []string
	named := map[string][]string{} // masked names, by node path
	t.pair(specs)
	derived = append(derived, t.nodePaths(specs)...)
	for _, key := range slices.Sorted(maps.Keys(specs)) {
		if _, done := t.items[key]; done {
			continue
		}
		it, d, masked := t.deriveItem(key, specs[key])
		if it.Key == key {
			path, name := splitKey(key)
			it.Key = installation.Join(t.paths[path], name)
		}
		t.items[key] = it
		derived = append(derived, d...)
		if masked {
			path, name := splitKey(key)
			named[path] = append(named[path], name)
		}
	}
	for path, names := range named {
		taken := map[string]bool{}
		for _, it := range t.items {
			taken[it.Key] = true
		}
		i := 0
		shownPath := t.paths[path]
		for _, n := range names {
			for taken[installation.Join(shownPath, MaskedKey(i))] {
				i++
			}
			key := installation.Join(path, n)
			it := t.items[key]
			it.Key = installation.Join(shownPath, MaskedKey(i))
			taken[it.Key] = true
			t.items[key] = it
			derived = append(derived, n)
		}
	}
	// Added at the end: every text added sorts the list again.
	for _, d := range derived {
		// A derived text's parts are derived texts of their own where
		// they differ (Comparison.Derived).
		t.lit.AddText(d)
	}
}

// nodePaths finds the paths the nodes of specs' items are shown under
// (once per node): a sub-installation whose name some shadow's parent
// does not render, or whose parent some shadow did not render, was named
// after a secret as far as anyone can tell, and its name, in every key
// below it, is masked, numbered among the masked sub-installations of its
// parent in order of their real names (MaskedKey). It returns the masked
// names, which are derived texts.
func (t *Tree) nodePaths(specs map[string]engine.ItemSpec) (derived []string) {
	if t.paths == nil {
		t.paths = map[string]string{"": ""}
	}
	var paths []string
	for key := range specs {
		for p, _ := splitKey(key); p != ""; p, _ = splitKey(p) {
			if _, done := t.paths[p]; done {
				break
			}
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	paths = slices.Compact(paths)
	// Parents sort before their children.
	taken := map[string]bool{}
	for _, p := range t.paths {
		taken[p] = true
	}
	for _, p := range paths {
		parent, name := splitKey(p)
		shownParent := t.paths[parent]
		if !t.subNamedAfterSecret(parent, name) {
			t.paths[p] = installation.Join(shownParent, name)
			continue
		}
		i := 0
		for taken[installation.Join(shownParent, MaskedKey(i))] {
			i++
		}
		t.paths[p] = installation.Join(shownParent, MaskedKey(i))
		taken[t.paths[p]] = true
		derived = append(derived, name)
	}
	return derived
}

// AddPath adds the sub-installation names on the node path that a
// secret may have made (see nodePaths) to the secret texts, for messages
// naming the node.
func (t *Tree) AddPath(path string) {
	if len(t.shadows) == 0 {
		return
	}
	for p := path; p != ""; {
		parent, name := splitKey(p)
		if t.subNamedAfterSecret(parent, name) {
			t.addName(name)
		}
		p = parent
	}
}

// addName masks a sub-installation name a secret made in messages; a
// name too short to be masked everywhere (a country code) where messages
// quote, list or join it.
func (t *Tree) addName(name string) {
	if t.lit.AddText(name) || utf8.RuneCountInString(name) >= minSecret {
		return
	}
	for _, q := range []string{`"` + name + `"`, ": " + name, ", " + name, "/" + name, name + "/"} {
		t.lit.AddQuote(q, strings.Replace(q, name, Mask, 1))
	}
}

// subNamedAfterSecret reports whether the sub-installation name of the
// node parent may be named after a secret: some shadow renders parent
// without a sub-installation of that name, or does not render parent.
func (t *Tree) subNamedAfterSecret(parent, name string) bool {
	for _, sh := range t.shadows {
		names, rendered := sh.Subs[parent]
		if !rendered || sh.NodeFailed(parent) || !slices.Contains(names, name) {
			return true
		}
	}
	return false
}

// pair finds, in every round, the shadow items of the real items of specs
// that the shadow does not render under the same name: a template named
// them after a secret. Within a node that renders as many items in the
// shadow as for real, the ones left over are paired, each with the most
// alike (by type and config), so that their configs are compared like
// any other: what the stderr of `login-{{ .user }}` quotes is found. A
// node whose number of items differs is not paired: its unmatched items
// are masked whole.
func (t *Tree) pair(specs map[string]engine.ItemSpec) {
	if len(t.shadows) == 0 {
		return
	}
	if t.partners == nil {
		t.partners = make([]map[string]string, len(t.shadows))
	}
	rendered := map[string]map[string]bool{}
	for key := range specs {
		p, n := splitKey(key)
		if rendered[p] == nil {
			rendered[p] = map[string]bool{}
		}
		rendered[p][n] = true
	}
	for i, sh := range t.shadows {
		if t.partners[i] == nil {
			t.partners[i] = map[string]string{}
		}
		shadowNames := map[string][]string{}
		for key := range sh.Items {
			p, n := splitKey(key)
			shadowNames[p] = append(shadowNames[p], n)
		}
		for p, names := range rendered {
			if sh.NodeFailed(p) || len(shadowNames[p]) != len(names) {
				continue
			}
			var lone, free []string
			for n := range names {
				if _, ok := sh.Items[installation.Join(p, n)]; !ok {
					lone = append(lone, n)
				}
			}
			for _, n := range shadowNames[p] {
				if !names[n] {
					free = append(free, n)
				}
			}
			slices.Sort(lone)
			slices.Sort(free)
			for _, n := range lone {
				key := installation.Join(p, n)
				best, score := -1, -1
				for j, f := range free {
					if sc := likeness(specs[key], sh.Items[installation.Join(p, f)]); sc > score {
						best, score = j, sc
					}
				}
				if best < 0 {
					break
				}
				t.partners[i][key] = installation.Join(p, free[best])
				free = slices.Delete(free, best, best+1)
			}
		}
	}
}

// likeness scores how alike two items are: their type, and how much of
// their configs' start and end they share.
func likeness(a, b engine.ItemSpec) int {
	x, y := compacted(a.Config), compacted(b.Config)
	n := 0
	for n < len(x) && n < len(y) && x[n] == y[n] {
		n++
	}
	m := 0
	for m < len(x)-n && m < len(y)-n && x[len(x)-1-m] == y[len(y)-1-m] {
		m++
	}
	if a.Type == b.Type {
		n += 1 << 20
	}
	return n + m
}

// shadowItem is the item of round i that stands for the real item key:
// the one of the same name, or its partner (see pair); renamed says it
// is the partner.
func (t *Tree) shadowItem(i int, key string) (spec engine.ItemSpec, renamed, ok bool) {
	if spec, ok = t.shadows[i].Items[key]; ok {
		return spec, false, true
	}
	if i < len(t.partners) {
		if k, found := t.partners[i][key]; found {
			return t.shadows[i].Items[k], true, true
		}
	}
	return engine.ItemSpec{}, false, false
}

// deriveItem shows one item; masked says that its name is derived.
func (t *Tree) deriveItem(key string, spec engine.ItemSpec) (it Item, derived []string, masked bool) {
	cfg := compacted(spec.Config)
	it = Item{Key: key, Type: spec.Type, Config: cfg}
	secretData := bytes.Contains(cfg, []byte(`"Secret"`))
	v, ok := decode(cfg)
	if !ok {
		v = string(cfg)
	}
	cur, rendered := t.current[key]
	notNow := rendered && !bytes.Equal(cur, cfg)
	if p, ok := t.prior[key]; ok && !rendered && t.current != nil && bytes.Equal(p.config, cfg) {
		// Not rendered now (a rollout holds its node at the prior
		// spec, say), and unchanged: a shadow of now is no measure.
		notNow = true
	}
	if p, ok := t.prior[key]; ok && (len(t.shadows) == 0 || notNow || t.failedAt(key)) && bytes.Equal(p.config, cfg) {
		// Not rendered now (or not comparable): what the last state
		// showed of this very config.
		return p.shown, nil, false
	}
	var c Comparison
	switch {
	case len(t.shadows) == 0:
		if !t.secret {
			c.Masked = v
			break
		}
		// Secret, and nothing to compare with: a destroy, say, of an
		// item the prior state did not show.
		fallthrough
	case notNow || t.failedAt(key):
		c = All(v)
		it.Type, it.TargetMasked, masked = Mask, true, true
	default:
		shadows := make([]any, len(t.shadows))
		literals := make([]Literal, len(t.shadows))
		for i := range t.shadows {
			s, renamed, _ := t.shadowItem(i, key)
			masked = masked || renamed
			shadows[i], _ = decode(compacted(s.Config))
			literals[i] = t.standins[i].Text
			if s.Type != spec.Type {
				it.Type = Mask
			}
			if s.TargetRef != spec.TargetRef {
				it.TargetMasked = true
			}
		}
		c = Compare(v, shadows, t.lit.Text, literals)
		if it.Type == Mask {
			c.Changed = true
			derived = append(derived, spec.Type)
		}
		if it.TargetMasked {
			c.Changed = true
			derived = append(derived, spec.TargetRef)
		}
	}
	derived = append(derived, c.Derived...)
	v, changed := c.Masked, c.Changed
	// Only what a secret input changed taints the item's exports: the
	// data of a Secret manifest is hidden from view, but an export read
	// from a ConfigMap beside it holds none of it (exports read from
	// Secrets are SecretReads' concern).
	it.Influenced = changed || masked
	if secretData {
		var found []string
		var m bool
		v, found, m = SecretData(v)
		derived = append(derived, found...)
		changed = changed || m
	}
	switch {
	case changed:
		out, err := json.Marshal(v)
		if err != nil {
			out = json.RawMessage(`"` + Mask + `"`)
		}
		it.Config = out
	case len(t.shadows) == 0:
		// Not compared: literal secrets may be in it.
		it.Config = t.lit.JSON(cfg)
		it.Influenced = !bytes.Equal(it.Config, cfg)
	}
	return it, derived, masked
}

// failedAt reports whether some shadow has no rendering of the item key
// to compare it with.
func (t *Tree) failedAt(key string) bool {
	path, _ := splitKey(key)
	for i, sh := range t.shadows {
		if _, _, ok := t.shadowItem(i, key); !ok || sh.NodeFailed(path) {
			return true
		}
	}
	return false
}

// Item is how the item key, with spec, is shown.
func (t *Tree) Item(key string, spec engine.ItemSpec) Item {
	if _, ok := t.items[key]; !ok {
		t.Derive(map[string]engine.ItemSpec{key: spec})
	}
	return t.items[key]
}

// Key is the key the item key is shown under (see Item.Key): the same
// everywhere an attribute is keyed by item.
func (t *Tree) Key(key string) string {
	if it, ok := t.items[key]; ok {
		return it.Key
	}
	return key
}

// Imports masks the data imports of the node at path as deploy items are
// masked: what differs from the node's stand-in imports, and literal
// secrets. Import names are the blueprint's, never a secret's.
func (t *Tree) Imports(path string, data map[string]any) any {
	v := roundTrip(data)
	if len(t.shadows) > 0 {
		shadows := make([]any, 0, len(t.shadows))
		literals := make([]Literal, 0, len(t.shadows))
		for i, sh := range t.shadows {
			imp, ok := sh.Imports[path]
			if !ok || sh.NodeFailed(path) {
				masked := make(map[string]any, len(data))
				for n := range data {
					masked[n] = Mask
				}
				v = masked
				shadows = nil
				break
			}
			sd := imp.Data
			if sd == nil {
				sd = map[string]any{}
			}
			shadows = append(shadows, roundTrip(sd))
			literals = append(literals, t.standins[i].Text)
		}
		if shadows != nil {
			v = Compare(v, shadows, t.lit.Text, literals).Masked
		}
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return Mask
	}
	out, _ := decode(t.lit.JSON(raw))
	return out
}

// Error masks what a rendering of the node at path said (an error a
// template or a schema gave): the known secrets, and what differs from
// what the shadows said of the same node. The differing part joins the
// secret texts, with a little of its context, so every message quoting it
// masks it too. ok is false when a shadow rendered the node without an
// error: then whether the error happens depends on a secret, and nothing
// of it should show.
func (t *Tree) Error(path, msg string) (masked string, ok bool) {
	if len(t.shadows) == 0 {
		return t.Text(msg), true
	}
	said := make([]string, len(t.shadows))
	for i, sh := range t.shadows {
		if said[i], ok = sh.ErrorAt(path); !ok {
			return Mask, false
		}
	}
	return t.lit.Compared(msg, said), true
}

// ShadowFailed reports whether a shadow of the node at path failed to
// render or to export: an error of the real node can be compared with
// what the shadow said (Error).
func (t *Tree) ShadowFailed(path string) bool {
	for _, sh := range t.shadows {
		if _, ok := sh.ErrorAt(path); ok {
			return true
		}
	}
	return false
}

// compacted is JSON without insignificant space, as configs are compared.
func compacted(raw json.RawMessage) json.RawMessage {
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return raw
	}
	return buf.Bytes()
}

// roundTrip gives a value the form decode gives it.
func roundTrip(v any) any {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	out, _ := decode(raw)
	return out
}
