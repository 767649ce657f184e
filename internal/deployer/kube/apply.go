package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"dario.cat/mergo"
	jsonpatch "github.com/evanphx/json-patch/v5"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/target"
)

// ApplyOptions say how manifests are applied.
type ApplyOptions struct {
	// ManagedLabel is the label key marking an object as managed by a
	// deploy item (Landscaper's manifest deployer uses
	// ManifestManagedLabel); Owner is its value for this item. Objects of
	// policy fallback labelled with another value are left alone.
	ManagedLabel string
	Owner        string
	// AdoptFrom is another value of ManagedLabel whose objects count as
	// this item's: those of the Landscaper DeployItem an imported item
	// takes over. Such an object is updated in place whatever its policy
	// (an immutable one only has its label changed) and labelled Owner.
	AdoptFrom string
	// AdoptObjects are objects that count as this item's in the same way:
	// those the state of a resource moved from another Terraform provider
	// recorded. They carry no label to know them by, so the exact objects
	// (group, kind, namespace, name) say which are adopted.
	AdoptObjects []deployer.ObjectRef
	// Labels are added to every object.
	Labels map[string]string
	// UpdateStrategy applies to objects that exist; empty means update.
	UpdateStrategy UpdateStrategy
	// DefaultNamespace is where namespaced objects without a namespace go;
	// empty means the cluster's (the kubeconfig context's, or "default").
	DefaultNamespace string
	// DeletionGroupsDuringUpdate orders the deletion of objects no longer
	// in the manifests; empty means Landscaper's default order.
	DeletionGroupsDuringUpdate []DeletionGroupDefinition
	// CRDWait bounds the wait for a CRD applied in this run to become
	// established before objects of its kind are applied; zero means 30s.
	// A CRD still not established then is a transient error.
	CRDWait time.Duration
	// DryRun sends every write with dryRun=All: the API server validates,
	// defaults and admits it, and returns what would be stored, without
	// storing it (see Preview).
	DryRun bool
	// Concurrency bounds the objects of one group written at once; zero
	// means 8.
	Concurrency int
}

// ManifestManagedLabel is the label Landscaper's manifest deployer puts on
// every object it manages.
const ManifestManagedLabel = "manifest.deployer.landscaper.gardener.cloud/deployitem"

// Apply groups, in the order they are applied: CRDs, then cluster-scoped
// objects (such as namespaces), then namespaced objects.
const (
	groupCRD = iota
	groupClusterScoped
	groupNamespaced
	numGroups
)

// PlannedObject is one manifest prepared for applying.
type PlannedObject struct {
	Manifest Manifest
	// Object is the decoded manifest with its namespace settled.
	Object *unstructured.Unstructured
	GVK    schema.GroupVersionKind
	// Namespaced is known from discovery or, for kinds of CRDs applied in
	// the same run, from the CRD.
	Namespaced bool
	// newKind is set when the kind was not served when the plan was made.
	newKind bool
}

// Key identifies the object: group, kind, namespace and name.
func (p *PlannedObject) Key() string {
	return objectKey(p.GVK.GroupKind(), p.Object.GetNamespace(), p.Object.GetName())
}

func objectKey(gk schema.GroupKind, namespace, name string) string {
	return gk.String() + "/" + namespace + "/" + name
}

func refKey(ref corev1.ObjectReference) string {
	return objectKey(schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind).GroupKind(), ref.Namespace, ref.Name)
}

// Plan decodes and expands the manifests, settles each object's namespace
// and sorts them into Landscaper's apply groups. Kinds that are neither
// served nor defined by a CRD among the manifests are a transient error:
// another deploy item may be about to install their CRD.
func Plan(cl *target.Cluster, manifests []Manifest, defaultNamespace string) ([numGroups][]*PlannedObject, error) {
	if defaultNamespace == "" {
		defaultNamespace = cl.DefaultNamespace
	}
	return plan(manifests, defaultNamespace, func(gvk schema.GroupVersionKind) (bool, error) {
		m, err := cl.Mapping(gvk)
		if err != nil {
			return false, err
		}
		return m.Scope.Name() == meta.RESTScopeNameNamespace, nil
	})
}

