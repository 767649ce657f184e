package installation

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/dag"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
)

// scope is what sub-installations can import from: the parent's imports
// and their siblings' exports, by data object and target name.
type scope struct {
	data        map[string]any
	targets     map[string]*deployer.Target
	targetLists map[string][]*deployer.Target
	targetMaps  map[string]map[string]*deployer.Target
	// sealed marks the data objects with sealed values (Imports.Sealed).
	sealed map[string]string
}

// newScope is the context of a node with imports imp and the data imports
// that took their default.
func newScope(imp Imports, defaults map[string]any) *scope {
	data := maps.Clone(orEmpty(imp.Data))
	maps.Copy(data, defaults)
	return &scope{
		data:        data,
		targets:     maps.Clone(orEmpty(imp.Targets)),
		targetLists: imp.TargetLists,
		targetMaps:  imp.TargetMaps,
		sealed:      maps.Clone(orEmpty(imp.Sealed)),
	}
}

func orEmpty[V any](m map[string]V) map[string]V {
	if m == nil {
		return map[string]V{}
	}
	return m
}

// add records what a sub exported into the scope.
func (sc *scope) add(sub Sub, ex Exports) {
	for name, ref := range sub.DataExports {
		if v, ok := ex.Data[name]; ok {
			sc.data[ref] = v
			if standin, sealed := ex.Sealed[name]; sealed {
				sc.sealed[ref] = standin
			} else {
				delete(sc.sealed, ref)
			}
		}
	}
	for name, ref := range sub.TargetExports {
		if t, ok := ex.Targets[name]; ok {
			c := *t
			c.Name = ref
			sc.targets[ref] = &c
		}
	}
}

// target looks a target name up: a target of the scope, or an element of
// a target list or map import, "name[index]" or "name[key]".
func (sc *scope) target(ref string) (*deployer.Target, bool) {
	if t, ok := sc.targets[ref]; ok {
		return t, true
	}
	base, sel, ok := Indexed(ref)
	if !ok {
		return nil, false
	}
	if m, ok := sc.targetMaps[base]; ok {
		t, ok := m[sel]
		return t, ok
	}
	if l, ok := sc.targetLists[base]; ok {
		if i, err := strconv.Atoi(sel); err == nil && i >= 0 && i < len(l) {
			return l[i], true
		}
	}
	return nil, false
}

// Indexed splits a target name of the form "name[selector]", Landscaper's
// reference to an element of a target list or map import.
func Indexed(ref string) (base, selector string, ok bool) {
	open := strings.IndexByte(ref, '[')
	if open <= 0 || !strings.HasSuffix(ref, "]") || open == len(ref)-2 {
		return "", "", false
	}
	return ref[:open], ref[open+1 : len(ref)-1], true
}

