package kube

import (
	"encoding/json"
	"fmt"
	"slices"
)

// Validation functions return problems as "path: message" lines, in the
// order found. They check what Landscaper's validation checks, and also
// that manifests decode as objects, so mistakes show at plan time.

// ValidateManifests checks manifests (path is their field, such as
// "manifests").
func ValidateManifests(path string, ms []Manifest) []string {
	var out []string
	for i, m := range ms {
		p := fmt.Sprintf("%s[%d]", path, i)
		if !m.Policy.Valid() {
			out = append(out, fmt.Sprintf("%s.policy: unsupported value %q: supported values: manage, fallback, keep, ignore, immutable", p, m.Policy))
		}
		for _, f := range []struct {
			name string
			raw  json.RawMessage
		}{{"patchAfterDeployment", m.PatchAfterDeployment}, {"patchBeforeDelete", m.PatchBeforeDelete}} {
			if len(f.raw) == 0 || string(f.raw) == "null" {
				continue
			}
			var obj map[string]any
			if json.Unmarshal(f.raw, &obj) != nil {
				out = append(out, fmt.Sprintf("%s.%s: must be an object", p, f.name))
			}
		}
		expanded, err := ExpandManifests([]Manifest{m})
		if err != nil || len(m.Manifest) == 0 {
			out = append(out, fmt.Sprintf("%s.manifest: manifest must be defined as an object", p))
			continue
		}
		for j, e := range expanded {
			if _, err := DecodeObject(e.Manifest); err != nil {
				ep := p + ".manifest"
				if len(expanded) > 1 || string(e.Manifest) != string(m.Manifest) {
					ep = fmt.Sprintf("%s.manifest.items[%d]", p, j)
				}
				out = append(out, fmt.Sprintf("%s: %v", ep, err))
			}
		}
	}
	return out
}

// ValidateUpdateStrategy checks an update strategy.
func ValidateUpdateStrategy(path string, s UpdateStrategy) []string {
	if s.Valid() {
		return nil
	}
	return []string{fmt.Sprintf("%s: unsupported value %q: supported values: update, patch, merge, mergeOverwrite", path, s)}
}

var operators = []Operator{OpDoesNotExist, OpExists, OpEquals, OpDoubleEquals, OpNotEquals, OpIn, OpNotIn}

// ValidateReadinessChecks checks a readinessChecks block.
func ValidateReadinessChecks(path string, c ReadinessCheckConfiguration) []string {
	var out []string
	for i, cc := range c.CustomReadinessChecks {
		p := fmt.Sprintf("%s.custom[%d]", path, i)
		if cc.Name == "" {
			out = append(out, p+".name: must not be empty")
		}
		if cc.TargetName != nil {
			out = append(out, p+".targetName: other targets are not supported; the item's target is used")
		}
		if len(cc.Resource) == 0 && cc.LabelSelector == nil {
			out = append(out, p+": must have either a resourceSelector or a labelSelector")
		}
		for j, r := range cc.Resource {
			out = append(out, validateRef(fmt.Sprintf("%s.resourceSelector[%d]", p, j), r)...)
		}
		if ls := cc.LabelSelector; ls != nil {
			if ls.APIVersion == "" || ls.Kind == "" {
				out = append(out, p+".labelSelector: apiVersion and kind must not be empty")
			}
			if len(ls.Labels) == 0 {
				out = append(out, p+".labelSelector.matchLabels: must have at least one label to select on")
			}
		}
		if len(cc.Requirements) == 0 {
			out = append(out, p+".requirements: must have at least one requirement")
		}
		for j, r := range cc.Requirements {
			rp := fmt.Sprintf("%s.requirements[%d]", p, j)
			if err := ParseJSONPath(r.JSONPath); err != nil {
				out = append(out, fmt.Sprintf("%s.jsonPath: is not a valid JSON path: %v", rp, err))
			}
			if !slices.Contains(operators, r.Operator) {
				out = append(out, fmt.Sprintf("%s.operator: %q is not a valid operator (!, exists, =, ==, !=, in, notin)", rp, r.Operator))
				continue
			}
			if r.Operator != OpDoesNotExist && r.Operator != OpExists && len(r.Values) == 0 {
				out = append(out, rp+".values: must have at least one value to compare to")
			}
			if r.Operator != OpIn && r.Operator != OpNotIn && len(r.Values) > 1 {
				out = append(out, rp+".values: must have exactly one value to compare to")
			}
			if _, err := requirementValues(r.Values); err != nil {
				out = append(out, fmt.Sprintf("%s.%v", rp, err))
			}
		}
	}
	return out
}

