package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/target"
)

// NotReadyError says that an object (or a selection of objects) is not
// ready yet. It is not a failure: the caller checks again later.
type NotReadyError struct {
	// Object names what is not ready.
	Object string
	// Reason says why.
	Reason string
}

func (e *NotReadyError) Error() string { return e.Object + " is not ready: " + e.Reason }

func notReady(u *unstructured.Unstructured, format string, args ...any) *NotReadyError {
	return &NotReadyError{Object: describe(u), Reason: fmt.Sprintf(format, args...)}
}

func describe(u *unstructured.Unstructured) string {
	if u.GetNamespace() == "" {
		return fmt.Sprintf("%s %s", u.GetKind(), u.GetName())
	}
	return fmt.Sprintf("%s %s/%s", u.GetKind(), u.GetNamespace(), u.GetName())
}

// IsDefaultChecked reports whether the default readiness check knows the
// kind: Pod, ReplicationController and apps' Deployment, ReplicaSet,
// StatefulSet and DaemonSet.
func IsDefaultChecked(gk schema.GroupKind) bool {
	switch gk.String() {
	case "Pod", "Deployment.apps", "ReplicaSet.apps", "StatefulSet.apps", "DaemonSet.apps", "ReplicationController":
		return true
	}
	return false
}

// CheckObjectReady is Landscaper's default readiness check of one object:
// nil if it is ready or of a kind the check does not know, a
// *NotReadyError if not, another error if it cannot be read as its kind.
func CheckObjectReady(u *unstructured.Unstructured) error {
	var reason string
	var err error
	switch u.GroupVersionKind().GroupKind().String() {
	case "Pod":
		var pod corev1.Pod
		if err = fromUnstructured(u, &pod); err == nil {
			reason = podNotReady(&pod)
		}
	case "Deployment.apps":
		var d appsv1.Deployment
		if err = fromUnstructured(u, &d); err == nil {
			reason = deploymentNotReady(&d)
		}
	case "ReplicaSet.apps":
		var rs appsv1.ReplicaSet
		if err = fromUnstructured(u, &rs); err == nil {
			reason = replicaSetNotReady(&rs)
		}
	case "StatefulSet.apps":
		var s appsv1.StatefulSet
		if err = fromUnstructured(u, &s); err == nil {
			reason = statefulSetNotReady(&s)
		}
	case "DaemonSet.apps":
		var ds appsv1.DaemonSet
		if err = fromUnstructured(u, &ds); err == nil {
			reason = daemonSetNotReady(&ds)
		}
	case "ReplicationController":
		var rc corev1.ReplicationController
		if err = fromUnstructured(u, &rc); err == nil {
			reason = replicationControllerNotReady(&rc)
		}
	}
	if err != nil {
		return fmt.Errorf("%s cannot be read as its kind: %w", describe(u), err)
	}
	if reason != "" {
		return notReady(u, "%s", reason)
	}
	return nil
}

func fromUnstructured(u *unstructured.Unstructured, v any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, v)
}

func outdatedGeneration(observed, generation int64) string {
	return fmt.Sprintf("observed generation outdated (%d/%d)", observed, generation)
}

func notEnoughReplicas(ready, want int32) string {
	return fmt.Sprintf("not enough ready replicas (%d/%d)", ready, want)
}

func podNotReady(p *corev1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type != corev1.PodReady {
			continue
		}
		// A completed pod (of a Job, say) never becomes Ready and is done.
		if c.Reason == "PodCompleted" || c.Status == corev1.ConditionTrue {
			return ""
		}
		return fmt.Sprintf("condition %q has status %s (expected True) due to %s: %s", c.Type, c.Status, c.Reason, c.Message)
	}
	return `condition "Ready" is missing`
}

func deploymentNotReady(d *appsv1.Deployment) string {
	if d.Status.ObservedGeneration < d.Generation {
		return outdatedGeneration(d.Status.ObservedGeneration, d.Generation)
	}
	var want int32
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	if want != d.Status.Replicas || want != d.Status.UpdatedReplicas || want != d.Status.AvailableReplicas {
		return notEnoughReplicas(d.Status.AvailableReplicas, want)
	}
	return ""
}

func statefulSetNotReady(s *appsv1.StatefulSet) string {
	if s.Status.ObservedGeneration < s.Generation {
		return outdatedGeneration(s.Status.ObservedGeneration, s.Generation)
	}
	want := int32(1)
	if s.Spec.Replicas != nil {
		want = *s.Spec.Replicas
	}
	if s.Status.UpdatedReplicas < want || s.Status.AvailableReplicas < want {
		return notEnoughReplicas(s.Status.AvailableReplicas, want)
	}
	return ""
}

