package render

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/blueprint"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/installation"
)

// TemplateError is a sub-installation template whose target imports name
// something its parent cannot give it. It is the blueprint's fault, never
// the imports': Landscaper rejects such a blueprint whatever it imports.
type TemplateError struct {
	// Sub names the template; Field is where in it the problem is, in
	// Landscaper's notation ("imports.targets[0][clusters].targetMap[red]").
	Sub, Field, Message string
}

func (e *TemplateError) Error() string {
	return fmt.Sprintf("installation template %q, %s: %s", e.Sub, e.Field, e.Message)
}

// checkTargetRefs checks the target imports of sub-installation templates
// as Landscaper validates a blueprint's subinstallations: a target name is
// a target import of the blueprint (given or not) or the export of a
// sibling; "x[i]" or "x[key]" is an element of a target list or target map
// import x; targetListRef and targetMapRef name a target list or map
// import. A sibling exporting a target the blueprint imports is an error
// too, since the two would collide.
func checkTargetRefs(defs []blueprint.ImportDefinition, templates []*blueprint.InstallationTemplate) error {
	declared := map[string]blueprint.ImportType{}
	var walk func([]blueprint.ImportDefinition)
	walk = func(ds []blueprint.ImportDefinition) {
		for _, d := range ds {
			declared[d.Name] = d.Type
			walk(d.ConditionalImports)
		}
	}
	walk(defs)
	exported := map[string]bool{}
	for _, t := range templates {
		for i, te := range t.Exports.Targets {
			if declared[te.Target] != "" {
				return &TemplateError{Sub: t.Name, Field: fmt.Sprintf("exports.targets[%d][%s]", i, te.Name),
					Message: fmt.Sprintf("exports the target %q, which the blueprint imports", te.Target)}
			}
			exported[te.Target] = true
		}
	}
	names := func(kind blueprint.ImportType) string {
		var out []string
		for n, k := range declared {
			if k == kind {
				out = append(out, n)
			}
		}
		slices.Sort(out)
		if len(out) == 0 {
			return "none"
		}
		return strings.Join(out, ", ")
	}
	target := func(ref string) string {
		if declared[ref] == blueprint.ImportTypeTarget || exported[ref] {
			return ""
		}
		if base, _, ok := installation.Indexed(ref); ok {
			if k := declared[base]; k == blueprint.ImportTypeTargetList || k == blueprint.ImportTypeTargetMap {
				return ""
			}
			return fmt.Sprintf("import not satisfied: %q is no target list or target map import of the blueprint "+
				"(target list imports: %s; target map imports: %s)", base, names(blueprint.ImportTypeTargetList), names(blueprint.ImportTypeTargetMap))
		}
		return fmt.Sprintf("import not satisfied: the target %q is neither a target import of the blueprint nor "+
			"exported by a sibling (target imports: %s)", ref, names(blueprint.ImportTypeTarget))
	}
	for _, t := range templates {
		for i, ti := range t.Imports.Targets {
			at := fmt.Sprintf("imports.targets[%d][%s]", i, ti.Name)
			fail := func(field, msg string) error { return &TemplateError{Sub: t.Name, Field: at + field, Message: msg} }
			switch {
			case ti.Target != "":
				if msg := target(ti.Target); msg != "" {
					return fail("", msg)
				}
			case ti.Targets != nil:
				for k, ref := range ti.Targets {
					if msg := target(ref); msg != "" {
						return fail(fmt.Sprintf(".targets[%d]", k), msg)
					}
				}
			case ti.TargetMap != nil:
				for _, key := range slices.Sorted(maps.Keys(ti.TargetMap)) {
					if msg := target(ti.TargetMap[key]); msg != "" {
						return fail(fmt.Sprintf(".targetMap[%s]", key), msg)
					}
				}
			case ti.TargetListReference != "":
				if declared[ti.TargetListReference] != blueprint.ImportTypeTargetList {
					return fail(".targetListRef", fmt.Sprintf("import not satisfied: %q is no target list import of the blueprint "+
						"(target list imports: %s)", ti.TargetListReference, names(blueprint.ImportTypeTargetList)))
				}
			case ti.TargetMapReference != "":
				if declared[ti.TargetMapReference] != blueprint.ImportTypeTargetMap {
					return fail(".targetMapRef", fmt.Sprintf("import not satisfied: %q is no target map import of the blueprint "+
						"(target map imports: %s)", ti.TargetMapReference, names(blueprint.ImportTypeTargetMap)))
				}
			default:
				return fail("", "names no target: set one of target, targets, targetListRef, targetMap, targetMapRef")
			}
		}
	}
	return nil
}
