package kube

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/target"
)

// DeleteOptions say how managed objects are deleted.
type DeleteOptions struct {
	// ManagedLabel and Owner: see ApplyOptions. A fallback object labelled
	// for another owner is not deleted.
	ManagedLabel string
	Owner        string
	// AdoptFrom: see ApplyOptions. A fallback object labelled with it is
	// deleted as this item's own.
	AdoptFrom string
	// AdoptObjects: see ApplyOptions. A fallback object among them is
	// deleted as this item's own.
	AdoptObjects []deployer.ObjectRef
	// Groups orders the deletion; empty means Landscaper's default:
	// namespaced objects, then cluster-scoped ones, then CRDs.
	Groups []DeletionGroupDefinition
	// Settle bounds how long DeleteManaged waits for deleted objects to be
	// gone before reporting them as remaining; zero means 2s.
	Settle time.Duration
}

// DeleteManaged deletes managed objects as Landscaper does. Objects of
// policy keep or ignore are left alone, and so are fallback objects that
// another owner manages. annotateBeforeDelete and patchBeforeDelete are
// applied first. Then the deletion groups run in order; an object that
// matches no group is not deleted. A group starts only when every object of
// the previous group is gone.
//
// It returns the records of objects that still exist (their deletion is
// under way, held up by finalizers, or the group waits for an earlier
// one); call it again with them until none remain. Objects that are gone,
// or whose kind is no longer served, are dropped from the list.
func DeleteManaged(ctx context.Context, cl *target.Cluster, opts DeleteOptions, managed ManagedResourceStatusList) (ManagedResourceStatusList, error) {
	var eligible ManagedResourceStatusList
	for _, mr := range managed {
		ok, err := deletable(ctx, cl, opts, mr)
		if err != nil {
			return managed, err
		}
		if ok {
			eligible = append(eligible, mr)
		}
	}
	groupDefs := opts.Groups
	if len(groupDefs) == 0 {
		groupDefs = defaultDeletionGroups()
	}
	members := make([]ManagedResourceStatusList, len(groupDefs))
	for _, mr := range eligible {
		for i, g := range groupDefs {
			if groupMatches(g, mr) {
				members[i] = append(members[i], mr)
				break
			}
		}
	}
	settle := opts.Settle
	if settle <= 0 {
		settle = 2 * time.Second
	}
	for i, g := range groupDefs {
		list := members[i]
		if c := g.CustomResourceGroup; c != nil && c.DeleteAllResources {
			all, err := listAll(ctx, cl, c.Resources)
			if err != nil {
				return remainingFrom(members, i), err
			}
			list = union(all, list)
		}
		remaining, err := deleteGroup(ctx, cl, list, isForceDelete(g), settle)
		if err != nil {
			return append(remaining, remainingFrom(members, i+1)...), err
		}
		if len(remaining) > 0 {
			return append(remaining, remainingFrom(members, i+1)...), nil
		}
	}
	return nil, nil
}

func remainingFrom(members []ManagedResourceStatusList, i int) ManagedResourceStatusList {
	var out ManagedResourceStatusList
	for _, m := range members[min(i, len(members)):] {
		out = append(out, m...)
	}
	return out
}

// deletable is Landscaper's filter of objects to delete, plus the
// before-delete hooks of those that are.
func deletable(ctx context.Context, cl *target.Cluster, opts DeleteOptions, mr ManagedResourceStatus) (bool, error) {
	if mr.Policy == PolicyKeep || mr.Policy == PolicyIgnore {
		return false, nil
	}
	ref := mr.Resource
	gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
	needsLook := mr.Policy == PolicyFallback || len(mr.AnnotateBeforeDelete) > 0 || len(mr.PatchBeforeDelete) > 0
	if !needsLook {
		return true, nil
	}
	live, err := cl.Get(ctx, gvk, ref.Namespace, ref.Name)
	if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		return false, nil
	}
	if err != nil {
		return false, Classify(err, ReasonDelete, "unable to get "+refString(ref))
	}
	if mr.Policy == PolicyFallback && live.GetLabels()[opts.ManagedLabel] != opts.Owner && !adopted(opts.ManagedLabel, opts.AdoptFrom, opts.AdoptObjects, live) {
		return false, nil
	}
	if live.GetDeletionTimestamp() != nil || (len(mr.AnnotateBeforeDelete) == 0 && len(mr.PatchBeforeDelete) == 0) {
		return true, nil
	}
	if _, err := patchObject(ctx, cl, gvk, ref.Namespace, ref.Name, mr.AnnotateBeforeDelete, mr.PatchBeforeDelete); err != nil {
		return false, Classify(err, ReasonDelete, "unable to annotate or patch "+refString(ref)+" before deleting it")
	}
	return true, nil
}

func isForceDelete(g DeletionGroupDefinition) bool {
	if g.PredefinedResourceGroup != nil {
		return g.PredefinedResourceGroup.ForceDelete
	}
	return g.CustomResourceGroup != nil && g.CustomResourceGroup.ForceDelete
}