func daemonSetNotReady(ds *appsv1.DaemonSet) string {
	if ds.Status.ObservedGeneration < ds.Generation {
		return outdatedGeneration(ds.Status.ObservedGeneration, ds.Generation)
	}
	var maxUnavailable int32
	if ds.Status.DesiredNumberScheduled > 0 && ds.Spec.UpdateStrategy.Type == appsv1.RollingUpdateDaemonSetStrategyType &&
		ds.Spec.UpdateStrategy.RollingUpdate != nil {
		if n, err := intstr.GetScaledValueFromIntOrPercent(ds.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable,
			int(ds.Status.DesiredNumberScheduled), false); err == nil {
			maxUnavailable = int32(n)
		}
	}
	if need := ds.Status.DesiredNumberScheduled - maxUnavailable; ds.Status.CurrentNumberScheduled < need {
		return notEnoughReplicas(ds.Status.CurrentNumberScheduled, need)
	}
	return ""
}

func replicaSetNotReady(rs *appsv1.ReplicaSet) string {
	if rs.Status.ObservedGeneration < rs.Generation {
		return outdatedGeneration(rs.Status.ObservedGeneration, rs.Generation)
	}
	for _, c := range rs.Status.Conditions {
		if c.Type == appsv1.ReplicaSetReplicaFailure && c.Status != corev1.ConditionFalse {
			return fmt.Sprintf("condition %q has status %s (expected False) due to %s: %s", c.Type, c.Status, c.Reason, c.Message)
		}
	}
	want := int32(1)
	if rs.Spec.Replicas != nil {
		want = *rs.Spec.Replicas
	}
	if rs.Status.ReadyReplicas < want {
		return notEnoughReplicas(rs.Status.ReadyReplicas, want)
	}
	return ""
}

func replicationControllerNotReady(rc *corev1.ReplicationController) string {
	if rc.Status.ObservedGeneration < rc.Generation {
		return outdatedGeneration(rc.Status.ObservedGeneration, rc.Generation)
	}
	for _, c := range rc.Status.Conditions {
		if c.Type == corev1.ReplicationControllerReplicaFailure && c.Status != corev1.ConditionFalse {
			return fmt.Sprintf("condition %q has status %s (expected False) due to %s: %s", c.Type, c.Status, c.Reason, c.Message)
		}
	}
	want := int32(1)
	if rc.Spec.Replicas != nil {
		want = *rc.Spec.Replicas
	}
	if rc.Status.ReadyReplicas < want {
		return notEnoughReplicas(rc.Status.ReadyReplicas, want)
	}
	return ""
}

// CheckRequirements is a custom readiness check's test of one object: nil
// if every requirement holds, a *NotReadyError naming the first that does
// not, another error for a requirement that cannot be evaluated.
func CheckRequirements(u *unstructured.Unstructured, reqs []RequirementSpec) error {
	for _, r := range reqs {
		fields, err := findFields(u.Object, r.JSONPath)
		if err != nil {
			return err
		}
		if len(fields) == 0 {
			if r.Operator == OpDoesNotExist {
				continue
			}
			return notReady(u, "field with JSON path %s does not exist", r.JSONPath)
		}
		if r.Operator == OpExists {
			continue
		}
		values, err := requirementValues(r.Values)
		if err != nil {
			return err
		}
		for _, f := range fields {
			if !matches(f, values, r.Operator) {
				return notReady(u, "resource requirement is not fulfilled for field %s", r.JSONPath)
			}
		}
	}
	return nil
}

// requirementValues unwraps the {"value": X} objects of a requirement.
func requirementValues(raw []json.RawMessage) ([]any, error) {
	out := make([]any, 0, len(raw))
	for i, r := range raw {
		var m map[string]any
		if err := json.Unmarshal(r, &m); err != nil {
			return nil, fmt.Errorf("values[%d] must be an object with a value key", i)
		}
		v, ok := m["value"]
		if !ok {
			return nil, fmt.Errorf("values[%d] does not contain the value key", i)
		}
		out = append(out, v)
	}
	return out, nil
}

