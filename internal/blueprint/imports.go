package blueprint

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Target is an imported target as the import check needs it.
type Target struct {
	Type   string `json:"type"`
	Config any    `json:"config,omitempty"`
}

// Imports are the values given to a blueprint, by import name.
type Imports struct {
	Data        map[string]any
	Targets     map[string]Target
	TargetLists map[string][]Target
	TargetMaps  map[string]map[string]Target
}

// Reasons of an ImportProblem.
const (
	ReasonMissing      = "Missing"      // a required import is not given
	ReasonUndeclared   = "Undeclared"   // a given name is no import of the blueprint
	ReasonKindMismatch = "KindMismatch" // given as data but declared as target, etc.
	ReasonTargetType   = "TargetType"   // a target of the wrong type
	ReasonSchema       = "Schema"       // data does not match the schema
	ReasonBadSchema    = "BadSchema"    // the declared schema or default is unusable
	ReasonConditional  = "Conditional"  // a conditional import whose parent is not satisfied
)

// ImportProblem is one problem with the given imports.
type ImportProblem struct {
	// Import is the import name.
	Import string
	// Kind is the declared type of the import, or for an undeclared name the
	// type it was given as.
	Kind ImportType
	// Pointer is a JSON pointer into the given value, for schema problems
	// and for the element of a target list or map.
	Pointer string
	Reason  string
	Message string
}

func (p ImportProblem) Error() string {
	loc := p.Import
	if p.Pointer != "" {
		loc += p.Pointer
	}
	return fmt.Sprintf("import %s (%s): %s", loc, p.Kind, p.Message)
}

// ImportProblems joins problems into one error, nil if there are none.
func ImportProblems(ps []ImportProblem) error {
	errs := make([]error, 0, len(ps))
	for _, p := range ps {
		errs = append(errs, p)
	}
	return errors.Join(errs...)
}

// ValidateImports checks the given imports against the blueprint's import
// declarations, as Landscaper does before it runs a blueprint: required
// imports are given, every given name is declared with the same type,
// targets have the declared targetType, data matches its schema. Optional
// data imports that are not given take their default. Conditional imports
// count only when their parent import is satisfied.
//
// It returns the data imports as templates see them (given values and
// applied defaults) and the problems found; sc resolves schema references
// and may be nil for a blueprint without references.
func (b *Blueprint) ValidateImports(sc *SchemaContext, in Imports) (map[string]any, []ImportProblem) {
	if sc == nil {
		sc = b.NewSchemaContext(nil, nil)
	}
	v := &importCheck{b: b, sc: sc, in: in, data: map[string]any{}, active: map[string]bool{}}
	v.check(b.Definition.Imports)
	v.checkGiven()
	sort.SliceStable(v.problems, func(i, j int) bool { return v.problems[i].Import < v.problems[j].Import })
	return v.data, v.problems
}

type importCheck struct {
	b        *Blueprint
	sc       *SchemaContext
	in       Imports
	data     map[string]any
	active   map[string]bool // declared imports whose parents are satisfied
	problems []ImportProblem
}

func (v *importCheck) add(name string, kind ImportType, pointer, reason, format string, args ...any) {
	v.problems = append(v.problems, ImportProblem{Import: name, Kind: kind, Pointer: pointer, Reason: reason, Message: fmt.Sprintf(format, args...)})
}

func (v *importCheck) check(defs []ImportDefinition) {
	for i := range defs {
		def := &defs[i]
		v.active[def.Name] = true
		if v.checkOne(def) && len(def.ConditionalImports) > 0 {
			v.check(def.ConditionalImports)
		}
	}
}

