package lscluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

// FieldManager is the one field manager of everything a remote
// installation writes.
const FieldManager = "terraform-provider-landscaper"

// Writer hands installations to a Landscaper resource cluster: it writes
// their objects (Spec.Objects) with server-side apply, starts Landscaper's
// jobs and waits for them, reads what they exported, and deletes them. It
// reads with the Reader it embeds.
type Writer struct {
	*Reader
	// Poll is how often a wait looks at the Installation; zero means
	// every half second.
	Poll time.Duration
	// afterClaim, in tests, runs between Apply's reads and its writes.
	afterClaim func()
}

// NewWriter returns a writer of the cluster the config points to. It does
// not contact the cluster yet.
func NewWriter(config *rest.Config) (*Writer, error) {
	r, err := New(config)
	if err != nil {
		return nil, err
	}
	return &Writer{Reader: r}, nil
}

var kindGVR = map[string]schema.GroupVersionResource{
	KindInstallation: installationsGVR, KindTarget: targetsGVR, KindDataObject: dataObjectsGVR,
	KindContext: contextsGVR, KindSecret: secretsGVR, KindOverwrites: overwritesGVR,
}

func (w *Writer) poll() time.Duration {
	if w.Poll > 0 {
		return w.Poll
	}
	return 500 * time.Millisecond
}

// Apply writes the objects in their order with server-side apply, as
// own (see claim: an object another owner wrote refuses the whole apply,
// a *NotOwnedError, before anything is written; an error after the
// first write is a *PartialWriteError): fields another manager set on
// them are taken over, fields this manager set before and the objects no
// longer hold are removed. It returns the UID of the Installation among
// the objects: Reconcile, Wait and Exports act on that Installation only,
// not on one another owner wrote under its name since.
func (w *Writer) Apply(ctx context.Context, own Owner, objs []Object) (types.UID, error) {
	if err := w.check(); err != nil {
		return "", err
	}
	for _, o := range objs {
		if _, ok := kindGVR[o.Kind]; !ok {
			return "", fmt.Errorf("%s: not a kind a remote installation writes", o.Key())
		}
	}
	versions, err := w.claim(ctx, own, objs)
	if err != nil {
		return "", err
	}
	if w.afterClaim != nil {
		w.afterClaim()
	}
	var written []string
	var installation types.UID
	for _, o := range objs {
		rv, exists := versions[o.Key()]
		uid, err := w.write(ctx, own, o, rv, exists)
		if err != nil {
			if len(written) > 0 {
				return "", &PartialWriteError{Written: written, Err: err}
			}
			return "", err
		}
		if o.Kind == KindInstallation {
			installation = uid
		}
		written = append(written, o.Key())
	}
	return installation, nil
}

// PartialWriteError is an Apply that failed after it had written some of
// the objects: also a *NotOwnedError from an object another owner wrote
// after the claim read it. What was written is own's, and the caller
// keeps track of it.
type PartialWriteError struct {
	// Written are the keys of the objects written, in order.
	Written []string
	Err     error
}

func (e *PartialWriteError) Error() string {
	return fmt.Sprintf("%v (after writing %s)", e.Err, strings.Join(e.Written, ", "))
}

func (e *PartialWriteError) Unwrap() error { return e.Err }

// NothingWritten says whether Apply's err means nothing was written: an
// object another owner wrote refused the apply before its first write.
func NothingWritten(err error) bool {
	_, notOwned := errors.AsType[*NotOwnedError](err)
	_, partial := errors.AsType[*PartialWriteError](err)
	return notOwned && !partial
}