// matches compares a field with the values. Both sides are plain JSON
// values, so numbers are float64 on both. An existing field never
// satisfies DoesNotExist.
func matches(field any, values []any, op Operator) bool {
	switch op {
	case OpEquals, OpDoubleEquals, OpIn:
		for _, v := range values {
			if reflect.DeepEqual(field, v) {
				return true
			}
		}
		return false
	case OpNotEquals:
		return len(values) > 0 && !reflect.DeepEqual(field, values[0])
	case OpNotIn:
		for _, v := range values {
			if reflect.DeepEqual(field, v) {
				return false
			}
		}
		return true
	}
	return false
}

// CheckReadiness runs the readiness checks once: the default check of
// every managed object (which must exist, and be ready if its kind is
// known; with allMustExist false only objects of known kinds are looked
// at, as Landscaper's helm deployer does), then each enabled custom check.
// It returns nil when everything is ready, a *NotReadyError for the first
// thing that is not, or an API error.
func CheckReadiness(ctx context.Context, cl *target.Cluster, cfg ReadinessCheckConfiguration,
	managed ManagedResourceStatusList, allMustExist bool) error {
	return checkReadiness(ctx, cl, cfg, managed, allMustExist, nil)
}

// checkReadiness is CheckReadiness that takes objects from fresh (by key)
// instead of reading them: what the API server answered to writes made a
// moment ago.
func checkReadiness(ctx context.Context, cl *target.Cluster, cfg ReadinessCheckConfiguration,
	managed ManagedResourceStatusList, allMustExist bool, fresh map[string]*unstructured.Unstructured) error {
	if !cfg.DisableDefault {
		for _, mr := range managed {
			ref := mr.Resource
			gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
			if !allMustExist && !IsDefaultChecked(gvk.GroupKind()) {
				continue
			}
			u, ok := fresh[refKey(ref)]
			if !ok {
				var err error
				u, err = cl.Get(ctx, gvk, ref.Namespace, ref.Name)
				if apierrors.IsNotFound(err) {
					return &NotReadyError{Object: refString(ref), Reason: "it does not exist"}
				}
				if err != nil {
					return err
				}
			}
			if err := CheckObjectReady(u); err != nil {
				return err
			}
		}
	}
	for _, c := range cfg.CustomReadinessChecks {
		if c.Disabled {
			continue
		}
		objs, err := selectObjects(ctx, cl, c)
		if err != nil {
			return err
		}
		for _, u := range objs {
			if err := CheckRequirements(u, c.Requirements); err != nil {
				var nr *NotReadyError
				if ok := asNotReady(err, &nr); ok {
					nr.Reason = fmt.Sprintf("custom readiness check %q: %s", c.Name, nr.Reason)
				}
				return err
			}
		}
	}
	return nil
}

func asNotReady(err error, nr **NotReadyError) bool {
	v, ok := err.(*NotReadyError) //nolint:errorlint // constructed here, never wrapped
	if ok {
		*nr = v
	}
	return ok
}

// selectObjects reads a custom check's objects: each of resourceSelector
// (a missing one is not ready) and everything labelSelector matches (an
// empty match is not ready).
func selectObjects(ctx context.Context, cl *target.Cluster, c CustomReadinessCheckConfiguration) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, r := range c.Resource {
		u, err := cl.Get(ctx, r.GroupVersionKind(), r.Namespace, r.Name)
		if apierrors.IsNotFound(err) {
			return nil, &NotReadyError{Object: r.String(), Reason: fmt.Sprintf("custom readiness check %q: it does not exist", c.Name)}
		}
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	if ls := c.LabelSelector; ls != nil {
		ri, _, err := cl.Resource(schema.FromAPIVersionAndKind(ls.APIVersion, ls.Kind), "")
		if err != nil {
			return nil, err
		}
		list, err := ri.List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(ls.Labels).String()})
		if err != nil {
			return nil, err
		}
		if len(list.Items) == 0 {
			return nil, &NotReadyError{Object: fmt.Sprintf("%s %s with labels %s", ls.APIVersion, ls.Kind, labels.Set(ls.Labels)),
				Reason: fmt.Sprintf("custom readiness check %q: no object matches", c.Name)}
		}
		for i := range list.Items {
			out = append(out, &list.Items[i])
		}
	}
	return out, nil
}

func refString(ref corev1.ObjectReference) string {
	if ref.Namespace == "" {
		return strings.TrimSpace(ref.Kind + " " + ref.Name)
	}
	return ref.Kind + " " + ref.Namespace + "/" + ref.Name
}
