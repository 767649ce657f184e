package kube

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/target"
)

// Actions of a Change.
const (
	ActionCreate    = "create"
	ActionUpdate    = "update"
	ActionDelete    = "delete"
	ActionUnchanged = "unchanged"
)

// Change is what a run would do to one object of the cluster.
type Change struct {
	// Object names it as kubectl does: "apps/v1 Deployment default/web",
	// "v1 Namespace team" for cluster-scoped objects.
	Object string
	Action string
	// Fields are the paths an update changes ("spec.replicas",
	// "data.password"); never values, so a Secret's data stays unseen.
	Fields []string
}

// Preview asks the API server what a Reconcile of spec would do, without
// changing anything: every object is written as Apply writes it (same
// update strategy, labels and policies) with dryRun=All, and the object
// the server would store is compared with the live one. Objects the
// previous run managed that the manifests no longer hold are deleted,
// unless their policy keeps them. Objects of kinds a CRD of the same
// manifests introduces cannot be dry-run before the CRD exists: they are
// creates.
func Preview(ctx context.Context, cl *target.Cluster, spec *Spec, st State) ([]Change, error) {
	opts := spec.applyOptions()
	opts.DryRun = true
	groups, err := Plan(cl, spec.Manifests, opts.DefaultNamespace)
	if err != nil {
		return nil, err
	}
	var changes []Change
	kept := map[string]bool{}
	for _, list := range groups {
		for _, p := range list {
			kept[p.Key()] = true
			if p.newKind {
				changes = append(changes, Change{Object: objectName(p.Object), Action: ActionCreate})
				continue
			}
			out := applyObject(ctx, cl, opts, p)
			if out.err != nil {
				if p.Namespaced && namespaceMissing(ctx, cl, p.Object.GetNamespace()) {
					// Its namespace is one of the creates: so is the object.
					changes = append(changes, Change{Object: objectName(p.Object), Action: ActionCreate})
					continue
				}
				return nil, out.err
			}
			changes = append(changes, changeOf(p.Object, out.live, out.written))
		}
	}
	for _, mr := range st.Managed {
		if kept[refKey(mr.Resource)] || mr.Policy == PolicyKeep || mr.Policy == PolicyIgnore {
			continue
		}
		changes = append(changes, Change{Object: RefName(mr.Resource.APIVersion, mr.Resource.Kind, mr.Resource.Namespace, mr.Resource.Name),
			Action: ActionDelete})
	}
	sort.Slice(changes, func(i, j int) bool { return changes[i].Object < changes[j].Object })
	return changes, nil
}

func namespaceMissing(ctx context.Context, cl *target.Cluster, ns string) bool {
	ri, _, err := cl.Resource(schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, "")
	if err != nil {
		return false
	}
	_, err = ri.Get(ctx, ns, metav1.GetOptions{})
	return apierrors.IsNotFound(err)
}

// PreviewObjects compares objects with what the cluster holds, for writes
// that are not Apply's (a helm release, which patches what its chart
// renders over the live objects): each object is dry-run as a JSON merge
// patch of itself over the live one, or as a create.
func PreviewObjects(ctx context.Context, cl *target.Cluster, objects []*unstructured.Unstructured, defaultNamespace string) ([]Change, error) {
	manifests := make([]Manifest, 0, len(objects))
	for _, o := range objects {
		raw, err := o.MarshalJSON()
		if err != nil {
			return nil, err
		}
		manifests = append(manifests, Manifest{Policy: PolicyManage, Manifest: raw})
	}
	groups, err := Plan(cl, manifests, defaultNamespace)
	if err != nil {
		return nil, err
	}
	var changes []Change
	for _, list := range groups {
		for _, p := range list {
			c, err := previewPatch(ctx, cl, p)
			if err != nil {
				return nil, err
			}
			changes = append(changes, c)
		}
	}
	sort.Slice(changes, func(i, j int) bool { return changes[i].Object < changes[j].Object })
	return changes, nil
}

