package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
)

// Values of landscaper_execution are read and written as tftypes values.
// An execution of a few hundred items is several thousand values, and
// converting them through the framework's reflection costs far more than
// the job itself; see protocol.go.

// valueTypes holds the Terraform types of the resource's attributes, taken
// from the framework schema so there is one definition of the schema.
type valueTypes struct {
	resource   tftypes.Object
	status     tftypes.Object
	itemStatus tftypes.Object
	lastError  tftypes.Object
}

func newValueTypes(resource tftypes.Object) valueTypes {
	vt := valueTypes{resource: resource}
	vt.status = as[tftypes.Object](resource.AttributeTypes["status"])
	vt.itemStatus = as[tftypes.Object](as[tftypes.Map](vt.status.AttributeTypes[attrDeployItems]).ElementType)
	vt.lastError = as[tftypes.Object](vt.status.AttributeTypes["last_error"])
	return vt
}

// as asserts the type of a part of a schema's type. The schema is defined
// in this package, so a mismatch is a bug that must not go unnoticed.
func as[T tftypes.Type](t tftypes.Type) T {
	v, ok := t.(T)
	if !ok {
		panic(fmt.Sprintf("schema type %s is not a %T", t, v))
	}
	return v
}

// fields returns the attributes of a known object or the elements of a
// known map; nil for null or unknown values.
func fields(v tftypes.Value) map[string]tftypes.Value {
	if !v.IsKnown() || v.IsNull() {
		return nil
	}
	var m map[string]tftypes.Value
	if err := v.As(&m); err != nil {
		return nil
	}
	return m
}

// str returns a known string, or "" when null or unknown.
func str(v tftypes.Value) string {
	var s *string
	if !v.IsKnown() || v.As(&s) != nil || s == nil {
		return ""
	}
	return *s
}

func boolean(v tftypes.Value, def bool) bool {
	var b *bool
	if !v.IsKnown() || v.As(&b) != nil || b == nil {
		return def
	}
	return *b
}

func stringList(v tftypes.Value) []string {
	var elems []tftypes.Value
	if !v.IsKnown() || v.IsNull() || v.As(&elems) != nil {
		return nil
	}
	out := make([]string, 0, len(elems))
	for _, e := range elems {
		out = append(out, str(e))
	}
	return out
}

func stringValue(s string) tftypes.Value { return tftypes.NewValue(tftypes.String, s) }

func stringOrNull(s string) tftypes.Value {
	if s == "" {
		return tftypes.NewValue(tftypes.String, nil)
	}
	return stringValue(s)
}

// itemPath is the attribute path of one deploy item, or of one of its fields.
func itemPath(name string, field ...string) *tftypes.AttributePath {
	p := tftypes.NewAttributePath().WithAttributeName(attrDeployItems).WithElementKeyString(name)
	for _, f := range field {
		p = p.WithAttributeName(f)
	}
	return p
}

// Attribute names used in more than one place.
const (
	attrDeployItems        = "deploy_items"
	attrTargets            = "targets"
	attrSensitiveImports   = "sensitive_imports"
	attrSensitiveImportsWO = "sensitive_imports_wo"
	attrWOVersion          = "sensitive_imports_wo_version"
	attrUpdateOnChangeOnly = "update_on_change_only"
	attrSensitiveExport    = "sensitive_export"
	attrReconcileTrigger   = "reconcile_trigger"
)

// Defaults of the optional deploy item attributes, as the schema documents
// them (the timeout's is engine.DefaultTimeout). They are not written into
// state: these attributes are optional and not computed, so a default is
// simply a null, and removing a value from the configuration brings the
// default back.
const (
	defaultUpdateOnChangeOnly = true
	defaultSensitiveExport    = false
)

// withComputedUnknown returns the resource value of f with status and
// both exports attributes unknown as a whole.
func (vt valueTypes) withComputedUnknown(f map[string]tftypes.Value) tftypes.Value {
	for _, a := range []string{"status", "exports", "sensitive_exports"} {
		f[a] = tftypes.NewValue(vt.resource.AttributeTypes[a], tftypes.UnknownValue)
	}
	return tftypes.NewValue(vt.resource, f)
}