func validateRef(p string, r TypedObjectReference) []string {
	var out []string
	if r.APIVersion == "" {
		out = append(out, p+".apiVersion: must not be empty")
	}
	if r.Kind == "" {
		out = append(out, p+".kind: must not be empty")
	}
	if r.Name == "" {
		out = append(out, p+".name: must not be empty")
	}
	return out
}

// ValidateExports checks an exports block.
func ValidateExports(path string, e *Exports) []string {
	if e == nil {
		return nil
	}
	var out []string
	for i, x := range e.Exports {
		p := fmt.Sprintf("%s.exports[%d]", path, i)
		if x.Key == "" {
			out = append(out, p+".key: must not be empty")
		} else if _, err := Construct(x.Key, nil); err != nil {
			out = append(out, fmt.Sprintf("%s.key: %v", p, err))
		}
		if x.JSONPath == "" {
			out = append(out, p+".jsonPath: must not be empty")
		} else if err := ParseJSONPath(x.JSONPath); err != nil {
			out = append(out, fmt.Sprintf("%s.jsonPath: is not a valid JSON path: %v", p, err))
		}
		if x.FromResource != nil {
			out = append(out, validateRef(p+".fromResource", *x.FromResource)...)
		}
		if f := x.FromObjectReference; f != nil {
			if f.APIVersion == "" || f.Kind == "" {
				out = append(out, p+".fromObjectRef: apiVersion and kind must not be empty")
			}
			if err := ParseJSONPath(f.JSONPath); err != nil {
				out = append(out, fmt.Sprintf("%s.fromObjectRef.jsonPath: %v", p, err))
			}
		}
		if x.TargetName != nil {
			out = append(out, p+".targetName: other targets are not supported; the item's target is used")
		}
	}
	return out
}

// ValidateDeletionGroups checks deletionGroups or deletionGroupsDuringUpdate.
func ValidateDeletionGroups(path string, groups []DeletionGroupDefinition) []string {
	var out []string
	for i, g := range groups {
		p := fmt.Sprintf("%s[%d]", path, i)
		switch {
		case g.PredefinedResourceGroup != nil && g.CustomResourceGroup != nil:
			out = append(out, p+": predefinedResourceGroup and customResourceGroup must not both be set")
		case g.PredefinedResourceGroup == nil && g.CustomResourceGroup == nil:
			out = append(out, p+": either predefinedResourceGroup or customResourceGroup must be set")
		case g.PredefinedResourceGroup != nil:
			switch g.PredefinedResourceGroup.Type {
			case GroupNamespacedResources, GroupClusterScopedResources, GroupCRDs, GroupEmpty:
			case "":
				out = append(out, p+".predefinedResourceGroup.type: must not be empty")
			default:
				out = append(out, fmt.Sprintf("%s.predefinedResourceGroup.type: unsupported value %q: supported values: namespaced-resources, cluster-scoped-resources, crds, empty", p, g.PredefinedResourceGroup.Type))
			}
		default:
			c := g.CustomResourceGroup
			if len(c.Resources) == 0 {
				out = append(out, p+".customResourceGroup.resources: must not be empty")
			}
			if c.TargetName != nil {
				out = append(out, p+".customResourceGroup.targetName: other targets are not supported")
			}
			for j, r := range c.Resources {
				if r.APIVersion == "" || r.Kind == "" {
					out = append(out, fmt.Sprintf("%s.customResourceGroup.resources[%d]: apiVersion and kind must not be empty", p, j))
				}
			}
		}
	}
	return out
}