// plan is Plan with the scope of kinds looked up by namespaced.
func plan(manifests []Manifest, defaultNamespace string, namespaced func(schema.GroupVersionKind) (bool, error)) ([numGroups][]*PlannedObject, error) {
	var groups [numGroups][]*PlannedObject
	expanded, err := ExpandManifests(manifests)
	if err != nil {
		return groups, configError("%v", err)
	}
	crdScopes := map[schema.GroupKind]bool{}
	var rest []*PlannedObject
	for i, m := range expanded {
		if m.Policy == PolicyIgnore {
			continue
		}
		u, err := DecodeObject(m.Manifest)
		if err != nil {
			return groups, configError("manifests[%d]: %v", i, err)
		}
		p := &PlannedObject{Manifest: m, Object: u, GVK: u.GroupVersionKind()}
		if p.GVK.GroupKind() == crdGroupKind {
			group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
			kind, _, _ := unstructured.NestedString(u.Object, "spec", "names", "kind")
			scope, _, _ := unstructured.NestedString(u.Object, "spec", "scope")
			crdScopes[schema.GroupKind{Group: group, Kind: kind}] = scope == "Namespaced"
			u.SetNamespace("")
			groups[groupCRD] = append(groups[groupCRD], p)
			continue
		}
		rest = append(rest, p)
	}
	for _, p := range rest {
		ns, err := namespaced(p.GVK)
		switch {
		case err == nil:
			p.Namespaced = ns
		case meta.IsNoMatchError(err):
			ns, ok := crdScopes[p.GVK.GroupKind()]
			if !ok {
				return groups, Classify(err, ReasonApply, fmt.Sprintf("%s %s", p.GVK.Kind, p.Object.GetName()))
			}
			p.Namespaced, p.newKind = ns, true
		default:
			return groups, Classify(err, ReasonApply, "discovering the API")
		}
		if !p.Namespaced {
			p.Object.SetNamespace("")
			groups[groupClusterScoped] = append(groups[groupClusterScoped], p)
			continue
		}
		if p.Object.GetNamespace() == "" {
			p.Object.SetNamespace(defaultNamespace)
		}
		groups[groupNamespaced] = append(groups[groupNamespaced], p)
	}
	return groups, nil
}

var crdGroupKind = schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}

// Applied is what applying manifests did.
type Applied struct {
	// Managed lists the objects now managed, in apply order, sorted within
	// each group.
	Managed ManagedResourceStatusList
	// Written holds, by key, the object as last returned by the API server
	// for every object this run created or updated.
	Written map[string]*unstructured.Unstructured
	// Patches lists the keys of objects whose patchAfterDeployment is due.
	Patches []string
}

// Apply creates or updates the manifests' objects group by group, as
// Landscaper's manifest applier does, and records them as managed. Objects
// within a group are written concurrently. A group with failures stops the
// run; the error then names every failed object, and Managed still holds
// the objects of previous that were not confirmed, so nothing is forgotten.
func Apply(ctx context.Context, cl *target.Cluster, opts ApplyOptions, manifests []Manifest, previous ManagedResourceStatusList) (*Applied, error) {
	groups, err := Plan(cl, manifests, opts.DefaultNamespace)
	if err != nil {
		return &Applied{Managed: previous}, err
	}
	res := &Applied{Written: map[string]*unstructured.Unstructured{}}
	conc := opts.Concurrency
	if conc <= 0 {
		conc = 8
	}
	for g, list := range groups {
		if g == groupClusterScoped || g == groupNamespaced {
			if err := waitForNewKinds(ctx, cl, opts, groups[groupCRD], list); err != nil {
				res.Managed = union(res.Managed, previous)
				return res, err
			}
		}
		outs := make([]applyOutcome, len(list))
		sem := make(chan struct{}, conc)
		var wg sync.WaitGroup
		for i, p := range list {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				outs[i] = applyObject(ctx, cl, opts, p)
			}()
		}
		wg.Wait()
		var errs []*core.Error
		var managed ManagedResourceStatusList
		for i, o := range outs {
			if o.err != nil {
				errs = append(errs, o.err)
				continue
			}
			if o.managed == nil {
				continue
			}
			managed = append(managed, *o.managed)
			if o.written != nil {
				res.Written[list[i].Key()] = o.written
			}
			if o.patch {
				res.Patches = append(res.Patches, list[i].Key())
			}
		}
		sortManaged(managed)
		res.Managed = append(res.Managed, managed...)
		if len(errs) > 0 {
			res.Managed = union(res.Managed, previous)
			return res, joinErrors(errs)
		}
	}
	return res, nil
}

