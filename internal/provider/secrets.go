package provider

import (
	"context"
	"encoding/json"
	"errors"
	"maps"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/atrest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/installation"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/masking"
)

// The masking policy is internal/masking's (masking.Tree): this is the
// glue that tells it what the configuration holds as secret, and hands
// what it shows to Terraform.

// mask replaces a secret wherever one would be shown.
const mask = masking.Mask

// secretsOf starts the masking of a tree with the values a plan must not
// show: every target's config and the sensitive imports, write-only or
// not.
func secretsOf(f map[string]tftypes.Value, imp installation.Imports) *masking.Tree {
	sec := masking.NewTree()
	sec.AddImports(imp)
	for _, a := range []string{attrSensitiveImports, attrSensitiveImportsWO} {
		if v, known := valueToAny(f[a]); known && v != nil {
			sec.AddValue(v)
		}
	}
	return sec
}

// sensitiveImports are the values of sensitive_imports and
// sensitive_imports_wo by name.
func sensitiveImports(f map[string]tftypes.Value) map[string]any {
	v, _ := valueToAny(f[attrSensitiveImports])
	m, _ := v.(map[string]any)
	if wo, _ := valueToAny(f[attrSensitiveImportsWO]); wo != nil {
		wm, _ := wo.(map[string]any)
		m = maps.Clone(m)
		if m == nil {
			m = map[string]any{}
		}
		maps.Copy(m, wm)
	}
	return m
}

// planKnown says which nodes of a plan were rendered now.
func planKnown(p *installation.Plan) func(string) bool {
	known := map[string]bool{}
	p.Walk(func(n *installation.Plan) { known[n.Path] = n.Known && !n.Kept })
	return func(path string) bool { return known[path] }
}

// shownItems reads a deploy_items value (the prior state's) as the
// masking policy needs it: how each item was shown, by the key it was
// shown under.
func shownItems(items tftypes.Value) map[string]masking.Item {
	shown := fields(items)
	if shown == nil {
		return nil
	}
	out := make(map[string]masking.Item, len(shown))
	for key, item := range shown {
		it := fields(item)
		if cfg := it["config"]; cfg.IsKnown() && !cfg.IsNull() {
			out[key] = masking.Item{Type: str(it["type"]), TargetMasked: str(it["target"]) == mask, Target: str(it["target"]),
				Config: json.RawMessage(str(cfg))}
		}
	}
	return out
}

// renderProblems are the diagnostics of a tree that failed to render,
// masked: a template's or a schema's message may quote a secret, or what
// a template made of one, so the tree's shadows are rendered to tell
// which part of the message a secret made. When a shadow renders without
// the error, the error itself depends on a secret, and nothing of its
// message is shown.
func renderProblems(ctx context.Context, sec *masking.Tree, in masking.ShadowInput, err error) problems {
	ps := loadProblems(err)
	in.Known = func(string) bool { return true }
	sec.Shadow(ctx, in, nil)
	path, msg := "", err.Error()
	var pe *installation.PathError
	if errors.As(err, &pe) {
		path, msg = pe.Path, pe.Err.Error()
		sec.AddPath(path)
	}
	var refused *atrest.Refused
	if _, ok := sec.Error(path, msg); !ok && !errors.As(err, &refused) {
		for i := range ps {
			ps[i].detail = "The message of this error is not shown: whether the blueprint fails this way depends on the value " +
				"of a secret (a sensitive import or a target's config)."
		}
	}
	return ps.masked(sec.Text)
}