func previewPatch(ctx context.Context, cl *target.Cluster, p *PlannedObject) (Change, error) {
	obj := p.Object
	if p.newKind {
		return Change{Object: objectName(obj), Action: ActionCreate}, nil
	}
	ri, _, err := cl.Resource(p.GVK, obj.GetNamespace())
	if err != nil {
		return Change{}, err
	}
	dry := []string{metav1.DryRunAll}
	live, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err := ri.Create(ctx, obj, metav1.CreateOptions{DryRun: dry})
		// An object whose namespace is one of the creates is a create too.
		if err != nil && (!p.Namespaced || !namespaceMissing(ctx, cl, obj.GetNamespace())) {
			return Change{}, err
		}
		return Change{Object: objectName(obj), Action: ActionCreate}, nil
	case err != nil:
		return Change{}, err
	}
	body, err := obj.MarshalJSON()
	if err != nil {
		return Change{}, err
	}
	written, err := ri.Patch(ctx, obj.GetName(), types.MergePatchType, body, metav1.PatchOptions{DryRun: dry})
	if err != nil {
		return Change{}, err
	}
	return changeOf(obj, live, written), nil
}

// changeOf compares the object a write would store with the live one.
func changeOf(desired, live, written *unstructured.Unstructured) Change {
	c := Change{Object: objectName(desired)}
	switch {
	case live == nil:
		c.Action = ActionCreate
	case written == nil:
		// A policy (fallback owned by another, immutable) leaves it alone.
		c.Action = ActionUnchanged
	default:
		c.Fields = changedFields("", withoutBookkeeping(live.Object), withoutBookkeeping(written.Object))
		c.Action = ActionUpdate
		if len(c.Fields) == 0 {
			c.Action = ActionUnchanged
		}
	}
	return c
}

// withoutBookkeeping drops what every write changes by itself: the server's
// bookkeeping in metadata, and the status, which controllers write.
func withoutBookkeeping(obj map[string]any) map[string]any {
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		if k != "status" {
			out[k] = v
		}
	}
	if md, ok := obj["metadata"].(map[string]any); ok {
		m := make(map[string]any, len(md))
		for k, v := range md {
			switch k {
			case "resourceVersion", "generation", "managedFields", "uid", "creationTimestamp", "selfLink":
			default:
				m[k] = v
			}
		}
		out["metadata"] = m
	}
	return out
}

// changedFields lists the paths at which a and b differ, descending into
// objects, and into lists of equal length.
func changedFields(path string, a, b any) []string {
	if reflect.DeepEqual(a, b) {
		return nil
	}
	join := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	switch x := a.(type) {
	case map[string]any:
		if y, ok := b.(map[string]any); ok {
			var out []string
			keys := map[string]bool{}
			for k := range x {
				keys[k] = true
			}
			for k := range y {
				keys[k] = true
			}
			for _, k := range slices.Sorted(maps.Keys(keys)) {
				out = append(out, changedFields(join(k), x[k], y[k])...)
			}
			return out
		}
	case []any:
		if y, ok := b.([]any); ok && len(x) == len(y) {
			var out []string
			for i := range x {
				out = append(out, changedFields(path+"["+strconv.Itoa(i)+"]", x[i], y[i])...)
			}
			return out
		}
	}
	if path == "" {
		return []string{"(whole object)"}
	}
	return []string{path}
}

func objectName(u *unstructured.Unstructured) string {
	return RefName(u.GetAPIVersion(), u.GetKind(), u.GetNamespace(), u.GetName())
}

// RefName names an object as Change.Object does.
func RefName(apiVersion, kind, namespace, name string) string {
	if namespace != "" {
		name = namespace + "/" + name
	}
	return fmt.Sprintf("%s %s %s", apiVersion, kind, name)
}

// Without lists the objects of l that next does not hold.
func Without(l, next ManagedResourceStatusList) ManagedResourceStatusList {
	var out ManagedResourceStatusList
	for _, mr := range l {
		if !containsRef(next, mr.Resource) {
			out = append(out, mr)
		}
	}
	return out
}

// ObjectChanges are changes as deployers report them.
func ObjectChanges(changes []Change) []deployer.ObjectChange {
	if changes == nil {
		return nil
	}
	out := make([]deployer.ObjectChange, len(changes))
	for i, c := range changes {
		out[i] = deployer.ObjectChange{Object: c.Object, Summary: c.Summary()}
	}
	return out
}

// Summary is a change as one line: "create", "unchanged", "delete" or
// "update: spec.replicas, data.password".
func (c Change) Summary() string {
	if c.Action != ActionUpdate {
		return c.Action
	}
	return c.Action + ": " + strings.Join(c.Fields, ", ")
}
