package lscluster

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Everything a remote installation writes carries its owner in two
// annotations, and nothing is overwritten (server-side apply with Force
// takes any field over) or deleted that another owner wrote: another
// Terraform resource naming the same installation in the same namespace,
// or a Landscaper user's objects, which carry no owner at all.
const (
	// OwnerAnnotation holds Owner.ID: the one Terraform resource that
	// wrote the object.
	OwnerAnnotation = "terraform-provider-landscaper/owner"
	// InstallationAnnotation holds the installation the object belongs
	// to, for people reading the namespace: which installation's
	// objects another owner's are, when a write is refused.
	InstallationAnnotation = "terraform-provider-landscaper/installation"
)

// Owner is who writes a remote installation's objects: ID is the identity
// of one Terraform resource (NewOwnerID, kept in its private state), not
// derived from anything in the configuration, so that two states naming
// the same installation are two owners.
type Owner struct {
	ID           string
	Installation string
}

// NewOwnerID returns a new owner identity.
func NewOwnerID() string { return strings.ToLower(rand.Text()) }

// NotOwnedError says which objects exist and were written by another
// owner, or by no provider at all: nothing was written or deleted.
type NotOwnedError struct {
	Objects []string
}

func (e *NotOwnedError) Error() string {
	return fmt.Sprintf("refused to overwrite or delete what this resource did not write: %s. Another Terraform resource "+
		"or a Landscaper user owns it: choose another installation name or namespace, or remove the other owner's "+
		"installation first; an Installation Landscaper users wrote is taken over with terraform import "+
		"(ID <provider target>/<namespace>/<installation>)", strings.Join(e.Objects, "; "))
}

// marked is the object's body with the owner's annotations, and the
// resourceVersion claim read, if any: server-side apply then writes only
// the object claim saw (a Conflict if another owner wrote it since).
func (o Object) marked(own Owner, resourceVersion string) map[string]any {
	body := maps.Clone(o.Body)
	meta, _ := body["metadata"].(map[string]any)
	meta = maps.Clone(meta)
	ann := map[string]any{}
	if a, ok := meta["annotations"].(map[string]any); ok {
		maps.Copy(ann, a)
	}
	ann[OwnerAnnotation], ann[InstallationAnnotation] = own.ID, own.Installation
	meta["annotations"] = ann
	if resourceVersion != "" {
		meta["resourceVersion"] = resourceVersion
	}
	body["metadata"] = meta
	return body
}

// foreign says why the live object is not own's, "" when it is. Without
// an owner ID nothing is own's: an object no provider wrote (a Landscaper
// user's) carries none either, and would be overwritten or deleted as
// own.
func foreign(live *unstructured.Unstructured, own Owner) string {
	ann := live.GetAnnotations()
	switch id := ann[OwnerAnnotation]; {
	case own.ID == "":
		return "no owner ID to act as: the state of an earlier build of the provider"
	case id == own.ID:
		return ""
	case id == "":
		return "written by no Terraform resource"
	case ann[InstallationAnnotation] != own.Installation:
		return fmt.Sprintf("written by another Terraform resource for the installation %q", ann[InstallationAnnotation])
	default:
		return "written by another Terraform resource for an installation of this name"
	}
}

func describe(ref ObjectRef, why string) string {
	return fmt.Sprintf("%s %s/%s (%s)", ref.Kind, ref.Namespace, ref.Name, why)
}

// claim reads the objects and refuses, before anything is written, those
// another owner wrote; it returns the resourceVersions of those that
// exist, by Key. Only own's objects are written again, also when no
// Installation stands on them: the resource keeps its owner ID for as
// long as it is in a state (an Installation deleted outside Terraform
// included), and objects of another ID are another state's, whether its
// apply has not written its Installation yet or its state was lost (see
// the security guide: they are taken over deliberately, never by a
// write).
func (w *Writer) claim(ctx context.Context, own Owner, objs []Object) (map[string]string, error) {
	if own.ID == "" || own.Installation == "" {
		return nil, errors.New("no owner to write the objects as")
	}
	var refused []string
	versions := map[string]string{}
	for _, o := range objs {
		ref := o.Ref()
		u, err := w.dynamic.Resource(kindGVR[o.Kind]).Namespace(ref.Namespace).Get(ctx, o.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return nil, w.callError(err, fmt.Sprintf("reading %s %s/%s", o.Kind, ref.Namespace, o.Name))
		}
		versions[o.Key()] = u.GetResourceVersion()
		switch why := foreign(u, own); {
		case why == "":
		case o.Kind == KindInstallation:
			refused = append([]string{describe(ref, why)}, refused...)
		default:
			refused = append(refused, describe(ref, why))
		}
	}
	if len(refused) > 0 {
		return nil, &NotOwnedError{Objects: refused}
	}
	return versions, nil
}

// Delete deletes the objects own wrote; those already gone are fine.
// Those another owner wrote are left, and named in notOwned; err says
// what could not be done.
func (w *Writer) Delete(ctx context.Context, own Owner, refs []ObjectRef) (notOwned *NotOwnedError, err error) {
	var errs []error
	for _, ref := range refs {
		gvr, ok := kindGVR[ref.Kind]
		if !ok {
			errs = append(errs, fmt.Errorf("%s %s: not a kind a remote installation writes", ref.Kind, ref.Name))
			continue
		}
		res := w.dynamic.Resource(gvr).Namespace(ref.Namespace)
		u, err := res.Get(ctx, ref.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			errs = append(errs, w.callError(err, fmt.Sprintf("reading %s %s/%s", ref.Kind, ref.Namespace, ref.Name)))
			continue
		}
		if why := foreign(u, own); why != "" {
			if notOwned == nil {
				notOwned = &NotOwnedError{}
			}
			notOwned.Objects = append(notOwned.Objects, describe(ref, why))
			continue
		}
		// The object read is the one deleted, not one another owner
		// wrote in between.
		uid := u.GetUID()
		err = res.Delete(ctx, ref.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, w.callError(err, fmt.Sprintf("deleting %s %s/%s", ref.Kind, ref.Namespace, ref.Name)))
		}
	}
	return notOwned, errors.Join(errs...)
}