// write writes o as own. An object claim found absent is created, not
// applied: server-side apply creates what is absent without any
// precondition, so it would overwrite one another owner created since
// the claim. One that exists is applied with the resourceVersion read.
func (w *Writer) write(ctx context.Context, own Owner, o Object, rv string, exists bool) (types.UID, error) {
	ref := o.Ref()
	res := w.dynamic.Resource(kindGVR[o.Kind]).Namespace(ref.Namespace)
	if !exists {
		created, err := res.Create(ctx, &unstructured.Unstructured{Object: o.marked(own, "")}, metav1.CreateOptions{FieldManager: FieldManager})
		if err == nil {
			return created.GetUID(), w.applied(ctx, res, own, ref, created)
		}
		if !apierrors.IsAlreadyExists(err) {
			return "", w.writeError(err, o)
		}
		// Created since the claim: written again only if it is own's.
		live, gerr := res.Get(ctx, o.Name, metav1.GetOptions{})
		if gerr != nil {
			return "", w.callError(gerr, fmt.Sprintf("reading %s %s/%s", o.Kind, ref.Namespace, o.Name))
		}
		if why := foreign(live, own); why != "" {
			return "", &NotOwnedError{Objects: []string{describe(ref, why)}}
		}
		rv = live.GetResourceVersion()
	}
	var err error
	var out *unstructured.Unstructured
	// Landscaper's controllers update the Installation's status as they
	// go, so a version read may be stale by the write: read again, and
	// write what is still own's.
	for attempt := 0; ; attempt++ {
		u := &unstructured.Unstructured{Object: o.marked(own, rv)}
		out, err = res.Apply(ctx, o.Name, u, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
		if !apierrors.IsConflict(err) || attempt == 4 {
			break
		}
		live, gerr := res.Get(ctx, o.Name, metav1.GetOptions{})
		if gerr != nil {
			break
		}
		if why := foreign(live, own); why != "" {
			return "", &NotOwnedError{Objects: []string{describe(ref, why)}}
		}
		rv = live.GetResourceVersion()
	}
	if err != nil {
		return "", w.writeError(err, o)
	}
	return out.GetUID(), nil
}

// applied makes the fields a Create set on u this field manager's as if
// server-side apply had set them: a Create records them under an Update
// entry, which a later apply does not remove when the object no longer
// holds them (an import dropped from the Installation, a key from a
// DataObject). Only the object created, still own's, is changed.
func (w *Writer) applied(ctx context.Context, res dynamic.ResourceInterface, own Owner, ref ObjectRef, u *unstructured.Unstructured) error {
	uid := u.GetUID()
	for attempt := 0; ; attempt++ {
		fields := u.GetManagedFields()
		changed := false
		for i, f := range fields {
			if f.Manager == FieldManager && f.Operation == metav1.ManagedFieldsOperationUpdate && f.Subresource == "" {
				fields[i].Operation, changed = metav1.ManagedFieldsOperationApply, true
			}
		}
		if !changed {
			return nil
		}
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": u.GetResourceVersion(), "managedFields": fields}})
		if err != nil {
			return err
		}
		_, err = res.Patch(ctx, ref.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager})
		if !apierrors.IsConflict(err) || attempt == 4 {
			if err != nil {
				return w.callError(err, fmt.Sprintf("taking the fields of %s %s/%s as applied", ref.Kind, ref.Namespace, ref.Name))
			}
			return nil
		}
		if u, err = res.Get(ctx, ref.Name, metav1.GetOptions{}); err != nil {
			return w.callError(err, fmt.Sprintf("reading %s %s/%s", ref.Kind, ref.Namespace, ref.Name))
		}
		if why := foreign(u, own); why != "" || u.GetUID() != uid {
			if why == "" {
				why = "deleted and created again since this apply created it"
			}
			return &NotOwnedError{Objects: []string{describe(ref, why)}}
		}
	}
}

// writeError explains a failed write of o.
func (w *Writer) writeError(err error, o Object) error {
	ref := o.Ref()
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("writing %s %s/%s: %w (does the namespace %s exist?)", o.Kind, ref.Namespace, o.Name, err, ref.Namespace)
	}
	if apierrors.IsConflict(err) {
		return fmt.Errorf("writing %s %s/%s: it changed since it was read, and is written only as read: %w; "+
			"apply again", o.Kind, ref.Namespace, o.Name, err)
	}
	return w.callError(err, fmt.Sprintf("writing %s %s/%s", o.Kind, ref.Namespace, o.Name))
}

