package provider

import (
	"context"
	"maps"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// targetMetaAttributes are the optional metadata of an installation's
// target: what templates read as the Target object's metadata.
var targetMetaAttributes = map[string]struct{}{"name": {}, "labels": {}, "annotations": {}}

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
	o.OptionalAttributes = maps.Clone(targetMetaAttributes)
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
	o.Attributes["name"] = schema.StringAttribute{Optional: true, MarkdownDescription: "The Target's " +
		"`metadata.name` as templates see it, and the name a deploy item's `target: {name: ...}` matches; " +
		"by default the import name (`<import>[<index>]` or `<import>[<key>]` in lists and maps)."}
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
		"optionally, its metadata (`name`, `labels`, `annotations`)")
	a.NestedObject = installationTargetObject()
	return a
}