// checkOne checks one import and reports whether it is satisfied (given or
// defaulted), which is what enables its conditional imports.
func (v *importCheck) checkOne(def *ImportDefinition) bool {
	missing := func() bool {
		if def.IsRequired() && !v.givenAnyKind(def.Name) { // else checkGiven reports the kind
			v.add(def.Name, def.Type, "", ReasonMissing, "required import is not given")
		}
		return false
	}
	switch def.Type {
	case ImportTypeData:
		val, ok := v.in.Data[def.Name]
		if !ok {
			if def.IsRequired() || def.Default == nil || len(def.Default.Value) == 0 || string(def.Default.Value) == "null" {
				return missing()
			}
			if err := json.Unmarshal(def.Default.Value, &val); err != nil {
				v.add(def.Name, def.Type, "", ReasonBadSchema, "default value cannot be read: %v", err)
				return false
			}
		}
		v.data[def.Name] = val
		if err := v.sc.ValidateValue(def.Schema, val); err != nil {
			var ve *ValidationError
			if errors.As(err, &ve) {
				for _, viol := range ve.Violations {
					v.add(def.Name, def.Type, viol.Pointer, ReasonSchema, "%s", viol.Message)
				}
			} else {
				v.add(def.Name, def.Type, "", ReasonBadSchema, "%v", err)
			}
		}
		return true
	case ImportTypeTarget:
		t, ok := v.in.Targets[def.Name]
		if !ok {
			return missing()
		}
		v.checkTargetType(def, "", t)
		return true
	case ImportTypeTargetList:
		list, ok := v.in.TargetLists[def.Name]
		if !ok {
			return missing()
		}
		for i, t := range list {
			v.checkTargetType(def, fmt.Sprintf("/%d", i), t)
		}
		return true
	case ImportTypeTargetMap:
		m, ok := v.in.TargetMaps[def.Name]
		if !ok {
			return missing()
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			v.checkTargetType(def, jsonPointer([]string{k}), m[k])
		}
		return true
	}
	return false
}

func (v *importCheck) givenAnyKind(name string) bool {
	_, d := v.in.Data[name]
	_, t := v.in.Targets[name]
	_, l := v.in.TargetLists[name]
	_, m := v.in.TargetMaps[name]
	return d || t || l || m
}

func (v *importCheck) checkTargetType(def *ImportDefinition, pointer string, t Target) {
	if t.Type != def.TargetType {
		v.add(def.Name, def.Type, pointer, ReasonTargetType, "target type is %q, expected %q", t.Type, def.TargetType)
	}
}

// checkGiven reports given names that are not (active) imports of the
// declared type.
func (v *importCheck) checkGiven() {
	declared := map[string]*ImportDefinition{}
	var walk func(defs []ImportDefinition, parent string)
	parents := map[string]string{}
	walk = func(defs []ImportDefinition, parent string) {
		for i := range defs {
			declared[defs[i].Name] = &defs[i]
			if parent != "" {
				parents[defs[i].Name] = parent
			}
			walk(defs[i].ConditionalImports, defs[i].Name)
		}
	}
	walk(v.b.Definition.Imports, "")
	names := make([]string, 0, len(declared))
	for n := range declared {
		names = append(names, n)
	}
	slices.Sort(names)

	given := func(name string, kind ImportType) {
		def, ok := declared[name]
		switch {
		case !ok:
			v.add(name, kind, "", ReasonUndeclared, "the blueprint declares no import %q (declared: %s)", name, strings.Join(names, ", "))
		case def.Type != kind:
			v.add(name, def.Type, "", ReasonKindMismatch, "given as %s, but the blueprint declares it as %s", kind, def.Type)
		case !v.active[name]:
			v.add(name, def.Type, "", ReasonConditional, "conditional import of %q, which is not satisfied; it would be ignored", parents[name])
		}
	}
	for _, n := range sortedKeys(v.in.Data) {
		given(n, ImportTypeData)
	}
	for _, n := range sortedKeys(v.in.Targets) {
		given(n, ImportTypeTarget)
	}
	for _, n := range sortedKeys(v.in.TargetLists) {
		given(n, ImportTypeTargetList)
	}
	for _, n := range sortedKeys(v.in.TargetMaps) {
		given(n, ImportTypeTargetMap)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