// Live reads the objects as they are now, each as far as Landscaper acts
// on it (view: what others add that Landscaper ignores, such as the
// status or another tool's annotation, is left out; what they add that it
// reads is kept), by Key. Objects that are gone are missing from the
// result.
func (w *Writer) Live(ctx context.Context, objs []Object) (map[string]Object, error) {
	return w.live(ctx, objs, nil)
}

// LiveOwned reads, as Live, those of the objects own wrote: one another
// owner wrote since (or a Landscaper user, without an owner annotation)
// is not this resource's to keep a record of or delete. Without an owner
// ID nothing is.
func (w *Writer) LiveOwned(ctx context.Context, own Owner, objs []Object) (map[string]Object, error) {
	if own.ID == "" {
		return map[string]Object{}, nil
	}
	return w.live(ctx, objs, func(u *unstructured.Unstructured) bool { return foreign(u, own) == "" })
}

func (w *Writer) live(ctx context.Context, objs []Object, keep func(*unstructured.Unstructured) bool) (map[string]Object, error) {
	out := make(map[string]Object, len(objs))
	for _, o := range objs {
		ref := o.Ref()
		gvr, ok := kindGVR[o.Kind]
		if !ok {
			return nil, fmt.Errorf("%s: not a kind a remote installation writes", o.Key())
		}
		u, err := w.dynamic.Resource(gvr).Namespace(ref.Namespace).Get(ctx, o.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, w.callError(err, fmt.Sprintf("reading %s %s/%s", o.Kind, ref.Namespace, o.Name))
		}
		if keep != nil && !keep(u) {
			continue
		}
		out[o.Key()] = Object{Kind: o.Kind, Name: o.Name, Body: view(o.Body, u.Object)}
	}
	return out, nil
}

// Equal tells whether two objects hold the same: their bodies' JSON.
func Equal(a, b Object) bool {
	ja, err := json.Marshal(a.Body)
	if err != nil {
		return false
	}
	jb, err := json.Marshal(b.Body)
	return err == nil && string(ja) == string(jb)
}

// ParseMasked reads an object back from its Masked text.
func ParseMasked(key, text string) (Object, error) {
	kind, name, ok := strings.Cut(key, "/")
	if !ok {
		return Object{}, fmt.Errorf("%q is not <kind>/<name>", key)
	}
	var body map[string]any
	if err := yaml.Unmarshal([]byte(text), &body); err != nil {
		return Object{}, fmt.Errorf("%s: %w", key, err)
	}
	return Object{Kind: kind, Name: name, Body: body}, nil
}

// Reconcile starts a job of the Installation of the UID (Apply's), as
// Landscaper's reconcile annotation does, and returns the job it had
// before, for Wait. Another Installation of the name (ours deleted, and
// another owner's written since) is refused, not annotated.
func (w *Writer) Reconcile(ctx context.Context, namespace, name string, uid types.UID) (string, error) {
	if uid == "" {
		// A patch without a UID would annotate whichever Installation has
		// the name.
		return "", fmt.Errorf("reconciling Installation %s/%s: no UID of the Installation written", namespace, name)
	}
	// The UID in a patch is a precondition: the API server refuses to
	// change it (Invalid), so only the Installation of the UID is changed.
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"uid": uid,
		"annotations": map[string]any{OperationAnnotation: ReconcileOperation}}})
	u, err := w.dynamic.Resource(installationsGVR).Namespace(namespace).Patch(ctx, name, types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: FieldManager})
	if apierrors.IsInvalid(err) || apierrors.IsNotFound(err) {
		return "", replaced(namespace, name)
	}
	if err != nil {
		return "", w.callError(err, fmt.Sprintf("annotating Installation %s/%s to reconcile", namespace, name))
	}
	var inst lsInstallation
	if err := decode(u.Object, &inst, "Installation "+namespace+"/"+name); err != nil {
		return "", err
	}
	return inst.Status.JobID, nil
}

