package provider

import (
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
		out = append(out, &tfprotov6.Diagnostic{Severity: sev, Summary: p.summary, Detail: p.detail, Attribute: p.path})
	}
	return out
}
