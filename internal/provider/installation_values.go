package provider

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/installation"
)

// The status attribute of landscaper_installation flattens the tree:
// installations by path, deploy items by "<path>/<item>".

func (x *installations) statusTypes() (status, node, item, lastError tftypes.Object) {
	status = as[tftypes.Object](x.t.AttributeTypes["status"])
	node = as[tftypes.Object](as[tftypes.Map](status.AttributeTypes["installations"]).ElementType)
	item = as[tftypes.Object](as[tftypes.Map](status.AttributeTypes[attrDeployItems]).ElementType)
	lastError = as[tftypes.Object](status.AttributeTypes["last_error"])
	return status, node, item, lastError
}

// vt returns value helpers sharing the item status type of this schema.
func (x *installations) vt() valueTypes {
	_, _, item, lastError := x.statusTypes()
	return valueTypes{itemStatus: item, lastError: lastError}
}

func (x *installations) nodeValue(s *installation.Status) tftypes.Value {
	_, node, _, _ := x.statusTypes()
	return tftypes.NewValue(node, map[string]tftypes.Value{
		"phase":           stringOrNull(string(s.Phase)),
		"job_id_finished": stringOrNull(s.JobIDFinished),
		"last_error":      x.vt().errorValue(s.LastError),
	})
}

// statusValue renders a tree status; nil is a null status.
func (x *installations) statusValue(st *installation.Status) tftypes.Value {
	status, _, _, _ := x.statusTypes()
	if st == nil {
		return tftypes.NewValue(status, nil)
	}
	nodes := map[string]tftypes.Value{}
	items := map[string]tftypes.Value{}
	vt := x.vt()
	st.Walk(func(p string, s *installation.Status) {
		nodes[p] = x.nodeValue(s)
		for n, is := range s.Execution.Items {
			items[installation.Join(p, n)] = vt.itemStatusValue(is)
		}
	})
	return x.statusObject(st, nodes, items, false)
}

func (x *installations) statusObject(st *installation.Status, nodes, items map[string]tftypes.Value, unknownTop bool) tftypes.Value {
	status, _, _, lastError := x.statusTypes()
	top := map[string]tftypes.Value{
		"phase":           stringOrNull(string(st.Phase)),
		"job_id":          stringOrNull(st.JobID),
		"job_id_finished": stringOrNull(st.JobIDFinished),
		"imports_hash":    stringOrNull(st.ImportsHash),
		"last_error":      x.vt().errorValue(st.LastError),
	}
	if unknownTop {
		for k := range top {
			t := tftypes.Type(tftypes.String)
			if k == "last_error" {
				t = lastError
			}
			top[k] = tftypes.NewValue(t, tftypes.UnknownValue)
		}
	}
	top["installations"] = tftypes.NewValue(status.AttributeTypes["installations"], nodes)
	top[attrDeployItems] = tftypes.NewValue(status.AttributeTypes[attrDeployItems], items)
	return tftypes.NewValue(status, top)
}

// plannedStatus is the status a job will leave, as far as it is known:
// nodes whose subtree changes nothing and items that do not run keep
// their status; the rest is unknown; orphans leave.
func (x *installations) plannedStatus(prev *installation.Status, p *installation.Plan) tftypes.Value {
	_, node, item, _ := x.statusTypes()
	nodes := map[string]tftypes.Value{}
	items := map[string]tftypes.Value{}
	vt := x.vt()
	prevOf := map[string]*installation.Status{}
	prev.Walk(func(path string, s *installation.Status) { prevOf[path] = s })
	p.Walk(func(np *installation.Plan) {
		ps := prevOf[np.Path]
		if np.Noop && ps != nil {
			nodes[np.Path] = x.nodeValue(ps)
		} else {
			nodes[np.Path] = tftypes.NewValue(node, tftypes.UnknownValue)
		}
		for _, n := range np.Job.Run {
			items[installation.Join(np.Path, n)] = tftypes.NewValue(item, tftypes.UnknownValue)
		}
		for _, n := range np.Job.Skip {
			if ps != nil && ps.Execution.Items[n] != nil {
				items[installation.Join(np.Path, n)] = vt.itemStatusValue(ps.Execution.Items[n])
			}
		}
	})
	return x.statusObject(prev, nodes, items, true)
}

// exportValues renders the root's exports: data exports as one object,
// target exports as a map of {type, config}.
func (x *installations) exportValues(st *installation.Status) (data, targets tftypes.Value, err error) {
	tt := x.t.AttributeTypes["target_exports"]
	if st == nil {
		return dynamicNull, tftypes.NewValue(tt, nil), nil
	}
	attrs := map[string]tftypes.Value{}
	typs := map[string]tftypes.Type{}
	for _, n := range slices.Sorted(maps.Keys(st.Exports.Data)) {
		v, err := anyToValueJSON(st.Exports.Data[n])
		if err != nil {
			return dynamicNull, tftypes.NewValue(tt, nil), fmt.Errorf("export %q: %w", n, err)
		}
		attrs[n], typs[n] = v, v.Type()
	}
	data = tftypes.NewValue(tftypes.Object{AttributeTypes: typs}, attrs)
	elem := as[tftypes.Map](tt).ElementType
	tv := map[string]tftypes.Value{}
	for n, t := range st.Exports.Targets {
		cfg := t.Config
		if len(cfg) == 0 {
			cfg = json.RawMessage("null")
		}
		et := as[tftypes.Object](elem).AttributeTypes
		tv[n] = tftypes.NewValue(elem, map[string]tftypes.Value{"type": stringValue(t.Type), "config": stringValue(string(cfg)),
			"labels": stringMapValue(et["labels"], t.Labels), "annotations": stringMapValue(et["annotations"], t.Annotations)})
	}
	return data, tftypes.NewValue(tt, tv), nil
}

// stringMapValue is a map of strings, null when empty.
func stringMapValue(t tftypes.Type, m map[string]string) tftypes.Value {
	if len(m) == 0 {
		return tftypes.NewValue(t, nil)
	}
	vals := make(map[string]tftypes.Value, len(m))
	for k, v := range m {
		vals[k] = stringValue(v)
	}
	return tftypes.NewValue(t, vals)
}