// Wait waits until a job other than before of the Installation of the
// UID has finished, Succeeded or Failed, and returns the tree as it is
// then. When ctx ends first, it returns the tree as far as it can be
// read, with ctx's error. Another Installation of the name is an error,
// and its tree is not returned.
func (w *Writer) Wait(ctx context.Context, namespace, name, before string, uid types.UID) (*Tree, error) {
	for {
		var inst lsInstallation
		err := w.get(ctx, installationsGVR, namespace, name, "", &inst)
		switch {
		case ctx.Err() != nil:
			return w.treeAfter(namespace, name, uid), ctx.Err()
		case errors.Is(err, ErrNotFound):
			return nil, replaced(namespace, name)
		case err != nil:
			return nil, err
		case inst.UID != uid:
			return nil, replaced(namespace, name)
		}
		st := inst.Status
		if st.JobID != before && st.JobID != "" && st.JobID == st.JobIDFinished && finished(st.Phase) {
			return w.treeOf(ctx, &inst)
		}
		select {
		case <-ctx.Done():
			return w.treeAfter(namespace, name, uid), ctx.Err()
		case <-time.After(w.poll()):
		}
	}
}

// replaced is the error of an Installation that is not the one written:
// deleted, and perhaps written again by another owner.
func replaced(namespace, name string) error {
	ref := ObjectRef{APIVersion: GroupVersion.String(), Kind: KindInstallation, Namespace: namespace, Name: name}
	return &NotOwnedError{Objects: []string{describe(ref, "not the Installation this apply wrote: deleted since, and perhaps written again by another owner")}}
}

func finished(phase string) bool { return phase == phaseSucceeded || phase == phaseFailed }

const (
	phaseFailed       = "Failed"
	phaseDeleteFailed = "DeleteFailed"
)

// treeAfter reads the tree of the Installation of the UID after ctx
// ended, for the state to say where Landscaper got to; nil when it cannot
// be read in a few seconds, or another Installation has the name.
func (w *Writer) treeAfter(namespace, name string, uid types.UID) *Tree {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var inst lsInstallation
	if err := w.get(ctx, installationsGVR, namespace, name, "", &inst); err != nil || inst.UID != uid {
		return nil
	}
	t, err := w.treeOf(ctx, &inst)
	if err != nil {
		return nil
	}
	return t
}

// ErrDeleteFailed: Landscaper could not remove a deploy item; the Tree
// returned with it says which and why.
var ErrDeleteFailed = errors.New("the installation could not be deleted on the Landscaper cluster")

// Uninstall deletes the Installation and waits until Landscaper has
// removed it with everything its deploy items installed. When Landscaper
// reports DeleteFailed, or ctx ends first, it returns the tree still
// there (ErrDeleteFailed or ctx's error). An Installation that failed to
// delete before is given another reconcile, which retries the deletion.
func (w *Writer) Uninstall(ctx context.Context, own Owner, namespace, name string) (*Tree, error) {
	return w.remove(ctx, own, namespace, name, false)
}

