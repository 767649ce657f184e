package lscluster

import (
	"context"
	"errors"
	"fmt"
)

// exports reads spec.exports and the values of the export DataObjects the
// Installation wrote (exports.Constructor and Operation.CreateOrUpdateExports
// in Landscaper): named after the dataRef in the root context, labelled
// with the installation as their source.
func (rd *instReader) exports(ctx context.Context) error {
	ns, src := rd.inst.Namespace, InstallationContext(rd.inst.Name)
	for _, def := range rd.inst.Spec.Exports.Data {
		exp := Export{DataRef: def.DataRef}
		name := DataObjectName(rootContext, def.DataRef)
		var do lsDataObject
		err := rd.get(ctx, dataObjectsGVR, ns, name, fmt.Sprintf("export %q, dataRef %q", def.Name, def.DataRef), &do)
		switch {
		case errors.Is(err, ErrNotFound):
			rd.warn("export %q: DataObject %s/%s does not exist (yet): the export is unknown until the first apply", def.Name, ns, name)
		case err != nil:
			return err
		case do.Labels[labelDOSource] != src || do.Labels[labelDOSourceType] != sourceTypeExport:
			rd.warn("export %q: DataObject %s/%s was not exported by this installation (its %s is %q): the export is unknown until the first apply", def.Name, ns, name, labelDOSource, do.Labels[labelDOSource])
		default:
			v, err := parseJSON(do.Data)
			if err != nil {
				return fmt.Errorf("DataObject %s/%s (export %q): data: %w", ns, name, def.Name, err)
			}
			exp.Value, exp.Known = v, true
		}
		rd.out.Exports[def.Name] = exp
	}
	for _, def := range rd.inst.Spec.Exports.Targets {
		te := TargetExport{Target: def.Target, Object: DataObjectName(rootContext, def.Target)}
		var t lsTarget
		err := rd.get(ctx, targetsGVR, ns, te.Object, fmt.Sprintf("target export %q", def.Name), &t)
		switch {
		case errors.Is(err, ErrNotFound):
		case err != nil:
			return err
		case t.Labels[labelDOSource] == src:
			te.Type = t.Spec.Type
		}
		rd.out.TargetExports[def.Name] = te
	}
	return nil
}
