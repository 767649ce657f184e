//go:build unix

package lscluster

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

var testBlueprint = map[string][]byte{"blueprint.yaml": []byte("kind: Blueprint\n")}

// Object names were dot-joined: "app.import" with a registry pull secret
// and "app" with a sensitive import "registry" both wrote
// Secret/app.import.registry, and force-applied, each overwrote the
// other's (the remote review's F1). No two installations of a namespace
// share an object name now, whatever their names and imports.
func TestObjectNamesNeverMeetAcrossInstallations(t *testing.T) {
	specs := []Spec{
		{Name: "app.import", PullSecrets: map[string]RegistryAuth{"r.example": {Username: "robot", Password: "pw-a"}}},
		{Name: "app", SecretData: map[string]any{"registry": "pw-b", "x--y": 1, "X": 2, "x": 3}},
		{Name: "app.target", Data: map[string]any{"x": 1}},
		{Name: "app-import", SecretData: map[string]any{"registry": "pw-c"}},
		{Name: "app--import", SecretData: map[string]any{"registry": "pw-d"}},
		{Name: "app", Targets: map[string]Target{"x.0": {Type: "t"}}, TargetMaps: map[string]map[string]Target{"y": {"A": {Type: "t"}}}},
	}
	owner := map[string]string{}
	for _, s := range specs {
		s.Namespace, s.Files = "ls", testBlueprint
		objs, err := s.Objects()
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		for _, o := range objs {
			if !dnsSubdomain.MatchString(o.Name) || len(o.Name) > 253 {
				t.Errorf("%s of %s is no Kubernetes name", o.Key(), s.Name)
			}
			if prev, ok := owner[o.Key()]; ok && prev != s.Name {
				t.Errorf("installations %q and %q both write %s", prev, s.Name, o.Key())
			}
			owner[o.Key()] = s.Name
		}
	}
	for _, c := range []struct{ inst, part, name, want string }{
		{"app", "import", "password", "app.import.password"},
		{"app", "target", "fleet.0", "app.target.fleet.0"},
		{"app", "context", "", "app.context"},
	} {
		if got := ObjectName(c.inst, c.part, c.name); got != c.want {
			t.Errorf("ObjectName(%q, %q, %q) = %q, want the readable %q", c.inst, c.part, c.name, got, c.want)
		}
	}
	if got := ObjectName("app.v1", "import", "My Password"); !strings.HasPrefix(got, "app-v1--") || !strings.Contains(got, ".import.my-password--") {
		t.Errorf("escaped names read %q", got)
	}
}