// Release removes the Installation and the tree below it from Landscaper
// and leaves what its deploy items installed in place (Landscaper's
// delete-without-uninstall): returning the installation to the provider
// in-process. It returns what the provider's deployers need to take the
// installed objects and releases over, read before anything was removed,
// also when the removal then fails (ctx ended, say): Landscaper may have
// let go of some deploy items by then, and what they adopt is known only
// from this read.
func (w *Writer) Release(ctx context.Context, own Owner, namespace, name string) (*Installation, error) {
	inst, err := w.Read(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	if _, err := w.remove(ctx, own, namespace, name, true); err != nil {
		return inst, err
	}
	return inst, nil
}

func (w *Writer) remove(ctx context.Context, own Owner, namespace, name string, keepInstalled bool) (*Tree, error) {
	u, err := w.dynamic.Resource(installationsGVR).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, w.callError(err, fmt.Sprintf("reading Installation %s/%s", namespace, name))
	}
	ref := ObjectRef{APIVersion: GroupVersion.String(), Kind: KindInstallation, Namespace: namespace, Name: name}
	if why := foreign(u, own); why != "" {
		return nil, &NotOwnedError{Objects: []string{describe(ref, why)}}
	}
	var inst lsInstallation
	if err := decode(u.Object, &inst, "Installation "+namespace+"/"+name); err != nil {
		return nil, err
	}
	uid := u.GetUID()
	res := w.dynamic.Resource(installationsGVR).Namespace(namespace)
	// The Installation read is the one annotated and deleted, not one
	// another owner wrote in between.
	if keepInstalled {
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": u.GetResourceVersion(),
			"annotations": map[string]any{deleteWithoutUninstall: "true"}}})
		if _, err := res.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager}); err != nil {
			return nil, w.callError(err, fmt.Sprintf("annotating Installation %s/%s to keep what it installed", namespace, name))
		}
	} else if _, kept := u.GetAnnotations()[deleteWithoutUninstall]; kept && inst.DeletionTimestamp == nil {
		// Someone else asked Landscaper to keep what the installation
		// installed: a destroy would leave it all deployed, and the
		// resource gone from the state. A deletion under way (a move
		// back in-process that did not finish) is left as it was begun.
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": u.GetResourceVersion(),
			"annotations": map[string]any{deleteWithoutUninstall: nil}}})
		if _, err := res.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager}); err != nil {
			return nil, w.callError(err, fmt.Sprintf("removing the annotation %s another manager set on Installation %s/%s",
				deleteWithoutUninstall, namespace, name))
		}
	}
	if inst.DeletionTimestamp != nil && inst.Status.Phase == phaseDeleteFailed {
		if _, err := w.Reconcile(ctx, namespace, name, uid); err != nil {
			return nil, err
		}
	} else if err := res.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}); err != nil && !apierrors.IsNotFound(err) {
		return nil, w.callError(err, fmt.Sprintf("deleting Installation %s/%s", namespace, name))
	}
	retried := inst.Status.JobID
	for {
		err := w.get(ctx, installationsGVR, namespace, name, "", &inst)
		switch {
		case errors.Is(err, ErrNotFound):
			return nil, nil
		case ctx.Err() != nil:
			return w.treeAfter(namespace, name, uid), ctx.Err()
		case err != nil:
			return nil, err
		case inst.UID != uid:
			// Gone: the Installation there now is another.
			return nil, nil
		}
		st := inst.Status
		if st.Phase == phaseDeleteFailed && st.JobID == st.JobIDFinished && st.JobID != retried {
			t, err := w.treeOf(ctx, &inst)
			if err != nil {
				return nil, err
			}
			return t, ErrDeleteFailed
		}
		select {
		case <-ctx.Done():
			return w.treeAfter(namespace, name, uid), ctx.Err()
		case <-time.After(w.poll()):
		}
	}
}

// ExportedTarget is a target an installation exported.
type ExportedTarget struct {
	Type   string
	Config json.RawMessage
	// Secret names the Secret holding Config, when the Target has one.
	Secret      string
	Labels      map[string]string
	Annotations map[string]string
}