// statusValue renders the engine status as the status attribute.
func (vt valueTypes) statusValue(st engine.Status) tftypes.Value {
	items := make(map[string]tftypes.Value, len(st.Items))
	for n, is := range st.Items {
		items[n] = vt.itemStatusValue(is)
	}
	return tftypes.NewValue(vt.status, map[string]tftypes.Value{
		"phase":           stringOrNull(string(st.Phase)),
		"job_id":          stringOrNull(st.JobID),
		"job_id_finished": stringOrNull(st.JobIDFinished),
		"last_error":      vt.errorValue(st.LastError),
		attrDeployItems:   tftypes.NewValue(vt.status.AttributeTypes[attrDeployItems], items),
		attrRollout:       rolloutStatusValue(vt.rolloutStatus(), executionRollouts(st, false)),
	})
}

func (vt valueTypes) itemStatusValue(is *engine.ItemStatus) tftypes.Value {
	ps := tftypes.NewValue(tftypes.String, nil)
	if len(is.ProviderStatus) > 0 && string(is.ProviderStatus) != "null" {
		ps = stringValue(string(is.ProviderStatus))
	}
	attrs := map[string]tftypes.Value{
		"phase":           stringValue(string(is.Phase)),
		"job_id_finished": stringOrNull(is.JobIDFinished),
		"last_error":      vt.errorValue(is.LastError),
		"first_error":     vt.errorValue(is.FirstError),
		"provider_status": ps,
	}
	// An installation's tree shows fewer attributes than an execution.
	for k := range attrs {
		if _, ok := vt.itemStatus.AttributeTypes[k]; !ok {
			delete(attrs, k)
		}
	}
	return tftypes.NewValue(vt.itemStatus, attrs)
}

func (vt valueTypes) errorValue(e *core.Error) tftypes.Value {
	if e == nil {
		return tftypes.NewValue(vt.lastError, nil)
	}
	codes := make([]tftypes.Value, len(e.Codes))
	for i, c := range e.Codes {
		codes[i] = stringValue(c)
	}
	return tftypes.NewValue(vt.lastError, map[string]tftypes.Value{
		"operation": stringValue(string(e.Operation)),
		"reason":    stringValue(e.Reason),
		"message":   stringValue(e.Message),
		"codes":     tftypes.NewValue(vt.lastError.AttributeTypes["codes"], codes),
		// Errors stored before these times existed have none.
		"last_transition_time": timeOrNull(e.LastTransitionTime),
		"last_update_time":     timeOrNull(e.LastUpdateTime),
	})
}

// plannedStatus is the status a job will leave, as far as it is known
// before it runs: items that run and the execution's own fields are
// unknown; skipped items keep their status; orphans leave the map.
func (vt valueTypes) plannedStatus(prev engine.Status, plan engine.Plan) tftypes.Value {
	items := make(map[string]tftypes.Value, len(plan.Run)+len(plan.Skip))
	for _, n := range plan.Run {
		items[n] = tftypes.NewValue(vt.itemStatus, tftypes.UnknownValue)
	}
	for _, n := range plan.Skip {
		items[n] = vt.itemStatusValue(prev.Items[n])
	}
	for _, n := range plan.Hold { // a rollout leaves them as they are
		if is := prev.Items[n]; is != nil {
			items[n] = vt.itemStatusValue(is)
		} else {
			items[n] = tftypes.NewValue(vt.itemStatus, tftypes.UnknownValue)
		}
	}
	unknown := func(t tftypes.Type) tftypes.Value { return tftypes.NewValue(t, tftypes.UnknownValue) }
	return tftypes.NewValue(vt.status, map[string]tftypes.Value{
		"phase":           unknown(tftypes.String),
		"job_id":          unknown(tftypes.String),
		"job_id_finished": unknown(tftypes.String),
		"last_error":      unknown(vt.lastError),
		attrDeployItems:   tftypes.NewValue(vt.status.AttributeTypes[attrDeployItems], items),
		attrRollout:       unknown(vt.rolloutStatus()),
	})
}

func timeOrNull(t time.Time) tftypes.Value {
	if t.IsZero() {
		return tftypes.NewValue(tftypes.String, nil)
	}
	return stringValue(t.UTC().Format(time.RFC3339))
}

var dynamicNull = tftypes.NewValue(tftypes.DynamicPseudoType, nil)