// sortManaged orders one group's records the same way every run.
func sortManaged(l ManagedResourceStatusList) {
	slices.SortFunc(l, func(a, b ManagedResourceStatus) int {
		return strings.Compare(a.Resource.APIVersion+"/"+refKey(a.Resource), b.Resource.APIVersion+"/"+refKey(b.Resource))
	})
}

// union appends the records of extra that l does not already hold.
func union(l, extra ManagedResourceStatusList) ManagedResourceStatusList {
	out := slices.Clone(l)
	for _, mr := range extra {
		if !containsRef(out, mr.Resource) {
			out = append(out, mr)
		}
	}
	return out
}

// containsRef is Landscaper's identity of managed objects: the same UID, or
// the same group, kind, namespace and name (an object recreated with a new
// UID is still the same managed object).
func containsRef(l ManagedResourceStatusList, ref corev1.ObjectReference) bool {
	for _, mr := range l {
		if ref.UID != "" && mr.Resource.UID == ref.UID {
			return true
		}
		if refKey(mr.Resource) == refKey(ref) {
			return true
		}
	}
	return false
}

// joinErrors merges the errors of one group: transient only if every one
// is, so a terminal problem is not retried for nothing; codes are merged.
func joinErrors(errs []*core.Error) *core.Error {
	if len(errs) == 1 {
		return errs[0]
	}
	out := &core.Error{Reason: errs[0].Reason, Transient: true, Unreachable: true}
	var msgs []string
	for _, e := range errs {
		msgs = append(msgs, e.Message)
		out.Transient = out.Transient && e.Transient
		out.Unreachable = out.Unreachable && e.Unreachable
		for _, c := range e.Codes {
			if !slices.Contains(out.Codes, c) {
				out.Codes = append(out.Codes, c)
			}
		}
	}
	out.Message = strings.Join(msgs, "; ")
	return out
}

type applyOutcome struct {
	managed *ManagedResourceStatus
	// live is the object before the write, nil when it was created.
	live    *unstructured.Unstructured
	written *unstructured.Unstructured
	patch   bool
	err     *core.Error
}