// Exports reads the export DataObjects and Targets Landscaper wrote for
// the installation's spec.exports, by export name, as the Installation of
// the UID (Apply's) exported them. An export not written (yet) is
// missing.
func (w *Writer) Exports(ctx context.Context, s Spec, uid types.UID) (map[string]any, map[string]ExportedTarget, error) {
	objs, err := s.Objects()
	if err != nil {
		return nil, nil, err
	}
	own := TargetSecrets(objs)
	// Landscaper labels what an Installation exports with it as the
	// source. Another Installation of the namespace exporting under this
	// one's names is refused, not taken: its values would reach the
	// state, and other resources from there.
	src := InstallationContext(s.Name)
	// Landscaper also makes the exporting Installation the owner of what
	// it exports (an ownerReference with its UID): an Installation of this
	// name another owner wrote after ours was deleted has another UID.
	notOurs := func(kind, name, export string, meta metav1.ObjectMeta) error {
		if meta.Labels[labelDOSource] != src {
			return fmt.Errorf("the %s %s/%s (export %q) was not exported by the Installation %s but by %q: refused, "+
				"as another installation's value would be taken for this one's", kind, s.Namespace, name, export, s.Name, meta.Labels[labelDOSource])
		}
		for _, ref := range meta.OwnerReferences {
			if ref.Kind == KindInstallation && ref.Name == s.Name && ref.UID == uid {
				return nil
			}
		}
		return fmt.Errorf("the %s %s/%s (export %q) was not exported by the Installation %s/%s this apply wrote (UID %s), "+
			"but by another of its name: refused, as another installation's value would be taken for this one's",
			kind, s.Namespace, name, export, s.Namespace, s.Name, uid)
	}
	data := map[string]any{}
	for _, n := range s.DataExports {
		var do lsDataObject
		err := w.get(ctx, dataObjectsGVR, s.Namespace, ObjectName(s.Name, "export", n), fmt.Sprintf("export %q", n), &do)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		if do.Labels[labelDOSourceType] != sourceTypeExport {
			return nil, nil, fmt.Errorf("the DataObject %s/%s (export %q) is no export but %q: refused, as it was not "+
				"exported by the Installation %s", s.Namespace, do.Name, n, do.Labels[labelDOSourceType], s.Name)
		}
		if err := notOurs("DataObject", do.Name, n, do.ObjectMeta); err != nil {
			return nil, nil, err
		}
		v, err := parseJSON(do.Data)
		if err != nil {
			return nil, nil, fmt.Errorf("DataObject %s/%s (export %q): %w", s.Namespace, do.Name, n, err)
		}
		data[n] = v
	}
	targets := map[string]ExportedTarget{}
	for _, n := range s.TargetExports {
		var t lsTarget
		name := ObjectName(s.Name, "export", n)
		err := w.get(ctx, targetsGVR, s.Namespace, name, fmt.Sprintf("target export %q", n), &t)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		if err := notOurs("Target", name, n, t.ObjectMeta); err != nil {
			return nil, nil, err
		}
		et := ExportedTarget{Type: t.Spec.Type, Config: t.Spec.Config, Labels: t.Labels, Annotations: t.Annotations}
		if ref := t.Spec.SecretRef; ref != nil {
			if !own[ref.Name] {
				// Landscaper copies an exported target's secretRef from
				// the blueprint: read with the provider's credentials,
				// any Secret of the namespace would reach the state.
				return nil, nil, fmt.Errorf("the target export %q refers to the Secret %s/%s, which holds none of "+
					"this installation's target imports: refused, as its data would be copied into the state",
					n, s.Namespace, ref.Name)
			}
			var sec struct {
				Data map[string][]byte `json:"data"`
			}
			if err := w.get(ctx, secretsGVR, s.Namespace, ref.Name, fmt.Sprintf("secretRef of target export %q", n), &sec); err != nil {
				return nil, nil, err
			}
			v, err := keyData(sec.Data, ref.Key, fmt.Sprintf("Secret %s/%s (target export %q)", s.Namespace, ref.Name, n))
			if err != nil {
				return nil, nil, err
			}
			if et.Config, err = json.Marshal(v); err != nil {
				return nil, nil, err
			}
			et.Secret = ref.Name
		}
		targets[n] = et
	}
	return data, targets, nil
}

// TargetSecret is the name of the Secret holding the config of a target
// import's Target: a target export passing it on refers to it.
func TargetSecret(inst, importName string) string { return ObjectName(inst, "target", importName) }

// Tree is where Landscaper is with an installation: its phase and job, and
// the phase and last error of every installation and deploy item under
// it.
type Tree struct {
	Phase         string
	JobID         string
	JobIDFinished string
	LastError     *Error
	Deleting      bool
	// Owner is the Installation's OwnerAnnotation: who wrote it.
	Owner string
	// Installations by path: "" the root, "a" its sub-installation a,
	// "a/b" one level deeper.
	Installations map[string]TreeNode
	// DeployItems by "<path>/<item>", the root's by item name.
	DeployItems map[string]DeployItem
}

