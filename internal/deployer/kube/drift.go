package kube

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"dario.cat/mergo"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/target"
)

// Drift detection compares the live object with itself: when a run wrote
// an object, the fields its manifest sets (plus its patchAfterDeployment,
// and the labels the deployer adds) are read back from the API server's
// answer and hashed. A later check hashes the same fields of the live
// object again. Comparing live with live, not manifest with live, is what
// makes this exact: the API server normalises what it stores (quantities,
// defaults inside lists, dropped empty maps), and both hashes see the same
// normalisation. Fields the manifest does not set (status, fields other
// controllers own) are not looked at, so nothing but a change to what the
// deployer applied is reported.
//
// Only objects the deployer would repair are fingerprinted: objects of
// policy immutable and objects updated by the merge strategy (which keeps
// live values) are only checked for existence.

// absent marks a field the manifest sets that the live object lacks.
const absent = "\x00absent"

// project keeps of live only what desired sets: maps are walked key by
// key, anything else (lists, scalars) is taken whole from live.
func project(desired, live any) any {
	dm, ok := desired.(map[string]any)
	if !ok {
		return live
	}
	lm, ok := live.(map[string]any)
	if !ok {
		return live
	}
	out := make(map[string]any, len(dm))
	for k, dv := range dm {
		lv, present := lm[k]
		if !present {
			out[k] = absent
			continue
		}
		out[k] = project(dv, lv)
	}
	return out
}

// Fingerprint hashes the fields of live that desired sets, ignoring the
// status and the fields the API server maintains.
func Fingerprint(desired, live *unstructured.Unstructured) string {
	d := desired.DeepCopy()
	delete(d.Object, "status")
	for _, f := range []string{"resourceVersion", "uid", "generation", "creationTimestamp", "managedFields", "selfLink", "deletionTimestamp"} {
		unstructured.RemoveNestedField(d.Object, "metadata", f)
	}
	b, err := json.Marshal(project(d.Object, live.Object))
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// desiredObjects returns, by key, what a run writes for each manifest whose
// fields are fingerprinted: the manifest with the deployer's labels and
// its patchAfterDeployment merged in.
func desiredObjects(cl *target.Cluster, spec *Spec) (map[string]*unstructured.Unstructured, error) {
	groups, err := Plan(cl, spec.Manifests, spec.DefaultNamespace)
	if err != nil {
		return nil, err
	}
	out := map[string]*unstructured.Unstructured{}
	for _, list := range groups {
		for _, p := range list {
			if p.Manifest.Policy == PolicyImmutable || spec.UpdateStrategy == StrategyMerge {
				continue
			}
			u := p.Object.DeepCopy()
			injectLabels(u, spec.applyOptions())
			if len(p.Manifest.PatchAfterDeployment) > 0 {
				var patch map[string]any
				if err := utiljson.Unmarshal(p.Manifest.PatchAfterDeployment, &patch); err == nil {
					_ = mergo.Merge(&u.Object, patch, mergo.WithOverride)
				}
			}
			out[p.Key()] = u
		}
	}
	return out, nil
}

// fingerprints hashes the written objects that have a desired form.
func fingerprints(desired map[string]*unstructured.Unstructured, written map[string]*unstructured.Unstructured, into map[string]string) map[string]string {
	if into == nil {
		into = map[string]string{}
	}
	for k, w := range written {
		if d, ok := desired[k]; ok && w != nil {
			into[k] = Fingerprint(d, w)
		}
	}
	return into
}

// maxDriftLines bounds the description of drift, so a deleted namespace
// full of objects reads as a summary.
const maxDriftLines = 5

// Drift checks, without changing anything, that every object a successful
// run left is still in place: each managed object (except those of policy
// ignore) must exist, and the fields a run applied to a fingerprinted
// object must be unchanged. It returns a description of what changed, or
// "" when nothing did.
func Drift(ctx context.Context, cl *target.Cluster, spec *Spec, st State) (string, error) {
	if len(st.Managed) == 0 {
		return "", nil
	}
	desired, err := desiredObjects(cl, spec)
	if err != nil {
		// The manifests no longer plan (a kind is gone): the objects are
		// still checked for existence.
		desired = nil
	}
	listed, err := listManaged(ctx, cl, spec, st.Managed)
	if err != nil {
		return "", err
	}
	var lines []string
	for _, mr := range st.Managed {
		if mr.Policy == PolicyIgnore {
			continue
		}
		ref := mr.Resource
		what := refString(ref)
		live, ok := listed[refKey(ref)]
		if !ok {
			live, err = cl.Get(ctx, schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind), ref.Namespace, ref.Name)
		}
		switch {
		case apierrors.IsNotFound(err):
			lines = append(lines, what+" was deleted")
			continue
		case meta.IsNoMatchError(err):
			lines = append(lines, what+" is gone: its kind is no longer served")
			continue
		case err != nil:
			return "", Classify(err, ReasonDrift, "unable to get "+what)
		}
		if live.GetDeletionTimestamp() != nil {
			lines = append(lines, what+" is being deleted")
			continue
		}
		key := refKey(ref)
		want, ok := st.Fingerprints[key]
		d, known := desired[key]
		if !ok || !known {
			continue
		}
		if Fingerprint(d, live) != want {
			lines = append(lines, what+" was changed")
		}
	}
	if len(lines) > maxDriftLines {
		lines = append(lines[:maxDriftLines], fmt.Sprintf("and %d more", len(lines)-maxDriftLines))
	}
	return strings.Join(lines, "; "), nil
}

// listManaged reads, with one request per kind and namespace, the managed
// objects that carry the managed label, so checking many objects of one
// kind costs one list instead of one get each. Objects it does not return
// (unlabelled ones, or ones that are gone) are read one by one.
func listManaged(ctx context.Context, cl *target.Cluster, spec *Spec, managed ManagedResourceStatusList) (map[string]*unstructured.Unstructured, error) {
	out := map[string]*unstructured.Unstructured{}
	if spec.ManagedLabel == "" {
		return out, nil
	}
	type bucket struct {
		gvk schema.GroupVersionKind
		ns  string
	}
	count := map[bucket]int{}
	for _, mr := range managed {
		count[bucket{schema.FromAPIVersionAndKind(mr.Resource.APIVersion, mr.Resource.Kind), mr.Resource.Namespace}]++
	}
	selector := labels.SelectorFromSet(labels.Set{spec.ManagedLabel: spec.Owner}).String()
	for b, n := range count {
		if n < 2 {
			continue
		}
		ri, _, err := cl.Resource(b.gvk, b.ns)
		if err != nil {
			continue
		}
		list, err := ri.List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return nil, Classify(err, ReasonDrift, "unable to list "+b.gvk.Kind)
		}
		for i := range list.Items {
			u := &list.Items[i]
			out[objectKey(b.gvk.GroupKind(), u.GetNamespace(), u.GetName())] = u
		}
	}
	return out, nil
}

// Fingerprints reads the objects of spec's manifests as they are now and
// hashes the fields each manifest sets, for Drift. It is for deployers
// that do not write the objects through Apply (helm writes a release's
// objects itself): they record it after their run instead. Objects that
// do not exist get no fingerprint; Drift still misses them.
func Fingerprints(ctx context.Context, cl *target.Cluster, spec *Spec) (map[string]string, error) {
	desired, err := desiredObjects(cl, spec)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(desired))
	for k, d := range desired {
		live, err := cl.Get(ctx, d.GroupVersionKind(), d.GetNamespace(), d.GetName())
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, Classify(err, ReasonDrift, "unable to get "+describe(d))
		}
		out[k] = Fingerprint(d, live)
	}
	return out, nil
}
