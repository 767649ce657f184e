package lscluster

import (
	"context"
)

// Roots returns the names of the root Installations of a namespace, in
// name order: what can be taken over (Read refuses a sub-installation,
// which comes with its root).
func (r *Reader) Roots(ctx context.Context, namespace string) ([]string, error) {
	if err := r.check(); err != nil {
		return nil, err
	}
	var names []string
	err := r.list(ctx, installationsGVR, namespace, "", func(raw map[string]any) error {
		var inst lsInstallation
		if err := decode(raw, &inst, "Installation in "+namespace); err != nil {
			return err
		}
		if parentOf(&inst) == "" {
			names = append(names, inst.Name)
		}
		return nil
	})
	return names, err
}
