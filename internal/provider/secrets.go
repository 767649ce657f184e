package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"sigs.k8s.io/yaml"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/installation"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/masking"
)

// mask replaces a secret wherever one would be shown: logs, error
// messages and the rendered deploy items of a plan.
const mask = "***"

// secrets are the values known to be sensitive, as they would appear in
// text: string and number leaves of JSON values. Booleans and very short
// strings are left out: masking every "true" or "a" would hide the rest
// of the text, not a secret.
type secrets struct {
	list   []string
	seen   map[string]bool
	sorted bool
	// shadow, when set, is the tree rendered from stand-ins (shadowOf);
	// standins are those stand-ins, masked in it as list is in the real
	// rendering.
	shadow   *installation.Shadow
	standins *secrets
	// items caches each item's masked config by key, derived once.
	items map[string]json.RawMessage
	// current are the configs the tree renders now, by key, where known:
	// an item showing another config (held by a rollout, reverted by
	// auto-fail) is not compared with the shadow, which renders now.
	current map[string]json.RawMessage
	// prior are the items of the prior state: config and masked config.
	prior map[string][2]json.RawMessage
	// compared are the items masked by comparison with their shadow.
	compared map[string]bool
}

// addJSON records the leaves of a JSON value.
func (s *secrets) addJSON(raw json.RawMessage) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return
	}
	s.addValue(v)
}

// addValue records the leaves of a decoded JSON value.
func (s *secrets) addValue(v any) {
	switch x := v.(type) {
	case string:
		s.add(x)
	case json.Number:
		s.add(string(x))
	case []any:
		for _, e := range x {
			s.addValue(e)
		}
	case map[string]any:
		for _, e := range x {
			s.addValue(e)
		}
	}
}

func (s *secrets) add(x string) {
	if s.addText(x) {
		s.addEmbedded(x)
	}
}

// addText records x as it is, once; it reports whether x is new.
func (s *secrets) addText(x string) bool {
	if len(x) < 3 {
		return false
	}
	if s.seen == nil {
		s.seen = map[string]bool{}
	}
	if s.seen[x] {
		return false
	}
	s.seen[x] = true
	s.list = append(s.list, x)
	s.sorted = false
	return true
}

// secretKey matches the keys under which documents hold credentials:
// kubeconfig's token, client-key-data and client-certificate-data, a
// password, an auth header.
var secretKey = regexp.MustCompile(`(?i)token|password|passwd|secret|key|cert|auth|credential`)

// addEmbedded records the credentials of a YAML or JSON document held in
// a secret string, such as a target's kubeconfig: a template that parses
// the document and takes its token out must not show the token either.
// Only leaves under credential-like keys count, so that the document's
// kinds and names ("Config", a context's name) stay readable elsewhere.
func (s *secrets) addEmbedded(x string) {
	if !strings.Contains(x, "\n") && !strings.HasPrefix(strings.TrimSpace(x), "{") {
		return
	}
	var doc any
	if yaml.Unmarshal([]byte(x), &doc) != nil {
		return
	}
	var walk func(v any, secret bool)
	walk = func(v any, secret bool) {
		switch t := v.(type) {
		case map[string]any:
			for k, e := range t {
				walk(e, secret || secretKey.MatchString(k))
			}
		case []any:
			for _, e := range t {
				walk(e, secret)
			}
		case string:
			if secret && t != x {
				s.add(t)
			}
		}
	}
	walk(doc, false)
}

func (s *secrets) empty() bool { return len(s.list) == 0 }

// masked replaces every secret in text.
func (s *secrets) masked(text string) string {
	if !s.sorted {
		// Longest first, so a secret containing another is masked whole.
		sort.Slice(s.list, func(i, j int) bool { return len(s.list[i]) > len(s.list[j]) })
		s.sorted = true
	}
	for _, sec := range s.list {
		text = strings.ReplaceAll(text, sec, mask)
	}
	return text
}

