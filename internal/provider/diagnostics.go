package provider

import (
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// problem is a diagnostic before it takes the protocol's form.
type problem struct {
	warning         bool
	summary, detail string
	path            *tftypes.AttributePath
}

type problems []problem

func (ps *problems) add(path *tftypes.AttributePath, summary, detail string) {
	*ps = append(*ps, problem{summary: summary, detail: detail, path: path})
}

func (ps *problems) warn(path *tftypes.AttributePath, summary, detail string) {
	*ps = append(*ps, problem{warning: true, summary: summary, detail: detail, path: path})
}

// masked passes every summary and detail through mask: a message may
// quote a secret.
func (ps problems) masked(mask func(string) string) problems {
	out := make(problems, len(ps))
	for i, p := range ps {
		p.summary, p.detail = mask(p.summary), mask(p.detail)
		out[i] = p
	}
	return out
}

// errors reports whether any problem is an error.
func (ps problems) errors() bool {
	for _, p := range ps {
		if !p.warning {
			return true
		}
	}
	return false
}

func (ps problems) protocol() []*tfprotov6.Diagnostic {
	var out []*tfprotov6.Diagnostic
	for _, p := range ps {
		sev := tfprotov6.DiagnosticSeverityError
		if p.warning {
			sev = tfprotov6.DiagnosticSeverityWarning
		}
		out = append(out, &tfprotov6.Diagnostic{Severity: sev, Summary: p.summary, Detail: named(p.path, p.detail), Attribute: shown(p.path)})
	}
	return out
}

// shown is the part of path Terraform can point at in the configuration:
// the attribute and, within it, one map key or list index, which
// Terraform highlights from the key to the end of its value. Terraform
// (1.11) follows longer paths only through nested blocks, which this
// provider's schemas have none of: it then highlights the resource's
// first line, or worse, a top-level attribute named like the path's last
// step (an undefined provider target's targets["cluster"].name pointed at
// the resource's name). What the shorter path leaves out, the detail
// says (named).
func shown(path *tftypes.AttributePath) *tftypes.AttributePath {
	if path == nil {
		return nil
	}
	steps := path.Steps()
	if len(steps) < 2 {
		return path
	}
	if _, ok := steps[0].(tftypes.AttributeName); !ok {
		return path
	}
	switch steps[1].(type) {
	case tftypes.ElementKeyString, tftypes.ElementKeyInt:
		return tftypes.NewAttributePathWithSteps(steps[:2])
	}
	return tftypes.NewAttributePathWithSteps(steps[:1])
}

// named prefixes a detail with the path it is about when the path leads
// through a map key or list index the detail does not name: Terraform
// points at such an element only when the configuration spells it out,
// not when it comes from a variable or a function, and then the message
// alone must say which target, import or item is meant. The same goes
// for an attribute inside a nested attribute (rollout.canary): Terraform
// points at the resource then.
func named(path *tftypes.AttributePath, detail string) string {
	if path == nil {
		return detail
	}
	keyed, last := false, ""
	for i, st := range path.Steps() {
		switch s := st.(type) {
		case tftypes.AttributeName:
			if i > 0 && !keyed {
				keyed, last = true, pathText(tftypes.NewAttributePathWithSteps(path.Steps()[:i+1]))
			}
		case tftypes.ElementKeyString:
			keyed, last = true, strconv.Quote(string(s))
		case tftypes.ElementKeyInt:
			keyed, last = true, "["+strconv.FormatInt(int64(s), 10)+"]"
		}
	}
	if !keyed || strings.Contains(detail, last) {
		return detail
	}
	return pathText(path) + ": " + detail
}

// pathText writes an attribute path as Terraform shows it:
// deploy_items["a/b"].config.
func pathText(path *tftypes.AttributePath) string {
	var b strings.Builder
	for i, st := range path.Steps() {
		switch s := st.(type) {
		case tftypes.AttributeName:
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(string(s))
		case tftypes.ElementKeyString:
			b.WriteString("[" + strconv.Quote(string(s)) + "]")
		case tftypes.ElementKeyInt:
			b.WriteString("[" + strconv.FormatInt(int64(s), 10) + "]")
		}
	}
	return b.String()
}
