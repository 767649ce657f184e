package lscluster

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// What an object the provider wrote holds that Landscaper acts on is
// everything but its status and the API server's bookkeeping: a field
// someone else adds (spec.importDataMappings next to the imports, a
// Context's componentVersionOverwrites, a Target's config next to its
// secretRef) changes what Landscaper runs as much as a changed one. Of the
// labels and annotations, those the provider writes count, and those of
// Landscaper's domains, which its controllers read
// (delete-without-uninstall, encompassed-by, the data object labels its
// cleanup selects by): others' keys (a team's note, another tool's
// tracking label) mean nothing to Landscaper and are left alone.

// transientAnnotations are the annotations of Landscaper's domain that
// its controllers set on a root Installation during a job and remove once
// they have processed it, by value ("" for any): no drift, and nothing
// to take back.
var transientAnnotations = map[string]string{
	// The provider's Reconcile and Landscaper's automatic reconcile,
	// retries and dependency triggers start a job with it; "interrupt"
	// or "force-reconcile" are another matter.
	OperationAnnotation: ReconcileOperation,
	// Landscaper's retry says why it set the reconcile operation.
	group + "/reconcile-reason": "",
}

// landscaperKey tells whether a label or annotation key is of Landscaper's
// domains (landscaper.gardener.cloud and its subdomains).
func landscaperKey(key string) bool {
	prefix, _, ok := strings.Cut(key, "/")
	return ok && (prefix == group || strings.HasSuffix(prefix, "."+group))
}

// counts tells whether a label or annotation of the live object, which
// the provider does not write, matters to Landscaper.
func counts(key, value string) bool {
	if want, ok := transientAnnotations[key]; ok && (want == "" || want == value) {
		return false
	}
	return landscaperKey(key)
}

// view is the live object as far as Landscaper acts on it (see above),
// shaped as the written desired: the apiVersion, kind, name and
// namespace, every other top-level field but status, and the labels and
// annotations desired writes or that count.
func view(desired, live map[string]any) map[string]any {
	out := make(map[string]any, len(live))
	for k, v := range live {
		if k != "metadata" && k != "status" {
			out[k] = v
		}
	}
	lm, _ := live["metadata"].(map[string]any)
	dm, _ := desired["metadata"].(map[string]any)
	meta := map[string]any{}
	for _, k := range []string{"name", "namespace"} {
		if v, ok := lm[k]; ok {
			meta[k] = v
		}
	}
	for _, k := range []string{"labels", "annotations"} {
		have, _ := lm[k].(map[string]any)
		want, _ := dm[k].(map[string]any)
		kept := map[string]any{}
		for key, v := range have {
			s, _ := v.(string)
			if _, written := want[key]; written || counts(key, s) {
				kept[key] = v
			}
		}
		if len(kept) > 0 || want != nil {
			meta[k] = kept
		}
	}
	out["metadata"] = meta
	return out
}

// restorePatch is the JSON merge patch that gives the live object back
// what desired writes, nil when it holds that already: fields others
// added are removed (null), changed ones set. Status and the API server's
// metadata are left, and of the labels and annotations only those desired
// writes or that count (view).
func restorePatch(desired, live map[string]any) map[string]any {
	patch := mergeDiff(withoutMeta(desired), withoutMeta(view(desired, live)))
	dm, _ := desired["metadata"].(map[string]any)
	lm, _ := view(desired, live)["metadata"].(map[string]any)
	meta := map[string]any{}
	for _, k := range []string{"labels", "annotations"} {
		want, _ := dm[k].(map[string]any)
		have, _ := lm[k].(map[string]any)
		if want == nil {
			// An empty map: every label that counts is removed.
			want = map[string]any{}
		}
		if have == nil {
			have = map[string]any{}
		}
		if d := mergeDiff(want, have); d != nil {
			meta[k] = d
		}
	}
	if len(meta) > 0 {
		if patch == nil {
			patch = map[string]any{}
		}
		patch["metadata"] = meta
	}
	return patch
}

func withoutMeta(body map[string]any) map[string]any {
	out := maps.Clone(body)
	delete(out, "metadata")
	delete(out, "status")
	return out
}

// mergeDiff is the merge patch turning have into want, nil when they are
// equal. Objects are patched key by key; anything else is set whole (a
// list is replaced). An empty value have holds where want holds none is
// equal.
func mergeDiff(want, have map[string]any) map[string]any {
	patch := map[string]any{}
	for k, hv := range have {
		wv, ok := want[k]
		if !ok {
			if !empty(hv) {
				patch[k] = nil
			}
			continue
		}
		wm, wok := wv.(map[string]any)
		hm, hok := hv.(map[string]any)
		switch {
		case wok && hok:
			if d := mergeDiff(wm, hm); d != nil {
				patch[k] = d
			}
		case !sameJSON(wv, hv):
			patch[k] = wv
		}
	}
	for k, wv := range want {
		if _, ok := have[k]; !ok {
			patch[k] = wv
		}
	}
	if len(patch) == 0 {
		return nil
	}
	return patch
}

// empty tells a value that means what its absence means: Landscaper's
// controllers update an Installation whole from their Go types, which
// write an empty spec.exports or spec.imports the provider left out.
func empty(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case map[string]any:
		return len(v) == 0
	case []any:
		return len(v) == 0
	}
	return false
}

// Restore takes back from the objects what others changed or added to
// them since they were written, as far as Landscaper acts on it (view):
// server-side apply takes over the fields the provider writes, and leaves
// those another field manager added. An object is patched only as read
// (its resourceVersion), and read again when Landscaper wrote it in
// between (the Installation's status). An object another owner wrote
// since is an error, a gone one is left to the next apply. Call it after
// Apply, before the job starts. It returns the keys of the objects it
// patched: what Landscaper may have run with, so a job is owed.
func (w *Writer) Restore(ctx context.Context, own Owner, objs []Object) ([]string, error) {
	var restored []string
	for _, o := range objs {
		ref := o.Ref()
		gvr, ok := kindGVR[o.Kind]
		if !ok {
			return restored, fmt.Errorf("%s: not a kind a remote installation writes", o.Key())
		}
		res := w.dynamic.Resource(gvr).Namespace(ref.Namespace)
		what := fmt.Sprintf("%s %s/%s", o.Kind, ref.Namespace, o.Name)
		for attempt := 0; ; attempt++ {
			live, err := res.Get(ctx, o.Name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				break
			}
			if err != nil {
				return restored, w.callError(err, "reading "+what)
			}
			if why := foreign(live, own); why != "" {
				// Written over since Apply: the apply stops, and what
				// it wrote stays recorded.
				return restored, fmt.Errorf("%s changed owner since it was written: %s", what, describe(ref, why))
			}
			patch := restorePatch(o.Body, live.Object)
			if patch == nil {
				break
			}
			meta, _ := patch["metadata"].(map[string]any)
			if meta == nil {
				meta = map[string]any{}
			}
			meta["resourceVersion"] = live.GetResourceVersion()
			patch["metadata"] = meta
			body, err := json.Marshal(patch)
			if err != nil {
				return restored, err
			}
			_, err = res.Patch(ctx, o.Name, types.MergePatchType, body, metav1.PatchOptions{FieldManager: FieldManager})
			if err == nil {
				restored = append(restored, o.Key())
				break
			}
			if apierrors.IsNotFound(err) {
				break
			}
			if !apierrors.IsConflict(err) || attempt == 4 {
				return restored, w.callError(err, "taking back what others changed on "+what)
			}
		}
	}
	return restored, nil
}