// maskedJSON masks the secrets in the keys, strings and numbers of a JSON
// document. It returns raw itself when nothing was masked, so documents
// without secrets keep their exact text.
func (s *secrets) maskedJSON(raw json.RawMessage) json.RawMessage {
	if s.empty() {
		return raw
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return raw
	}
	changed := false
	var walk func(any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case string:
			if m := s.masked(x); m != x {
				changed = true
				return m
			}
		case json.Number:
			if s.masked(string(x)) != string(x) {
				changed = true
				return mask
			}
		case []any:
			for i, e := range x {
				x[i] = walk(e)
			}
		case map[string]any:
			out := make(map[string]any, len(x))
			for k, e := range x {
				mk := s.masked(k)
				changed = changed || mk != k
				out[mk] = walk(e)
			}
			return out
		}
		return v
	}
	v = walk(v)
	if !changed {
		return raw
	}
	out, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage(`"` + mask + `"`)
	}
	return out
}

// Masking by derivation. A literal search for a secret's text misses
// what a template made of it (its base64, a hash, a basic-auth header),
// so a tree with secrets is rendered a second time with every secret
// replaced by a stand-in (installation.RenderShadow): every leaf of a
// deploy item's config that differs between the two renderings was
// derived from a secret and is masked, and its text joins the literal
// secrets, so logs, messages and cluster_changes mask it too. A tree
// without secrets renders once, as before.

// shadowSpec is what a shadow rendering needs from the caller.
type shadowSpec struct {
	bp        installation.Blueprint
	imp       installation.Imports
	sensitive map[string]any
	// st gives the template state and the sub-installations' exports;
	// known, when set, limits the nodes rendered (a plan's).
	st    *installation.Status
	known func(path string) bool
	// exports asks to record the sensitive exports of st's nodes.
	exports bool
}

// shadowOf renders the shadow of a tree whose items are specs, when the
// tree has secrets, and derives the masked configs of specs.
func (s *secrets) shadowOf(ctx context.Context, in shadowSpec, specs map[string]engine.ItemSpec) {
	if !hasSecrets(in, specs) {
		s.derive(specs)
		return
	}
	st := &masking.Standins{}
	shadowImp := standinImports(st, in.imp, in.sensitive)
	// What flows between nodes gets stand-ins of its own: a stand-in of
	// a whole export is no secret's text, so it must not be masked as
	// one in the shadow (it would mask whole values that the real
	// rendering only masks in part).
	flow := &masking.Standins{}
	s.shadow = installation.RenderShadow(ctx, in.bp, installation.ShadowInput{
		Imports: shadowImp, Status: in.st, Known: in.known, Standin: flow.Of, SecretExport: readsSecret, Exports: in.exports,
	})
	s.standins = &secrets{}
	for _, x := range st.Strings() {
		s.standins.add(x)
	}
	s.derive(specs)
}

// hasSecrets reports whether anything in a tree is secret: a sensitive
// import, a target config anywhere, an item reading a Secret, or a
// sub-installation's sensitive export. A reference to a provider target
// carries no config into the tree, so a tree whose targets are all
// references has nothing to render a shadow for.
func hasSecrets(in shadowSpec, specs map[string]engine.ItemSpec) bool {
	if len(in.sensitive) > 0 || importsCarryConfig(in.imp) {
		return true
	}
	for _, spec := range specs {
		if carriesConfig(spec.Target) || readsSecret(spec) {
			return true
		}
	}
	found := false
	in.st.Walk(func(_ string, n *installation.Status) {
		found = found || len(n.SensitiveExports) > 0 || len(n.Exports.Targets) > 0
	})
	return found
}

func carriesConfig(t *deployer.Target) bool { return t != nil && len(t.Config) > 0 }

func importsCarryConfig(imp installation.Imports) bool {
	for _, t := range imp.Targets {
		if carriesConfig(t) {
			return true
		}
	}
	for _, l := range imp.TargetLists {
		if slices.ContainsFunc(l, carriesConfig) {
			return true
		}
	}
	for _, m := range imp.TargetMaps {
		for _, t := range m {
			if carriesConfig(t) {
				return true
			}
		}
	}
	return false
}

