package provider

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// targetOptionalAttributes are what an element of target_lists and
// target_maps may leave out: the metadata templates read, and type and
// config, which a reference to a provider target has not.
var targetOptionalAttributes = map[string]struct{}{"name": {}, "labels": {}, "annotations": {}, "type": {}, "config": {}}

// optionalAttrsObjectType is an object type whose metadata attributes may
// be left out. The elements of target_lists and target_maps are plain
// object types (a map of lists cannot be nested attributes), and the
// framework's ObjectType cannot mark attributes optional; without that,
// every existing configuration would have to spell out name, labels and
// annotations.
type optionalAttrsObjectType struct {
	basetypes.ObjectType
}

func (t optionalAttrsObjectType) TerraformType(ctx context.Context) tftypes.Type {
	o, _ := t.ObjectType.TerraformType(ctx).(tftypes.Object)
	o.OptionalAttributes = maps.Clone(targetOptionalAttributes)
	return o
}

func (t optionalAttrsObjectType) Equal(o attr.Type) bool {
	other, ok := o.(optionalAttrsObjectType)
	return ok && t.ObjectType.Equal(other.ObjectType)
}

func (t optionalAttrsObjectType) String() string { return "optionalAttrsObjectType" }

// installationTargetType is the element type of target_lists and
// target_maps.
func installationTargetType() attr.Type {
	return optionalAttrsObjectType{basetypes.ObjectType{AttrTypes: map[string]attr.Type{
		"type": types.StringType, "config": types.StringType, "name": types.StringType,
		"labels": types.MapType{ElemType: types.StringType}, "annotations": types.MapType{ElemType: types.StringType},
	}}}
}

// installationTargetObject is one target of an installation: Landscaper's
// Target spec and, optionally, its metadata.
func installationTargetObject() schema.NestedAttributeObject {
	o := targetObject()
	o.Attributes["name"] = schema.StringAttribute{Optional: true, MarkdownDescription: "Given alone (no `type`, " +
		"no `config`): the name of a target of " + providerTargetsDocs + ", which keeps its credentials out of state; " +
		"templates see that target's name, type, labels and annotations, and no config (export executions see " +
		"`{providerTargetRef: <name>}`, so an exported copy stays a reference; see `target_exports`). Given with `type` and " +
		"`config`: the Target's `metadata.name` as templates see it. Either way the name a deploy item's " +
		"`target: {name: ...}` matches; by default the import name (`<import>[<index>]` or `<import>[<key>]` in " +
		"lists and maps)."}
	o.Attributes["labels"] = schema.MapAttribute{Optional: true, ElementType: types.StringType,
		MarkdownDescription: "The Target's `metadata.labels`."}
	o.Attributes["annotations"] = schema.MapAttribute{Optional: true, ElementType: types.StringType,
		MarkdownDescription: "The Target's `metadata.annotations`."}
	return o
}

// withoutOptionalAttributes returns t with every OptionalAttributes marker
// removed: the marker belongs in the schema only, values must not carry it.
func withoutOptionalAttributes(t tftypes.Type) tftypes.Type {
	switch x := t.(type) {
	case tftypes.Object:
		attrs := make(map[string]tftypes.Type, len(x.AttributeTypes))
		for k, a := range x.AttributeTypes {
			attrs[k] = withoutOptionalAttributes(a)
		}
		return tftypes.Object{AttributeTypes: attrs}
	case tftypes.List:
		return tftypes.List{ElementType: withoutOptionalAttributes(x.ElementType)}
	case tftypes.Set:
		return tftypes.Set{ElementType: withoutOptionalAttributes(x.ElementType)}
	case tftypes.Map:
		return tftypes.Map{ElementType: withoutOptionalAttributes(x.ElementType)}
	case tftypes.Tuple:
		elems := make([]tftypes.Type, len(x.ElementTypes))
		for i, e := range x.ElementTypes {
			elems[i] = withoutOptionalAttributes(e)
		}
		return tftypes.Tuple{ElementTypes: elems}
	}
	return t
}

func installationTargetsAttribute() schema.MapNestedAttribute {
	a := targetsAttribute("Target imports by import name: Landscaper's Target spec (`type`, `config`) and, " +
		"optionally, its metadata (`name`, `labels`, `annotations`); or the `name` alone of a target of " + providerTargetsDocs)
	a.NestedObject = installationTargetObject()
	return a
}

// validateTargetMetadata checks the names and labels of an installation's
// targets. A name is what a deploy item's target: {name: ...} matches, so
// two different targets of the same name would make that ambiguous; the
// same target imported twice (alone and in a map, say) is fine.
func validateTargetMetadata(f map[string]tftypes.Value) problems {
	var ps problems
	type named struct {
		at         *tftypes.AttributePath
		name, spec string
	}
	var all []named
	check := func(at *tftypes.AttributePath, t tftypes.Value) {
		tf := fields(t)
		if n := tf["name"]; n.IsKnown() && !n.IsNull() {
			if err := validTargetName(str(n)); err != nil {
				ps.add(at.WithAttributeName("name"), "Invalid target name", err.Error())
			} else {
				all = append(all, named{at.WithAttributeName("name"), str(n), str(tf["type"]) + "\x00" + str(tf["config"])})
			}
		}
		for _, a := range []string{"labels", "annotations"} {
			for _, k := range slices.Sorted(maps.Keys(fields(tf[a]))) {
				if k == "" || len(k) > 317 || strings.ContainsAny(k, " \t\n") {
					ps.add(at.WithAttributeName(a).WithElementKeyString(k), "Invalid target "+strings.TrimSuffix(a, "s")+" key",
						fmt.Sprintf("%q is no Kubernetes metadata key: keys are not empty and have no whitespace", k))
				}
			}
		}
	}
	for _, n := range slices.Sorted(maps.Keys(fields(f[attrTargets]))) {
		check(attrPath(attrTargets).WithElementKeyString(n), fields(f[attrTargets])[n])
	}
	for _, n := range slices.Sorted(maps.Keys(fields(f["target_lists"]))) {
		var elems []tftypes.Value
		_ = fields(f["target_lists"])[n].As(&elems)
		for i, t := range elems {
			check(attrPath("target_lists").WithElementKeyString(n).WithElementKeyInt(i), t)
		}
	}
	for _, n := range slices.Sorted(maps.Keys(fields(f["target_maps"]))) {
		m := fields(fields(f["target_maps"])[n])
		for _, k := range slices.Sorted(maps.Keys(m)) {
			check(attrPath("target_maps").WithElementKeyString(n).WithElementKeyString(k), m[k])
		}
	}
	seen := map[string]string{}
	for _, t := range all {
		if spec, ok := seen[t.name]; ok && spec != t.spec {
			ps.add(t.at, "Duplicate target name", fmt.Sprintf("another target of this installation, with another type "+
				"or config, is named %q too", t.name))
		}
		seen[t.name] = t.spec
	}
	return ps
}

// targetNamePattern is a Kubernetes object name (a DNS subdomain), which
// a Landscaper Target's name is.
var targetNamePattern = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)

func validTargetName(n string) error {
	if len(n) > 253 || !targetNamePattern.MatchString(n) {
		return fmt.Errorf("%q is not a Kubernetes object name: lower case letters, digits, '-' and '.', "+
			"starting and ending with a letter or digit, at most 253 characters", n)
	}
	return nil
}
