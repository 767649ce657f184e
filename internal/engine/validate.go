package engine

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/dag"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
)

// Field names the part of an item spec a Problem is about; callers map it
// to wherever they keep that part.
type Field string

// Fields of an item spec.
const (
	FieldType      Field = "type"
	FieldConfig    Field = "config"
	FieldDependsOn Field = "dependsOn"
	FieldTimeout   Field = "timeout"
	FieldTarget    Field = "target"
)

// Problem is a plan-time error about one field of one deploy item, or
// only a warning (a config field the deployer does not know: Landscaper
// ignores those, so real blueprints carry them).
type Problem struct {
	Item    string
	Field   Field
	Message string
	Warning bool
}

func (p Problem) Error() string {
	return fmt.Sprintf("deploy item %q, %s: %s", p.Item, p.Field, p.Message)
}

// Validate checks an execution before anything runs: every type is known,
// every config is accepted by its deployer, every dependency exists, and
// the dependency graph has no cycle. Problems are sorted by item name so
// the same config always yields the same diagnostics.
func Validate(ex Execution, reg *deployer.Registry) []Problem {
	var out []Problem
	names := slices.Sorted(maps.Keys(ex.Items))
	for _, name := range names {
		spec := ex.Items[name]
		d, ok := reg.Get(spec.Type)
		if !ok {
			out = append(out, Problem{Item: name, Field: FieldType, Message: fmt.Sprintf("unknown deploy item type %q; known types: %s",
				spec.Type, strings.Join(reg.Types(), ", "))})
		} else if spec.Config != nil {
			if err := d.Validate(spec.Config); err != nil {
				out = append(out, Problem{Item: name, Field: FieldConfig, Message: errorMessage(err), Warning: deployer.IsWarning(err)})
			}
		}
		if p := targetProblem(d, spec.Target); p != "" {
			out = append(out, Problem{Item: name, Field: FieldTarget, Message: p})
		}
		seen := map[string]bool{}
		for _, dep := range spec.DependsOn {
			switch {
			case dep == name:
				out = append(out, Problem{Item: name, Field: FieldDependsOn, Message: "a deploy item cannot depend on itself"})
			case seen[dep]:
				out = append(out, Problem{Item: name, Field: FieldDependsOn, Message: fmt.Sprintf("%q is listed twice", dep)})
			default:
				if _, ok := ex.Items[dep]; !ok {
					out = append(out, Problem{Item: name, Field: FieldDependsOn, Message: fmt.Sprintf("%q is not a deploy item of this execution; known items: %s",
						dep, strings.Join(names, ", "))})
				}
			}
			seen[dep] = true
		}
	}
	if cycle := FindCycle(ex.Items); cycle != nil {
		out = append(out, Problem{Item: cycle[0], Field: FieldDependsOn, Message: "dependency cycle: " + strings.Join(cycle, " -> ")})
	}
	return out
}

// targetProblem checks an item's target against what its deployer acts
// on. A target whose type is not known yet (Type "") passes.
func targetProblem(d deployer.Deployer, t *deployer.Target) string {
	tu, ok := d.(deployer.TargetUser)
	if !ok {
		return ""
	}
	types := tu.TargetTypes()
	switch {
	case t == nil:
		return fmt.Sprintf("this deployer acts on a target of type %s; set one", strings.Join(types, " or "))
	case t.Type != "" && !slices.Contains(types, t.Type):
		return fmt.Sprintf("target %q has type %q; this deployer needs %s", t.Name, t.Type, strings.Join(types, " or "))
	}
	return ""
}

func errorMessage(err error) string {
	var de *core.Error
	if errors.As(err, &de) {
		return de.Message
	}
	return err.Error()
}

// FindCycle returns one dependency cycle among items as a closed path
// (first name repeated at the end), or nil.
func FindCycle(items map[string]ItemSpec) []string {
	return dag.FindCycle(slices.Collect(maps.Keys(items)), func(n string) []string { return items[n].DependsOn })
}