// standinImports replaces the sensitive data imports and every target's
// config by stand-ins.
func standinImports(st *masking.Standins, imp installation.Imports, sensitive map[string]any) installation.Imports {
	out := installation.Imports{Data: make(map[string]any, len(imp.Data))}
	for n, v := range imp.Data {
		if _, ok := sensitive[n]; ok {
			v = st.Of(v)
		}
		out.Data[n] = v
	}
	target := func(t *deployer.Target) *deployer.Target {
		if t == nil {
			return nil
		}
		c := *t
		c.Config = st.JSON(t.Config)
		return &c
	}
	if imp.Targets != nil {
		out.Targets = make(map[string]*deployer.Target, len(imp.Targets))
		for n, t := range imp.Targets {
			out.Targets[n] = target(t)
		}
	}
	if imp.TargetLists != nil {
		out.TargetLists = make(map[string][]*deployer.Target, len(imp.TargetLists))
		for n, l := range imp.TargetLists {
			c := make([]*deployer.Target, len(l))
			for i, t := range l {
				c[i] = target(t)
			}
			out.TargetLists[n] = c
		}
	}
	if imp.TargetMaps != nil {
		out.TargetMaps = make(map[string]map[string]*deployer.Target, len(imp.TargetMaps))
		for n, m := range imp.TargetMaps {
			c := make(map[string]*deployer.Target, len(m))
			for k, t := range m {
				c[k] = target(t)
			}
			out.TargetMaps[n] = c
		}
	}
	return out
}

// readsSecret reports whether an item exports something it reads from a
// Kubernetes Secret (an export's fromResource or fromObjectRef of kind
// Secret), as Landscaper's guided tour exports a ServiceAccount token.
func readsSecret(spec engine.ItemSpec) bool {
	if !bytes.Contains(spec.Config, []byte(`"Secret"`)) {
		return false
	}
	v, ok := masking.Decode(spec.Config)
	if !ok {
		return false
	}
	found := false
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if ref, ok := e.(map[string]any); ok && (k == "fromResource" || k == "fromObjectRef") && ref["kind"] == "Secret" {
					found = true
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return found
}

// derive computes the masked config of every item of specs: leaves a
// secret influenced (by the shadow), the data of Kubernetes Secrets,
// and literal secrets. What it masks joins the literal secrets.
func (s *secrets) derive(specs map[string]engine.ItemSpec) {
	if s.items == nil {
		s.items = make(map[string]json.RawMessage, len(specs))
	}
	var derived []string
	defer func() {
		// Added at the end: every add would sort the list again.
		for _, d := range derived {
			// A derived text's parts are derived texts of their own
			// where they differ (masking.Comparison.Derived).
			s.addText(d)
		}
	}()
	for key, spec := range specs {
		if _, done := s.items[key]; done {
			continue
		}
		// Whatever an item acts on is secret, wherever it was imported from.
		s.addTarget(spec.Target)
		cfg := spec.Config
		var buf bytes.Buffer
		if json.Compact(&buf, cfg) == nil {
			cfg = buf.Bytes()
		}
		var d []string
		s.items[key], d = s.deriveItem(key, cfg)
		derived = append(derived, d...)
	}
}

func (s *secrets) deriveItem(key string, cfg json.RawMessage) (json.RawMessage, []string) {
	secretData := bytes.Contains(cfg, []byte(`"Secret"`))
	if s.shadow == nil && !secretData {
		return cfg, nil
	}
	v, ok := masking.Decode(cfg)
	if !ok {
		return cfg, nil
	}
	var derived []string
	changed := false
	if s.shadow != nil {
		var c masking.Comparison
		cur, rendered := s.current[key]
		switch {
		case s.shadow.FailedAt(key) || rendered && !bytes.Equal(compacted(cur), cfg):
			// Not rendered now: what the last state showed of this very
			// config, or nothing at all.
			if p, ok := s.prior[key]; ok && bytes.Equal(p[0], cfg) {
				return p[1], nil
			}
			c = masking.All(v)
		default:
			sv, _ := masking.Decode(s.shadow.Items[key].Config)
			c = masking.Compare(v, sv, s.masked, s.standins.masked)
			if s.compared == nil {
				s.compared = map[string]bool{}
			}
			s.compared[key] = true
		}
		derived = append(derived, c.Derived...)
		v, changed = c.Masked, c.Changed
	}
	if secretData {
		var found []string
		var masked bool
		v, found, masked = masking.SecretData(v)
		derived = append(derived, found...)
		changed = changed || masked
	}
	if !changed {
		return cfg, derived
	}
	out, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage(`"` + mask + `"`), derived
	}
	return out, derived
}