// importsOf builds a sub's imports from the scope. A reference to nothing
// is left out: the sub's blueprint says whether that import was required.
func (sc *scope) importsOf(sub Sub) (Imports, error) {
	imp := Imports{Data: map[string]any{}, Targets: map[string]*deployer.Target{}}
	for name, ref := range sub.DataImports {
		if v, ok := sc.data[ref]; ok {
			imp.Data[name] = v
			if standin, sealed := sc.sealed[ref]; sealed {
				if imp.Sealed == nil {
					imp.Sealed = map[string]string{}
				}
				imp.Sealed[name] = standin
			}
		}
	}
	for name, ref := range sub.TargetImports {
		if t, ok := sc.target(ref); ok {
			imp.Targets[name] = t
		}
	}
	for name, refs := range sub.TargetListImports {
		list := make([]*deployer.Target, 0, len(refs))
		for _, ref := range refs {
			if t, ok := sc.target(ref); ok {
				list = append(list, t)
			}
		}
		if imp.TargetLists == nil {
			imp.TargetLists = map[string][]*deployer.Target{}
		}
		imp.TargetLists[name] = list
	}
	for name, ref := range sub.TargetListRefs {
		if l, ok := sc.targetLists[ref]; ok {
			if imp.TargetLists == nil {
				imp.TargetLists = map[string][]*deployer.Target{}
			}
			imp.TargetLists[name] = l
		}
	}
	for name, ref := range sub.TargetMapRefs {
		if m, ok := sc.targetMaps[ref]; ok {
			if imp.TargetMaps == nil {
				imp.TargetMaps = map[string]map[string]*deployer.Target{}
			}
			imp.TargetMaps[name] = m
		}
	}
	for name, refs := range sub.TargetMapImports {
		m := make(map[string]*deployer.Target, len(refs))
		for key, ref := range refs {
			if t, ok := sc.target(ref); ok {
				m[key] = t
			}
		}
		if imp.TargetMaps == nil {
			imp.TargetMaps = map[string]map[string]*deployer.Target{}
		}
		imp.TargetMaps[name] = m
	}
	if sub.MapImports != nil {
		mapped, err := sub.MapImports(imp)
		if err != nil {
			return imp, fmt.Errorf("importDataMappings of sub-installation %q: %w", sub.Name, err)
		}
		maps.Copy(imp.Data, mapped)
		// A mapping may read any import: with a sealed one among them,
		// or mappings rendered from one, every mapped value counts as
		// derived from it.
		sealed := maps.Clone(imp.Sealed)
		if sub.MappingsSealed != "" {
			if sealed == nil {
				sealed = map[string]string{}
			}
			sealed["\x00mappings"] = sub.MappingsSealed
		}
		if standin := joinedStandins(sealed); standin != "" {
			if imp.Sealed == nil {
				imp.Sealed = map[string]string{}
			}
			for name := range mapped {
				imp.Sealed[name] = standin
			}
		} else {
			for name := range mapped {
				delete(imp.Sealed, name)
			}
		}
	}
	return imp, nil
}

// joinedStandins is the stand-in of a value derived from every sealed
// value of m: their distinct stand-ins, sorted; "" when m has none.
func joinedStandins(m map[string]string) string {
	vs := slices.Sorted(maps.Values(m))
	return strings.Join(slices.Compact(vs), "\x00")
}

// siblingOrder orders sub-installations by data flow, as Landscaper does:
// a sub that imports a data object or target another sub exports waits
// for that sub. It returns, per sub, the siblings it waits for. Two subs
// exporting the same name, and cycles, are errors that name the siblings.
func siblingOrder(subs []Sub) (map[string][]string, error) {
	dataBy, targetBy := map[string]string{}, map[string]string{}
	names := map[string]bool{}
	for _, s := range subs {
		if names[s.Name] {
			return nil, fmt.Errorf("two sub-installations are named %q", s.Name)
		}
		names[s.Name] = true
		for _, ref := range slices.Sorted(maps.Values(s.DataExports)) {
			if other, dup := dataBy[ref]; dup {
				return nil, fmt.Errorf("sub-installations %q and %q both export the data object %q", other, s.Name, ref)
			}
			dataBy[ref] = s.Name
		}
		for _, ref := range slices.Sorted(maps.Values(s.TargetExports)) {
			if other, dup := targetBy[ref]; dup {
				return nil, fmt.Errorf("sub-installations %q and %q both export the target %q", other, s.Name, ref)
			}
			targetBy[ref] = s.Name
		}
	}
	deps := make(map[string][]string, len(subs))
	for _, s := range subs {
		var d []string
		for _, ref := range s.DataImports {
			if e, ok := dataBy[ref]; ok {
				d = append(d, e)
			}
		}
		for _, ref := range s.TargetImports {
			if e, ok := targetBy[ref]; ok {
				d = append(d, e)
			}
		}
		for _, refs := range s.TargetListImports {
			for _, ref := range refs {
				if e, ok := targetBy[ref]; ok {
					d = append(d, e)
				}
			}
		}
		for _, refs := range s.TargetMapImports {
			for _, ref := range refs {
				if e, ok := targetBy[ref]; ok {
					d = append(d, e)
				}
			}
		}
		slices.Sort(d)
		d = slices.Compact(d)
		if slices.Contains(d, s.Name) {
			return nil, fmt.Errorf("sub-installation %q imports what it exports itself", s.Name)
		}
		deps[s.Name] = d
	}
	if cycle := dag.FindCycle(slices.Collect(maps.Keys(deps)), func(n string) []string { return deps[n] }); cycle != nil {
		return nil, fmt.Errorf("the data flow between sub-installations has a cycle: %s", strings.Join(cycle, " -> "))
	}
	return deps, nil
}