// applyObject creates or updates one object as Landscaper does.
func applyObject(ctx context.Context, cl *target.Cluster, opts ApplyOptions, p *PlannedObject) applyOutcome {
	obj := p.Object.DeepCopy()
	what := describe(obj)
	fail := func(err error, doing string) applyOutcome {
		return applyOutcome{err: Classify(err, ReasonApply, fmt.Sprintf("unable to %s %s", doing, what))}
	}
	ri, _, err := cl.Resource(p.GVK, obj.GetNamespace())
	if err != nil {
		return fail(err, "find the API of")
	}
	m := p.Manifest
	record := func(u *unstructured.Unstructured) *ManagedResourceStatus {
		return &ManagedResourceStatus{
			AnnotateBeforeDelete: m.AnnotateBeforeDelete,
			PatchBeforeDelete:    m.PatchBeforeDelete,
			Policy:               policyOrDefault(m.Policy),
			Resource:             objectReference(u),
		}
	}
	live, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		injectLabels(obj, opts)
		if len(m.AnnotateBeforeCreate) > 0 {
			a := obj.GetAnnotations()
			if a == nil {
				a = map[string]string{}
			}
			maps.Copy(a, m.AnnotateBeforeCreate)
			obj.SetAnnotations(a)
		}
		created, err := ri.Create(ctx, obj, metav1.CreateOptions{DryRun: dryRun(opts)})
		if err != nil {
			return fail(err, "create")
		}
		return applyOutcome{managed: record(created), written: created, patch: len(m.PatchAfterDeployment) > 0}
	}
	if err != nil {
		return fail(err, "get")
	}
	mr := record(live)
	adopted := adopts(opts, live)
	if m.Policy == PolicyFallback && !adopted && live.GetLabels()[opts.ManagedLabel] != opts.Owner {
		// Someone else manages it: not ours to update or delete.
		return applyOutcome{live: live}
	}
	if m.Policy == PolicyImmutable {
		if adopted {
			// Its content stays as it is; only who owns it changes.
			if _, err := ri.Patch(ctx, obj.GetName(), types.MergePatchType, ownerPatch(opts), metav1.PatchOptions{DryRun: dryRun(opts)}); err != nil {
				return fail(err, "relabel")
			}
		}
		return applyOutcome{managed: mr, live: live}
	}
	body, patch, err := updateFor(opts, live, obj)
	if err != nil {
		return applyOutcome{err: configError("%s: %v", what, err)}
	}
	var written *unstructured.Unstructured
	if patch != nil {
		written, err = ri.Patch(ctx, obj.GetName(), types.MergePatchType, patch, metav1.PatchOptions{DryRun: dryRun(opts)})
		if err != nil {
			return fail(err, "patch")
		}
	} else {
		written, err = ri.Update(ctx, body, metav1.UpdateOptions{DryRun: dryRun(opts)})
		if err != nil {
			return fail(err, "update")
		}
	}
	return applyOutcome{managed: mr, live: live, written: written, patch: len(m.PatchAfterDeployment) > 0}
}

// adopts reports whether live is an object the item takes over.
func adopts(opts ApplyOptions, live *unstructured.Unstructured) bool {
	return adopted(opts.ManagedLabel, opts.AdoptFrom, opts.AdoptObjects, live)
}

// adopted reports whether live is labelled as an object of the Landscaper
// DeployItem taken over (from), or is one of the objects a moved resource
// recorded.
func adopted(label, from string, objects []deployer.ObjectRef, live *unstructured.Unstructured) bool {
	if from != "" && label != "" && live.GetLabels()[label] == from {
		return true
	}
	key := objectKey(live.GroupVersionKind().GroupKind(), live.GetNamespace(), live.GetName())
	for _, o := range objects {
		if objectKey(schema.FromAPIVersionAndKind(o.APIVersion, o.Kind).GroupKind(), o.Namespace, o.Name) == key {
			return true
		}
	}
	return false
}

// ownerPatch is a JSON merge patch that sets the labels injectLabels sets.
func ownerPatch(opts ApplyOptions) []byte {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	injectLabels(u, opts)
	b, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": u.GetLabels()}})
	return b
}

func dryRun(opts ApplyOptions) []string {
	if opts.DryRun {
		return []string{metav1.DryRunAll}
	}
	return nil
}