// TreeNode is one installation of a Tree.
type TreeNode struct {
	Object    string
	Phase     string
	LastError *Error
}

// Tree reads the Installation and everything below it; nil when the
// Installation is gone.
func (w *Writer) Tree(ctx context.Context, namespace, name string) (*Tree, error) {
	var inst lsInstallation
	err := w.get(ctx, installationsGVR, namespace, name, "", &inst)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return w.treeOf(ctx, &inst)
}

func (w *Writer) treeOf(ctx context.Context, inst *lsInstallation) (*Tree, error) {
	exec, subs, err := w.tree(ctx, inst, 0)
	if err != nil {
		return nil, fmt.Errorf("Installation %s/%s: %w", inst.Namespace, inst.Name, err)
	}
	st := inst.Status
	t := &Tree{Phase: st.Phase, JobID: st.JobID, JobIDFinished: st.JobIDFinished, LastError: st.LastError.plain(),
		Deleting: inst.DeletionTimestamp != nil, Owner: inst.Annotations[OwnerAnnotation], Installations: map[string]TreeNode{"": {Object: inst.Name, Phase: st.Phase, LastError: st.LastError.plain()}}}
	var walk func(prefix string, subs map[string]*Subinstallation)
	walk = func(prefix string, subs map[string]*Subinstallation) {
		for _, n := range slices.Sorted(maps.Keys(subs)) {
			s := subs[n]
			t.Installations[prefix+n] = TreeNode{Object: s.Object, Phase: s.Phase, LastError: s.LastError}
			walk(prefix+n+"/", s.Subinstallations)
		}
	}
	walk("", subs)
	t.DeployItems = (&Installation{Execution: exec, Subinstallations: subs}).DeployItems()
	return t, nil
}

// WriterOf returns a writer of the cluster r reads.
func WriterOf(r *Reader) *Writer { return &Writer{Reader: r} }

// Record is what a remote installation keeps of an object it wrote, to
// tell later whether the object changed: the body, with every value of a
// Secret's data MaskedValue. Nothing derived from a secret is kept, not
// even a digest (a guessable secret is found by hashing guesses): whether
// a Secret's data changed is asked of the cluster (SecretsChanged).
func (o Object) Record() Object {
	if o.Kind != KindSecret {
		return o
	}
	body := maps.Clone(o.Body)
	if data, ok := body["data"].(map[string]any); ok {
		masked := make(map[string]any, len(data))
		for k := range data {
			masked[k] = MaskedValue
		}
		body["data"] = masked
	}
	return Object{Kind: o.Kind, Name: o.Name, Body: body}
}

// SecretsChanged returns, sorted, the keys of the Secrets among objs whose
// data in the cluster is not what they hold, or that are gone.
func (w *Writer) SecretsChanged(ctx context.Context, objs []Object) ([]string, error) {
	var secrets []Object
	for _, o := range objs {
		if o.Kind == KindSecret {
			secrets = append(secrets, o)
		}
	}
	live, err := w.Live(ctx, secrets)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, o := range secrets {
		l, ok := live[o.Key()]
		if !ok || !Equal(Object{Body: map[string]any{"data": o.Body["data"]}}, Object{Body: map[string]any{"data": l.Body["data"]}}) {
			out = append(out, o.Key())
		}
	}
	slices.Sort(out)
	return out, nil
}

// Drifted returns, sorted, the keys of the recorded objects (Record) that
// are gone from the cluster or no longer hold what was written, or hold
// more that Landscaper acts on (see view); Restore takes that back.
func (w *Writer) Drifted(ctx context.Context, recs []Object) ([]string, error) {
	// A record's Secret data is masked, so the live data is recorded
	// alike: SecretsChanged compares it.
	live, err := w.Live(ctx, recs)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range recs {
		// Not only what the provider wrote: a field another manager
		// added, which server-side apply leaves in place, drifts too.
		l, ok := live[r.Key()]
		if !ok || restorePatch(r.Body, l.Record().Body) != nil {
			out = append(out, r.Key())
		}
	}
	slices.Sort(out)
	return out, nil
}