// groupMatches is Landscaper's matching of a record to a deletion group.
func groupMatches(g DeletionGroupDefinition, mr ManagedResourceStatus) bool {
	isCRD := mr.Resource.Kind == "CustomResourceDefinition"
	if p := g.PredefinedResourceGroup; p != nil {
		switch p.Type {
		case GroupNamespacedResources:
			return !isCRD && mr.Resource.Namespace != ""
		case GroupClusterScopedResources:
			return !isCRD && mr.Resource.Namespace == ""
		case GroupCRDs:
			return isCRD
		}
		return false
	}
	c := g.CustomResourceGroup
	if c == nil || c.TargetName != nil {
		return false
	}
	for _, t := range c.Resources {
		if t.Kind == mr.Resource.Kind && t.APIVersion == mr.Resource.APIVersion &&
			(len(t.Namespaces) == 0 || slices.Contains(t.Namespaces, mr.Resource.Namespace)) &&
			(len(t.Names) == 0 || slices.Contains(t.Names, mr.Resource.Name)) {
			return true
		}
	}
	return false
}

// listAll lists every object of the types, for a group that deletes all
// resources, not only managed ones.
func listAll(ctx context.Context, cl *target.Cluster, types []ResourceType) (ManagedResourceStatusList, error) {
	var out ManagedResourceStatusList
	for _, t := range types {
		gvk := schema.FromAPIVersionAndKind(t.APIVersion, t.Kind)
		ri, namespaced, err := cl.Resource(gvk, "")
		if meta.IsNoMatchError(err) {
			continue
		}
		if err != nil {
			return nil, Classify(err, ReasonDelete, "unable to list "+t.Kind)
		}
		if !namespaced && len(t.Names) > 0 {
			for _, n := range t.Names {
				out = append(out, ManagedResourceStatus{Policy: PolicyManage, Resource: corev1.ObjectReference{APIVersion: t.APIVersion, Kind: t.Kind, Name: n}})
			}
			continue
		}
		namespaces := []string{""}
		if namespaced && len(t.Namespaces) > 0 {
			namespaces = t.Namespaces
		}
		for _, ns := range namespaces {
			nri := ri
			if namespaced && ns != "" {
				nri, _, err = cl.Resource(gvk, ns)
				if err != nil {
					return nil, Classify(err, ReasonDelete, "unable to list "+t.Kind)
				}
			}
			list, err := nri.List(ctx, metav1.ListOptions{})
			if err != nil {
				return nil, Classify(err, ReasonDelete, "unable to list "+t.Kind)
			}
			for _, item := range list.Items {
				if len(t.Names) > 0 && !slices.Contains(t.Names, item.GetName()) {
					continue
				}
				out = append(out, ManagedResourceStatus{Policy: PolicyManage, Resource: corev1.ObjectReference{
					APIVersion: t.APIVersion, Kind: t.Kind, Name: item.GetName(), Namespace: item.GetNamespace()}})
			}
		}
	}
	return out, nil
}

// deleteGroup deletes each object (removing its finalizers first if
// force is set), then waits up to settle for them to be gone. It returns
// those that still exist.
func deleteGroup(ctx context.Context, cl *target.Cluster, list ManagedResourceStatusList, force bool, settle time.Duration) (ManagedResourceStatusList, error) {
	var pending ManagedResourceStatusList
	for i, mr := range list {
		gone, err := deleteOne(ctx, cl, mr, force)
		if err != nil {
			return append(pending, list[i:]...), err
		}
		if !gone {
			pending = append(pending, mr)
		}
	}
	deadline := time.Now().Add(settle)
	delay := 20 * time.Millisecond
	for len(pending) > 0 && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return pending, nil
		case <-time.After(delay):
		}
		delay = min(2*delay, 500*time.Millisecond)
		var still ManagedResourceStatusList
		for _, mr := range pending {
			_, err := cl.Get(ctx, schema.FromAPIVersionAndKind(mr.Resource.APIVersion, mr.Resource.Kind), mr.Resource.Namespace, mr.Resource.Name)
			switch {
			case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
			case err != nil:
				return pending, Classify(err, ReasonDelete, "unable to get "+refString(mr.Resource))
			default:
				still = append(still, mr)
			}
		}
		pending = still
	}
	return pending, nil
}

// deleteOne deletes an object and reports whether it is already gone,
// as the API server's answer to the DELETE tells (target.Cluster.Delete):
// most objects are, and need no further look.
func deleteOne(ctx context.Context, cl *target.Cluster, mr ManagedResourceStatus, force bool) (bool, error) {
	ref := mr.Resource
	gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
	what := refString(ref)
	gone, err := cl.Delete(ctx, gvk, ref.Namespace, ref.Name, metav1.DeleteOptions{})
	switch {
	case meta.IsNoMatchError(err):
		// The CRD is gone, and with it every object of its kind.
		return true, nil
	case apierrors.IsNotFound(err):
		return true, nil
	case err != nil:
		return false, Classify(err, ReasonDelete, "unable to delete "+what)
	case gone || !force:
		return gone, nil
	}
	ri, _, err := cl.Resource(gvk, ref.Namespace)
	if err != nil {
		return false, Classify(err, ReasonDelete, "unable to delete "+what)
	}
	live, err := ri.Get(ctx, ref.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, Classify(err, ReasonDelete, "unable to get "+what)
	}
	if len(live.GetFinalizers()) > 0 {
		live.SetFinalizers(nil)
		if _, err := ri.Update(ctx, live, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return false, Classify(err, ReasonDelete, fmt.Sprintf("unable to remove the finalizers of %s", what))
		}
	}
	return false, nil
}