// Two Terraform resources naming one installation in one namespace, and a
// Landscaper user's objects of the names the provider would write: what
// another owner wrote is neither overwritten nor deleted, and the
// refusal names it (the remote review's F1).
func TestWriterRefusesWhatAnotherOwnerWrote(t *testing.T) {
	c := newCluster(t)
	w, err := NewWriter(restConfig())
	if err != nil {
		t.Fatal(err)
	}
	spec := func(greeting string) []Object {
		s := Spec{Namespace: c.ns, Name: "app", Files: testBlueprint, Data: map[string]any{"greeting": greeting},
			SecretData: map[string]any{"password": "pw-" + greeting}}
		objs, err := s.Objects()
		if err != nil {
			t.Fatal(err)
		}
		return objs
	}
	a := Owner{ID: NewOwnerID(), Installation: "app"}
	b := Owner{ID: NewOwnerID(), Installation: "app"}
	objsA := spec("a")
	if _, err := w.Apply(t.Context(), a, objsA); err != nil {
		t.Fatal(err)
	}
	greeting := func() any {
		u, err := c.d.Resource(dataObjectsGVR).Namespace(c.ns).Get(t.Context(), "app.import.greeting", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return u.Object["data"]
	}

	_, err = w.Apply(t.Context(), b, spec("b"))
	if _, ok := errors.AsType[*NotOwnedError](err); !ok || !strings.Contains(err.Error(), "Installation "+c.ns+"/app (written by another Terraform resource") {
		t.Fatalf("another resource's apply of the same installation: %v", err)
	}
	if got := greeting(); got != "a" {
		t.Errorf("the refused apply overwrote the DataObject: %v", got)
	}
	notOwned, err := w.Delete(t.Context(), b, refsOfObjects(objsA))
	if err != nil || notOwned == nil || len(notOwned.Objects) != len(objsA) {
		t.Fatalf("another resource's delete: %v, %v", notOwned, err)
	}
	if _, err := w.Uninstall(t.Context(), b, c.ns, "app"); !strings.Contains(fmtErr(err), "Installation "+c.ns+"/app") {
		t.Errorf("another resource's uninstall: %v", err)
	}
	if got := greeting(); got != "a" {
		t.Errorf("after the refused delete the DataObject holds %v", got)
	}
	if live, err := w.Live(t.Context(), objsA); err != nil || len(live) != len(objsA) {
		t.Errorf("after the refused deletes %d of %d objects are left (%v)", len(live), len(objsA), err)
	}

	// A Landscaper user's Secret where another installation would write
	// its sensitive import.
	c.write("apiVersion: v1\nkind: Secret\nmetadata:\n  name: other.import.password\n  namespace: ${namespace}\nstringData:\n  value: users\n")
	s := Spec{Namespace: c.ns, Name: "other", Files: testBlueprint, SecretData: map[string]any{"password": "mine"}}
	objs, err := s.Objects()
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.Apply(t.Context(), Owner{ID: NewOwnerID(), Installation: "other"}, objs)
	if err == nil || !strings.Contains(err.Error(), "Secret "+c.ns+"/other.import.password (written by no Terraform resource)") {
		t.Errorf("applying over a Landscaper user's Secret: %v", err)
	}
	if _, err := w.dynamic.Resource(installationsGVR).Namespace(c.ns).Get(t.Context(), "other", metav1.GetOptions{}); err == nil {
		t.Errorf("the refused apply wrote the Installation")
	}

	// A's Installation deleted outside Terraform: what A wrote for it is
	// still A's, whose resource keeps its owner ID and writes the
	// installation again; another owner naming the installation is
	// refused as before (third remote review, RR3-2: it took A's objects).
	c.remove("Installation", "app")
	_, err = w.Apply(t.Context(), b, spec("b"))
	if _, ok := errors.AsType[*NotOwnedError](err); !ok || !strings.Contains(err.Error(), "DataObject "+c.ns+"/app.import.greeting (written by another Terraform resource") {
		t.Errorf("another resource writing over what A's deleted Installation left: %v", err)
	}
	if got := greeting(); got != "a" {
		t.Errorf("DataObject %v after another owner's refused write", got)
	}
	if _, err := w.Apply(t.Context(), a, spec("a2")); err != nil {
		t.Fatalf("A writing its installation again over what its deleted Installation left: %v", err)
	}
	if got := greeting(); got != "a2" {
		t.Errorf("DataObject %v after A wrote it again", got)
	}
	if notOwned, err := w.Delete(t.Context(), b, refsOfObjects(objsA)); err != nil || notOwned == nil {
		t.Errorf("B deletes what A owns: %v %v", notOwned, err)
	}
	if notOwned, err := w.Delete(t.Context(), a, refsOfObjects(objsA)); err != nil || notOwned != nil {
		t.Errorf("A deletes its objects: %v %v", notOwned, err)
	}
}

// While one resource's apply has written its objects but not yet the
// Installation (written last; or never, when that apply was cut short),
// another resource naming the same installation is refused, not handed
// the first one's Secrets and DataObjects (third remote review, RR3-2).
func TestWriterRefusesAnotherOwnersObjectsWithoutInstallation(t *testing.T) {
	c := newCluster(t)
	w, err := NewWriter(restConfig())
	if err != nil {
		t.Fatal(err)
	}
	a := Owner{ID: NewOwnerID(), Installation: "app"}
	b := Owner{ID: NewOwnerID(), Installation: "app"}
	s := Spec{Namespace: c.ns, Name: "app", Files: testBlueprint, Data: map[string]any{"greeting": "from-a"},
		SecretData: map[string]any{"password": "pw-a"}}
	objs, err := s.Objects()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Apply(t.Context(), a, objs[:len(objs)-1]); err != nil {
		t.Fatal(err)
	}
	s.Data["greeting"], s.SecretData["password"] = "from-b", "pw-b"
	objsB, err := s.Objects()
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.Apply(t.Context(), b, objsB)
	if _, ok := errors.AsType[*NotOwnedError](err); !ok || !strings.Contains(err.Error(), "Secret "+c.ns+"/app.import.password (written by another Terraform resource") {
		t.Errorf("another resource's apply over objects without an Installation: %v", err)
	}
	u, err := c.d.Resource(dataObjectsGVR).Namespace(c.ns).Get(t.Context(), "app.import.greeting", metav1.GetOptions{})
	if err != nil || u.GetAnnotations()[OwnerAnnotation] != a.ID || u.Object["data"] != "from-a" {
		t.Errorf("A's DataObject became %v (%v)", u, err)
	}
	if _, err := c.d.Resource(installationsGVR).Namespace(c.ns).Get(t.Context(), "app", metav1.GetOptions{}); err == nil {
		t.Errorf("the refused apply wrote the Installation")
	}
	// A's apply, run again, finishes.
	if _, err := w.Apply(t.Context(), a, objs); err != nil {
		t.Errorf("A's apply after it was cut short: %v", err)
	}
}

func refsOfObjects(objs []Object) []ObjectRef {
	out := make([]ObjectRef, len(objs))
	for i, o := range objs {
		out[i] = o.Ref()
	}
	return out
}

func fmtErr(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// An object another owner writes between Apply's reads and its writes is
// not overwritten: server-side apply writes only the version read
// (second remote review, remark a), and a deletion of the Installation
// only the one read (remark c).
func TestWriterWritesOnlyWhatItRead(t *testing.T) {
	c, w, own, s, _ := appliedApp(t)
	w.afterClaim = func() {
		patch := `{"metadata":{"annotations":{"` + OwnerAnnotation + `":"someone-else"}},"data":"theirs"}`
		if _, err := c.d.Resource(dataObjectsGVR).Namespace(c.ns).Patch(t.Context(), "app.import.greeting", types.MergePatchType,
			[]byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	s.Data["greeting"] = "b"
	objs, _ := s.Objects()
	if _, err := w.Apply(t.Context(), own, objs); !strings.Contains(fmtErr(err), "DataObject "+c.ns+"/app.import.greeting (written by another Terraform resource") {
		t.Errorf("writing over an object another owner wrote meanwhile: %v", err)
	}
	u, err := c.d.Resource(dataObjectsGVR).Namespace(c.ns).Get(t.Context(), "app.import.greeting", metav1.GetOptions{})
	if err != nil || u.Object["data"] != "theirs" || u.GetAnnotations()[OwnerAnnotation] != "someone-else" {
		t.Errorf("the other owner's DataObject became %v (%v)", u, err)
	}
}

// A change that leaves the owner (Landscaper updating the Installation's
// status as it runs) between the reads and the writes is read again and
// written over, not an error.
func TestWriterRetriesWhatChangedAndIsStillOwn(t *testing.T) {
	c, w, own, _, objs := appliedApp(t)
	w.afterClaim = func() {
		if _, err := c.d.Resource(installationsGVR).Namespace(c.ns).Patch(t.Context(), "app", types.MergePatchType,
			[]byte(`{"metadata":{"labels":{"touched":"yes"}}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Apply(t.Context(), own, objs); err != nil {
		t.Errorf("an Installation touched meanwhile, still this owner's: %v", err)
	}
}

// An object absent when Apply read the objects, which another owner
// creates before Apply writes it, is not overwritten: server-side apply
// would create or overwrite it without any precondition (third remote
// review, RR3-1).
func TestWriterDoesNotOverwriteWhatAnotherOwnerCreatedMeanwhile(t *testing.T) {
	c := newCluster(t)
	w, err := NewWriter(restConfig())
	if err != nil {
		t.Fatal(err)
	}
	own := Owner{ID: NewOwnerID(), Installation: "app"}
	s := Spec{Namespace: c.ns, Name: "app", Files: testBlueprint, Data: map[string]any{"greeting": "a"}}
	objs, err := s.Objects()
	if err != nil {
		t.Fatal(err)
	}
	w.afterClaim = func() {
		c.write("apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: DataObject\nmetadata:\n  name: app.import.greeting\n" +
			"  namespace: ${namespace}\n  annotations:\n    " + OwnerAnnotation + ": someone-else\n    " +
			InstallationAnnotation + ": app\ndata: theirs\n")
	}
	_, err = w.Apply(t.Context(), own, objs)
	if _, ok := errors.AsType[*NotOwnedError](err); !ok || !strings.Contains(err.Error(), "DataObject "+c.ns+"/app.import.greeting (written by another Terraform resource") {
		t.Errorf("writing an object another owner created meanwhile: %v", err)
	}
	u, err := c.d.Resource(dataObjectsGVR).Namespace(c.ns).Get(t.Context(), "app.import.greeting", metav1.GetOptions{})
	if err != nil || u.Object["data"] != "theirs" || u.GetAnnotations()[OwnerAnnotation] != "someone-else" {
		t.Errorf("the DataObject another owner created became %v (%v)", u, err)
	}
	if _, err := c.d.Resource(installationsGVR).Namespace(c.ns).Get(t.Context(), "app", metav1.GetOptions{}); err == nil {
		t.Errorf("the Installation was written after the refusal")
	}
}

// What an object Apply created no longer holds is removed by the next
// Apply, as server-side apply removes what its field manager set before:
// an object is created, not applied, so that the fields are this
// manager's as applied is checked here.
func TestWriterRemovesWhatACreatedObjectNoLongerHolds(t *testing.T) {
	c := newCluster(t)
	w, err := NewWriter(restConfig())
	if err != nil {
		t.Fatal(err)
	}
	own := Owner{ID: NewOwnerID(), Installation: "app"}
	s := Spec{Namespace: c.ns, Name: "app", Files: testBlueprint, Data: map[string]any{"config": map[string]any{"a": 1, "b": 2}}}
	objs, err := s.Objects()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Apply(t.Context(), own, objs); err != nil {
		t.Fatal(err)
	}
	s.Data["config"] = map[string]any{"a": 1}
	if objs, err = s.Objects(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Apply(t.Context(), own, objs); err != nil {
		t.Fatal(err)
	}
	u, err := c.d.Resource(dataObjectsGVR).Namespace(c.ns).Get(t.Context(), "app.import.config", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := u.Object["data"].(map[string]any); len(data) != 1 {
		t.Errorf("the DataObject holds %v after the key b was dropped, want only a", u.Object["data"])
	}
}

// An object another owner takes between Apply's reads and its write,
// after other objects were written (the Installation, written last), is a
// PartialWriteError naming what was written, not a NotOwnedError, which
// says nothing was: the provider would leave a new Secret unrecorded
// (third remote review, RR3-5).
func TestWriterReportsWhatItWroteBeforeARefusal(t *testing.T) {
	c, w, own, s, _ := appliedApp(t)
	w.afterClaim = func() {
		patch := `{"metadata":{"annotations":{"` + OwnerAnnotation + `":"someone-else"}}}`
		if _, err := c.d.Resource(installationsGVR).Namespace(c.ns).Patch(t.Context(), "app", types.MergePatchType,
			[]byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	s.SecretData = map[string]any{"password": "new-sensitive-import-4711"}
	objs, err := s.Objects()
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.Apply(t.Context(), own, objs)
	partial, ok := errors.AsType[*PartialWriteError](err)
	if !ok || NothingWritten(err) || !slices.Contains(partial.Written, "Secret/app.import.password") ||
		!strings.Contains(err.Error(), "Installation "+c.ns+"/app (written by another Terraform resource") {
		t.Fatalf("a refusal after the new Secret was written: %v (nothing written: %v)", err, NothingWritten(err))
	}
	if slices.Contains(partial.Written, "Installation/app") {
		t.Errorf("the Installation another owner took counts as written: %v", partial.Written)
	}
	u, err := c.d.Resource(installationsGVR).Namespace(c.ns).Get(t.Context(), "app", metav1.GetOptions{})
	if err != nil || u.GetAnnotations()[OwnerAnnotation] != "someone-else" {
		t.Errorf("the Installation another owner took became %v (%v)", u.GetAnnotations(), err)
	}
}

// The Installation Apply wrote, deleted and written again under its name
// (by another owner, or with this owner's annotation copied), is neither
// annotated to reconcile nor waited for: Reconcile and Wait act on the
// UID Apply returned (third remote review, RR3-7).
func TestWriterActsOnlyOnTheInstallationItWrote(t *testing.T) {
	c := newCluster(t)
	w, err := NewWriter(restConfig())
	if err != nil {
		t.Fatal(err)
	}
	own := Owner{ID: NewOwnerID(), Installation: "app"}
	s := Spec{Namespace: c.ns, Name: "app", Files: testBlueprint}
	objs, err := s.Objects()
	if err != nil {
		t.Fatal(err)
	}
	uid, err := w.Apply(t.Context(), own, objs)
	if err != nil || uid == "" {
		t.Fatalf("Apply: %q, %v", uid, err)
	}
	insts := c.d.Resource(installationsGVR).Namespace(c.ns)
	c.remove("Installation", "app")
	other, err := insts.Create(t.Context(), &unstructured.Unstructured{Object: objs[len(objs)-1].marked(own, "")}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Reconcile(t.Context(), c.ns, "app", uid); !strings.Contains(fmtErr(err), "Installation "+c.ns+"/app (not the Installation this apply wrote") {
		t.Errorf("Reconcile of a replaced Installation: %v", err)
	}
	if u, err := insts.Get(t.Context(), "app", metav1.GetOptions{}); err != nil || u.GetAnnotations()[OperationAnnotation] != "" {
		t.Errorf("the Installation written in its place was annotated: %v (%v)", u.GetAnnotations(), err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if tree, err := w.Wait(ctx, c.ns, "app", "", uid); tree != nil || !strings.Contains(fmtErr(err), "not the Installation this apply wrote") {
		t.Errorf("Wait on a replaced Installation: %+v, %v", tree, err)
	}
	if _, err := w.Reconcile(t.Context(), c.ns, "app", ""); err == nil {
		t.Errorf("Reconcile without a UID annotated whichever Installation has the name")
	}
	// The one of the UID given is annotated.
	if _, err := w.Reconcile(t.Context(), c.ns, "app", other.GetUID()); err != nil {
		t.Errorf("Reconcile of the Installation of its UID: %v", err)
	}
	if u, err := insts.Get(t.Context(), "app", metav1.GetOptions{}); err != nil || u.GetAnnotations()[OperationAnnotation] != ReconcileOperation {
		t.Errorf("the Installation of the UID given was not annotated: %v (%v)", u.GetAnnotations(), err)
	}
}

// Without an owner ID (a remote state of an earlier build) nothing is
// own: an object no provider wrote carries no owner ID either, and Delete,
// Uninstall, Release and Restore would act on a Landscaper user's objects
// (the hostile review's RR4-4).
func TestNothingIsOwnWithoutAnOwnerID(t *testing.T) {
	users := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "app"}}}
	if why := foreign(users, Owner{Installation: "app"}); why == "" {
		t.Errorf("an object no provider wrote is own without an owner ID")
	}
	if why := foreign(users, Owner{ID: "owner-1", Installation: "app"}); why == "" {
		t.Errorf("an object no provider wrote is own")
	}
	users.SetAnnotations(map[string]string{OwnerAnnotation: "owner-1"})
	if why := foreign(users, Owner{ID: "owner-1", Installation: "app"}); why != "" {
		t.Errorf("an object of the owner is not own: %s", why)
	}
}

// appliedApp writes installation app (a DataObject import greeting = a)
// to a new namespace as a new owner.
func appliedApp(t *testing.T) (*cluster, *Writer, Owner, Spec, []Object) {
	t.Helper()
	c := newCluster(t)
	w, err := NewWriter(restConfig())
	if err != nil {
		t.Fatal(err)
	}
	own := Owner{ID: NewOwnerID(), Installation: "app"}
	s := Spec{Namespace: c.ns, Name: "app", Files: testBlueprint, Data: map[string]any{"greeting": "a"}}
	objs, err := s.Objects()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Apply(t.Context(), own, objs); err != nil {
		t.Fatal(err)
	}
	return c, w, own, s, objs
}
