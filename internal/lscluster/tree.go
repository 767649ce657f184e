package lscluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/labels"
)

// maxDepth bounds the sub-installation tree, so that owner references
// that loop cannot keep the reader going.
const maxDepth = 32

// tree reads an installation's Execution and sub-installations, the way
// Landscaper's controllers find them: the Execution by status.executionRef,
// its DeployItems by the execution's deployItemCache (else by the
// managed-by label), sub-installations by status.subInstCache (else by the
// encompassed-by label).
func (r *Reader) tree(ctx context.Context, inst *lsInstallation, depth int) (*Execution, map[string]*Subinstallation, error) {
	if depth > maxDepth {
		return nil, nil, fmt.Errorf("sub-installations nest deeper than %d levels", maxDepth)
	}
	exec, err := r.execution(ctx, inst)
	if err != nil {
		return nil, nil, err
	}
	subs := map[string]*Subinstallation{}
	add := func(specName string, sub *lsInstallation) error {
		if specName == "" {
			specName = sub.Annotations[annotationSubinstName]
		}
		if specName == "" {
			specName = sub.Name
		}
		if _, dup := subs[specName]; dup {
			return fmt.Errorf("two sub-installations of %s are named %q", inst.Name, specName)
		}
		bp, err := readBlueprint(sub)
		if err != nil {
			return fmt.Errorf("sub-installation %s/%s: %w", sub.Namespace, sub.Name, err)
		}
		e, s, err := r.tree(ctx, sub, depth+1)
		if err != nil {
			return err
		}
		subs[specName] = &Subinstallation{Name: specName, Object: sub.Name, Phase: sub.Status.Phase, LastError: sub.Status.LastError.plain(),
			Blueprint: bp, Execution: e, Subinstallations: s}
		return nil
	}
	if c := inst.Status.SubInstCache; c != nil {
		for _, p := range c.ActiveSubs {
			var sub lsInstallation
			err := r.get(ctx, installationsGVR, inst.Namespace, p.ObjectName, fmt.Sprintf("sub-installation %q of %s", p.SpecName, inst.Name), &sub)
			if errors.Is(err, ErrNotFound) {
				continue // as Landscaper: a sub-installation gone is no longer there
			}
			if err != nil {
				return nil, nil, err
			}
			if err := add(p.SpecName, &sub); err != nil {
				return nil, nil, err
			}
		}
		return exec, subs, nil
	}
	sel := labels.SelectorFromSet(labels.Set{labelEncompassedBy: inst.Name}).String()
	err = r.list(ctx, installationsGVR, inst.Namespace, sel, func(raw map[string]any) error {
		var sub lsInstallation
		if err := decode(raw, &sub, "Installation selected by "+sel); err != nil {
			return err
		}
		if parentOf(&sub) != inst.Name {
			return nil
		}
		return add("", &sub)
	})
	return exec, subs, err
}