// exportValues renders exports and sensitive_exports: objects with one
// attribute per item in names. Items in unknown have unknown exports; for
// those in unrouted it is not known which attribute gets the export.
func exportValues(st engine.Status, names []string, sensitive, unknown, unrouted map[string]bool) (plain, secret tftypes.Value, err error) {
	attrTypes := make(map[string]tftypes.Type, len(names))
	pv := make(map[string]tftypes.Value, len(names))
	sv := make(map[string]tftypes.Value, len(names))
	for _, n := range names {
		attrTypes[n] = tftypes.DynamicPseudoType
		pv[n], sv[n] = dynamicNull, dynamicNull
		v := tftypes.NewValue(tftypes.DynamicPseudoType, tftypes.UnknownValue)
		if !unknown[n] {
			var raw json.RawMessage
			if is := st.Items[n]; is != nil {
				raw = is.Export
			}
			if v, err = jsonToValue(raw); err != nil {
				return plain, secret, fmt.Errorf("export of deploy item %q: %w", n, err)
			}
		}
		switch {
		case unrouted[n]:
			pv[n], sv[n] = v, v
		case sensitive[n]:
			sv[n] = v
		default:
			pv[n] = v
		}
	}
	t := tftypes.Object{AttributeTypes: attrTypes}
	return tftypes.NewValue(t, pv), tftypes.NewValue(t, sv), nil
}

// jsonToValue turns an export (any JSON) into a Terraform value with
// concrete types, so `exports.item.a.b` works in HCL: objects become
// objects, arrays tuples, numbers exact numbers. JSON null, or no export,
// is null.
func jsonToValue(raw json.RawMessage) (tftypes.Value, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return dynamicNull, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return dynamicNull, fmt.Errorf("not JSON: %w", err)
	}
	return anyToValue(v)
}

func anyToValue(v any) (tftypes.Value, error) {
	switch x := v.(type) {
	case nil:
		return dynamicNull, nil
	case bool:
		return tftypes.NewValue(tftypes.Bool, x), nil
	case string:
		return tftypes.NewValue(tftypes.String, x), nil
	case json.Number:
		f, _, err := big.ParseFloat(string(x), 10, 512, big.ToNearestEven)
		if err != nil {
			return dynamicNull, fmt.Errorf("number %s: %w", x, err)
		}
		return tftypes.NewValue(tftypes.Number, f), nil
	case []any:
		elems := make([]tftypes.Value, len(x))
		typs := make([]tftypes.Type, len(x))
		for i, e := range x {
			ev, err := anyToValue(e)
			if err != nil {
				return dynamicNull, err
			}
			elems[i], typs[i] = ev, ev.Type()
		}
		return tftypes.NewValue(tftypes.Tuple{ElementTypes: typs}, elems), nil
	case map[string]any:
		attrs := make(map[string]tftypes.Value, len(x))
		typs := make(map[string]tftypes.Type, len(x))
		for k, e := range x {
			ev, err := anyToValue(e)
			if err != nil {
				return dynamicNull, err
			}
			attrs[k], typs[k] = ev, ev.Type()
		}
		return tftypes.NewValue(tftypes.Object{AttributeTypes: typs}, attrs), nil
	}
	return dynamicNull, fmt.Errorf("unsupported JSON value %T", v)
}

// valueToAny turns a known Terraform value into a plain Go value as JSON
// decoding would give it (objects and maps become maps, lists, sets and
// tuples slices, numbers float64), which is what Landscaper's templates
// and schemas see of imported data. known is false when any part is
// unknown.
func valueToAny(v tftypes.Value) (out any, known bool) {
	if !v.IsFullyKnown() {
		return nil, false
	}
	if v.IsNull() {
		return nil, true
	}
	switch t := v.Type().(type) {
	case tftypes.Object, tftypes.Map:
		m := map[string]any{}
		for k, e := range fields(v) {
			m[k], _ = valueToAny(e)
		}
		return m, true
	case tftypes.List, tftypes.Set, tftypes.Tuple:
		var elems []tftypes.Value
		_ = v.As(&elems)
		s := make([]any, len(elems))
		for i, e := range elems {
			s[i], _ = valueToAny(e)
		}
		return s, true
	default:
		switch {
		case t.Is(tftypes.String):
			return str(v), true
		case t.Is(tftypes.Bool):
			return boolean(v, false), true
		case t.Is(tftypes.Number):
			var f big.Float
			if v.As(&f) == nil {
				x, _ := f.Float64()
				return x, true
			}
		}
	}
	return nil, true
}

// anyToValueJSON turns a plain Go value (as templates produce it) into a
// Terraform value, through JSON so every numeric type is treated alike.
func anyToValueJSON(v any) (tftypes.Value, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return dynamicNull, err
	}
	return jsonToValue(raw)
}
