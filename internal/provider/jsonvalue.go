package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/big"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// jsonToValue turns an export (any JSON) into a Terraform value with
// concrete types, so `exports.item.a.b` works in HCL: objects become
// objects, arrays tuples, numbers exact numbers. JSON null (or no export)
// becomes a null dynamic value.
func jsonToValue(raw json.RawMessage) (attr.Value, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return types.DynamicNull(), nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("export is not JSON: %w", err)
	}
	return anyToValue(v)
}

func anyToValue(v any) (attr.Value, error) {
	switch x := v.(type) {
	case nil:
		return types.DynamicNull(), nil
	case bool:
		return types.BoolValue(x), nil
	case string:
		return types.StringValue(x), nil
	case json.Number:
		f, _, err := big.ParseFloat(string(x), 10, 512, big.ToNearestEven)
		if err != nil {
			return nil, fmt.Errorf("number %s: %w", x, err)
		}
		return types.NumberValue(f), nil
	case []any:
		elems := make([]attr.Value, len(x))
		typs := make([]attr.Type, len(x))
		for i, e := range x {
			ev, err := anyToValue(e)
			if err != nil {
				return nil, err
			}
			elems[i], typs[i] = ev, ev.Type(context.Background())
		}
		t, diags := types.TupleValue(typs, elems)
		if diags.HasError() {
			return nil, fmt.Errorf("array: %v", diags)
		}
		return t, nil
	case map[string]any:
		attrs := make(map[string]attr.Value, len(x))
		typs := make(map[string]attr.Type, len(x))
		for k, e := range x {
			ev, err := anyToValue(e)
			if err != nil {
				return nil, err
			}
			attrs[k], typs[k] = ev, ev.Type(context.Background())
		}
		o, diags := types.ObjectValue(typs, attrs)
		if diags.HasError() {
			return nil, fmt.Errorf("object: %v", diags)
		}
		return o, nil
	}
	return nil, fmt.Errorf("unsupported JSON value %T", v)
}