// updateFor computes how an existing object is updated with a manifest
// under the options' strategy: a replacement body (update, merge,
// mergeOverwrite) or a JSON merge patch (patch).
func updateFor(opts ApplyOptions, live, manifest *unstructured.Unstructured) (*unstructured.Unstructured, []byte, error) {
	obj := manifest.DeepCopy()
	switch opts.UpdateStrategy {
	case "", StrategyUpdate, StrategyPatch:
		injectLabels(obj, opts)
		if err := keepRequiredFields(live, obj); err != nil {
			return nil, nil, err
		}
		if opts.UpdateStrategy != StrategyPatch {
			return obj, nil, nil
		}
		patch, err := mergePatch(live, obj)
		if err != nil {
			return nil, nil, fmt.Errorf("unable to compute the patch: %w", err)
		}
		return nil, patch, nil
	case StrategyMerge, StrategyMergeOverwrite:
		var mopts []func(*mergo.Config)
		if opts.UpdateStrategy == StrategyMergeOverwrite {
			mopts = append(mopts, mergo.WithOverride)
		}
		merged := live.DeepCopy()
		if err := mergo.Merge(&merged.Object, obj.Object, mopts...); err != nil {
			return nil, nil, fmt.Errorf("unable to merge the manifest into the object: %w", err)
		}
		injectLabels(merged, opts)
		return merged, nil, nil
	}
	return nil, nil, fmt.Errorf("%q is not a valid update strategy", opts.UpdateStrategy)
}

func policyOrDefault(p Policy) Policy {
	if p == "" {
		return PolicyManage
	}
	return p
}

func objectReference(u *unstructured.Unstructured) corev1.ObjectReference {
	return corev1.ObjectReference{
		APIVersion: u.GroupVersionKind().GroupVersion().String(),
		Kind:       u.GetKind(),
		Name:       u.GetName(),
		Namespace:  u.GetNamespace(),
		UID:        u.GetUID(),
	}
}

// injectLabels adds the configured labels and the managed label.
func injectLabels(u *unstructured.Unstructured, opts ApplyOptions) {
	if len(opts.Labels) == 0 && opts.ManagedLabel == "" {
		return
	}
	l := u.GetLabels()
	if l == nil {
		l = map[string]string{}
	}
	maps.Copy(l, opts.Labels)
	if opts.ManagedLabel != "" {
		l[opts.ManagedLabel] = opts.Owner
	}
	u.SetLabels(l)
}

// keepRequiredFields copies from the live object what a replacement must
// not change or must carry: the resourceVersion (optimistic locking), a
// Job's selector and template labels (generated, immutable), a Service's
// clusterIP (allocated, immutable) and a ServiceAccount's secrets when the
// manifest names none.
func keepRequiredFields(live, obj *unstructured.Unstructured) error {
	copyNested := func(path ...string) error {
		v, found, err := unstructured.NestedFieldNoCopy(live.Object, path...)
		if err != nil || !found {
			return err
		}
		return unstructured.SetNestedField(obj.Object, runtime.DeepCopyJSONValue(v), path...)
	}
	var err error
	switch live.GroupVersionKind().GroupKind().String() {
	case "Job.batch":
		err = errors.Join(copyNested("spec", "selector"), copyNested("spec", "template", "metadata", "labels"))
	case "Service":
		err = copyNested("spec", "clusterIP")
	case "ServiceAccount":
		if s, found, _ := unstructured.NestedSlice(obj.Object, "secrets"); !found || len(s) == 0 {
			if ls, found, _ := unstructured.NestedSlice(live.Object, "secrets"); found && len(ls) > 0 {
				err = unstructured.SetNestedSlice(obj.Object, ls, "secrets")
			}
		}
	}
	if err != nil {
		return err
	}
	obj.SetResourceVersion(live.GetResourceVersion())
	return nil
}

// mergePatch is the JSON merge patch from live to obj, as controller
// runtime's MergeFrom computes it for Landscaper's patch strategy.
func mergePatch(live, obj *unstructured.Unstructured) ([]byte, error) {
	from, err := json.Marshal(live.Object)
	if err != nil {
		return nil, err
	}
	to, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, err
	}
	return jsonpatch.CreateMergePatch(from, to)
}