func (r *Reader) execution(ctx context.Context, inst *lsInstallation) (*Execution, error) {
	ref := inst.Status.ExecutionRef
	if ref == nil || ref.Name == "" {
		return nil, nil
	}
	ns := ref.Namespace
	if ns == "" {
		ns = inst.Namespace
	}
	var ex lsExecution
	err := r.get(ctx, executionsGVR, ns, ref.Name, "status.executionRef of Installation "+inst.Name, &ex)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := &Execution{Object: ex.Name, Phase: ex.Status.Phase, DeployItems: map[string]DeployItem{}}
	add := func(specName string, di *lsDeployItem) error {
		if specName == "" {
			specName = di.Labels[labelExecItemName]
		}
		if specName == "" {
			return fmt.Errorf("DeployItem %s/%s of Execution %s has no label %s", di.Namespace, di.Name, ex.Name, labelExecItemName)
		}
		if _, dup := out.DeployItems[specName]; dup {
			return fmt.Errorf("two DeployItems of Execution %s/%s are named %q", ns, ex.Name, specName)
		}
		out.DeployItems[specName] = deployItem(di)
		return nil
	}
	if c := ex.Status.DeployItemCache; c != nil {
		for _, p := range c.ActiveDIs {
			var di lsDeployItem
			err := r.get(ctx, deployItemsGVR, ns, p.ObjectName, fmt.Sprintf("deploy item %q of Execution %s", p.SpecName, ex.Name), &di)
			if errors.Is(err, ErrNotFound) {
				continue
			}
			if err != nil {
				return nil, err
			}
			if err := add(p.SpecName, &di); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	sel := labels.SelectorFromSet(labels.Set{labelExecManagedBy: ex.Name}).String()
	err = r.list(ctx, deployItemsGVR, ns, sel, func(raw map[string]any) error {
		var di lsDeployItem
		if err := decode(raw, &di, "DeployItem selected by "+sel); err != nil {
			return err
		}
		return add("", &di)
	})
	return out, err
}

func deployItem(di *lsDeployItem) DeployItem {
	out := DeployItem{Object: di.Name, Type: di.Spec.Type, Config: di.Spec.Config, Phase: di.Status.Phase,
		JobIDFinished: di.Status.JobIDFinished, LastError: di.Status.LastError.plain()}
	if di.Spec.Target != nil {
		out.Target = di.Spec.Target.Name
	}
	var status struct {
		ManagedResources []struct {
			Resource struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
				Namespace  string `json:"namespace"`
				Name       string `json:"name"`
			} `json:"resource"`
		} `json:"managedResources"`
	}
	if len(di.Status.ProviderStatus) > 0 && json.Unmarshal(di.Status.ProviderStatus, &status) == nil {
		for _, m := range status.ManagedResources {
			res := m.Resource
			out.ManagedResources = append(out.ManagedResources, ObjectRef{APIVersion: res.APIVersion, Kind: res.Kind, Namespace: res.Namespace, Name: res.Name})
		}
	}
	switch di.Spec.Type {
	case TypeManifest:
		out.ManagedLabel = ManifestManagedLabel
	case TypeHelm:
		out.ManagedLabel = HelmManagedLabel
		var cfg struct {
			Name           string `json:"name"`
			Namespace      string `json:"namespace"`
			HelmDeployment *bool  `json:"helmDeployment"`
		}
		if json.Unmarshal(di.Spec.Config, &cfg) == nil && cfg.Name != "" && (cfg.HelmDeployment == nil || *cfg.HelmDeployment) {
			out.Release = &HelmRelease{Name: cfg.Name, Namespace: cfg.Namespace}
		}
	}
	return out
}

// DeployItems is every deploy item of the tree by the key
// landscaper_installation's deploy_items uses: the root's items by their
// name, a sub-installation's by "<sub-installation path>/<item>".
func (i *Installation) DeployItems() map[string]DeployItem {
	out := map[string]DeployItem{}
	var walk func(prefix string, e *Execution, subs map[string]*Subinstallation)
	walk = func(prefix string, e *Execution, subs map[string]*Subinstallation) {
		if e != nil {
			for name, di := range e.DeployItems {
				out[prefix+name] = di
			}
		}
		for name, sub := range subs {
			walk(prefix+name+"/", sub.Execution, sub.Subinstallations)
		}
	}
	walk("", i.Execution, i.Subinstallations)
	return out
}

// treeWarnings names the deploy items whose installed objects cannot be
// adopted: deployers this provider does not run.
func treeWarnings(items map[string]DeployItem) []string {
	var out []string
	for _, key := range sortedKeys(items) {
		di := items[key]
		if di.ManagedLabel == "" && di.Type != typeMock {
			out = append(out, fmt.Sprintf("deploy item %q (DeployItem %s) of type %s cannot be adopted: the first apply runs it anew", key, di.Object, di.Type))
		}
	}
	return out
}