// maskedItem is an item's config as deploy_items shows it. A config
// compared with its shadow needs no literal masking: a leaf that reads
// the same in both renderings holds no secret.
func (s *secrets) maskedItem(key string, cfg json.RawMessage) json.RawMessage {
	if m, ok := s.items[key]; ok {
		if s.compared[key] {
			return m
		}
		cfg = m
	}
	return s.maskedJSON(cfg)
}

// maskedImports masks the data imports of the node at path as deploy
// items are masked: what differs from the node's stand-in imports, and
// literal secrets.
func (s *secrets) maskedImports(path string, data map[string]any) any {
	var v any = data
	if s.shadow != nil {
		if shadow, ok := s.shadow.Imports[path]; ok {
			v = masking.Compare(roundTrip(data), roundTrip(orEmptyMap(shadow.Data)), s.masked, s.standins.masked).Masked
		} else {
			v = masking.All(roundTrip(data)).Masked
		}
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return mask
	}
	return s.maskedJSON(raw)
}

// roundTrip gives a value the form masking.Decode gives it.
func roundTrip(v any) any {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	out, _ := masking.Decode(raw)
	return out
}

// planKnown says which nodes of a plan were rendered now.
func planKnown(p *installation.Plan) func(string) bool {
	known := map[string]bool{}
	p.Walk(func(n *installation.Plan) { known[n.Path] = n.Known && !n.Kept })
	return func(path string) bool { return known[path] }
}

// sensitiveImports are the values of sensitive_imports by name.
func sensitiveImports(f map[string]tftypes.Value) map[string]any {
	v, _ := valueToAny(f[attrSensitiveImports])
	m, _ := v.(map[string]any)
	return m
}

// compacted is JSON without insignificant space, as configs are compared.
func compacted(raw json.RawMessage) json.RawMessage {
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return raw
	}
	return buf.Bytes()
}

// useCurrent records the configs the tree renders now.
func (s *secrets) useCurrent(specs map[string]engine.ItemSpec) {
	s.current = make(map[string]json.RawMessage, len(specs))
	for k, spec := range specs {
		s.current[k] = spec.Config
	}
}

// usePrior records what the prior state showed of the items of st (the
// status it was written with).
func (s *secrets) usePrior(items tftypes.Value, st *installation.Status) {
	shown := fields(items)
	if shown == nil || st == nil {
		return
	}
	s.prior = map[string][2]json.RawMessage{}
	for key, spec := range statusSpecs(st) {
		if cfg := fields(shown[key])["config"]; cfg.IsKnown() && !cfg.IsNull() {
			s.prior[key] = [2]json.RawMessage{compacted(spec.Config), json.RawMessage(str(cfg))}
		}
	}
}

// keepMasked takes the masked configs of a deploy_items value (the
// state's), for items that are not rendered again.
func (s *secrets) keepMasked(items tftypes.Value) {
	if s.items == nil {
		s.items = map[string]json.RawMessage{}
	}
	for key, item := range fields(items) {
		if cfg := fields(item)["config"]; cfg.IsKnown() && !cfg.IsNull() {
			s.items[key] = json.RawMessage(str(cfg))
		}
	}
}