// waitForNewKinds waits, before a group is applied, until every kind of
// the group that was not served when the plan was made is served: its CRD
// (applied in the CRD group) is established and discovery knows it.
func waitForNewKinds(ctx context.Context, cl *target.Cluster, opts ApplyOptions, crds, list []*PlannedObject) error {
	need := map[schema.GroupKind]bool{}
	for _, p := range list {
		if p.newKind {
			need[p.GVK.GroupKind()] = true
		}
	}
	if len(need) == 0 {
		return nil
	}
	wait := opts.CRDWait
	if wait <= 0 {
		wait = 30 * time.Second
	}
	deadline := time.Now().Add(wait)
	ri, _, err := cl.Resource(crdGroupKind.WithVersion("v1"), "")
	if err != nil {
		return Classify(err, ReasonCRD, "")
	}
	delay := 50 * time.Millisecond
	for {
		pending := ""
		for _, c := range crds {
			group, _, _ := unstructured.NestedString(c.Object.Object, "spec", "group")
			kind, _, _ := unstructured.NestedString(c.Object.Object, "spec", "names", "kind")
			if !need[schema.GroupKind{Group: group, Kind: kind}] {
				continue
			}
			live, err := ri.Get(ctx, c.Object.GetName(), metav1.GetOptions{})
			if err != nil {
				return Classify(err, ReasonCRD, "reading CRD "+c.Object.GetName())
			}
			if !crdEstablished(live) {
				pending = c.Object.GetName()
				break
			}
		}
		if pending == "" {
			cl.Invalidate()
			for _, p := range list {
				if p.newKind {
					if _, err := cl.Mapping(p.GVK); err != nil {
						pending = p.GVK.String()
						break
					}
				}
			}
			if pending == "" {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return core.Transient(ReasonCRD, fmt.Sprintf("%s is not established yet", pending))
		}
		select {
		case <-ctx.Done():
			return core.Transient(ReasonCRD, fmt.Sprintf("%s is not established yet", pending))
		case <-time.After(delay):
		}
		delay = min(2*delay, time.Second)
	}
}

func crdEstablished(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if ok && m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}

// PatchAfterDeployment merges each due patchAfterDeployment (overwriting)
// into the live object and replaces it, as Landscaper does once everything
// is ready and exported. It returns the written objects by key.
func PatchAfterDeployment(ctx context.Context, cl *target.Cluster, manifests []Manifest, defaultNamespace string, keys []string) (map[string]*unstructured.Unstructured, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	groups, err := Plan(cl, manifests, defaultNamespace)
	if err != nil {
		return nil, err
	}
	due := map[string]bool{}
	for _, k := range keys {
		due[k] = true
	}
	out := map[string]*unstructured.Unstructured{}
	for _, list := range groups {
		for _, p := range list {
			if !due[p.Key()] || len(p.Manifest.PatchAfterDeployment) == 0 {
				continue
			}
			w, err := patchObject(ctx, cl, p.GVK, p.Object.GetNamespace(), p.Object.GetName(), nil, p.Manifest.PatchAfterDeployment)
			if err != nil {
				return out, Classify(err, ReasonPatch, "unable to patch "+describe(p.Object))
			}
			if w != nil {
				out[p.Key()] = w
			}
		}
	}
	return out, nil
}

// patchObject merges annotations and a patch (overwriting) into the live
// object and replaces it. A missing object is not an error: it returns
// nil, nil.
func patchObject(ctx context.Context, cl *target.Cluster, gvk schema.GroupVersionKind, namespace, name string,
	annotations map[string]string, patch json.RawMessage) (*unstructured.Unstructured, error) {
	ri, _, err := cl.Resource(gvk, namespace)
	if err != nil {
		return nil, err
	}
	live, err := ri.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if len(annotations) > 0 {
		a := live.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		maps.Copy(a, annotations)
		live.SetAnnotations(a)
	}
	if len(patch) > 0 {
		var p map[string]any
		if err := utiljson.Unmarshal(patch, &p); err != nil {
			return nil, configError("the patch of %s is not an object: %v", describe(live), err)
		}
		if err := mergo.Merge(&live.Object, p, mergo.WithOverride); err != nil {
			return nil, configError("unable to merge the patch into %s: %v", describe(live), err)
		}
	}
	return ri.Update(ctx, live, metav1.UpdateOptions{})
}
