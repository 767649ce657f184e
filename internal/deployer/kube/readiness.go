package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
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

// NotReadyError says that objects are not ready yet. It is not a
// failure: the caller checks again later. It names the first object not
// ready and why, in the words a user would use, and the others found in
// the same check.
type NotReadyError struct {
	// Object names what is not ready.
	Object string
	// Reason says why.
	Reason string
	// Others are further objects not ready in the same check.
	Others []*NotReadyError
	// Unlisted counts the objects not ready beyond those named.
	Unlisted int
}

func (e *NotReadyError) Error() string {
	parts := []string{e.Object + ": " + e.Reason}
	for _, o := range e.Others {
		parts = append(parts, o.Object+": "+o.Reason)
	}
	if e.Unlisted > 0 {
		parts = append(parts, fmt.Sprintf("and %d more", e.Unlisted))
	}
	return strings.Join(parts, "; ")
}

// maxNamedNotReady bounds the objects a wait names (and looks at the pods
// of): a namespace of a hundred pending objects reads as a summary.
const maxNamedNotReady = 5

// notReadyList gathers the objects of one check that are not ready.
type notReadyList struct {
	first *NotReadyError
}

func (l *notReadyList) add(nr *NotReadyError) {
	switch {
	case l.first == nil:
		l.first = nr
	case len(l.first.Others)+1 < maxNamedNotReady:
		l.first.Others = append(l.first.Others, nr)
	default:
		l.first.Unlisted++
	}
}

// named is how many objects are named so far.
func (l *notReadyList) named() int {
	if l.first == nil {
		return 0
	}
	return 1 + len(l.first.Others)
}

func (l *notReadyList) err() error {
	if l.first == nil {
		return nil
	}
	return l.first
}

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
	return fmt.Sprintf("its controller has not yet seen generation %d (observed %d)", generation, observed)
}

func replicas(have, want int32, what string) string {
	return fmt.Sprintf("%d of %d replicas %s", have, want, what)
}

// podNotReady is "" for a ready (or completed) pod, else why it is not
// ready, in the words kubectl would show.
func podNotReady(p *corev1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type != corev1.PodReady {
			continue
		}
		// A completed pod (of a Job, say) never becomes Ready and is done.
		if c.Reason == "PodCompleted" || c.Status == corev1.ConditionTrue {
			return ""
		}
	}
	return podProblem(p)
}

// podProblem says what holds a pod back: a container waiting or failed
// (ImagePullBackOff, CrashLoopBackOff), scheduling, or its phase.
func podProblem(p *corev1.Pod) string {
	if p.DeletionTimestamp != nil {
		return "terminating"
	}
	statuses := append(append([]corev1.ContainerStatus(nil), p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...)
	for _, cs := range statuses {
		if w := cs.State.Waiting; w != nil && w.Reason != "" {
			return withMessage("container "+cs.Name+": "+w.Reason, w.Message)
		}
	}
	for _, cs := range statuses {
		if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
			return withMessage(fmt.Sprintf("container %s: exited with code %d (%s)", cs.Name, t.ExitCode, t.Reason), t.Message)
		}
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			return withMessage("not scheduled: "+c.Reason, c.Message)
		}
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status != corev1.ConditionTrue {
			if c.Reason != "" {
				return withMessage("not ready: "+c.Reason, c.Message)
			}
			return "not ready"
		}
	}
	if p.Status.Phase == "" || p.Status.Phase == corev1.PodPending {
		return "pending"
	}
	return fmt.Sprintf("%s, not ready", p.Status.Phase)
}

// maxMessage bounds a quoted status message (an image pull's can be long).
const maxMessage = 160

func withMessage(s, msg string) string {
	msg = strings.TrimSpace(msg)
	if msg == "" {
		return s
	}
	if len(msg) > maxMessage {
		msg = msg[:maxMessage] + "..."
	}
	return s + ": " + msg
}

func deploymentNotReady(d *appsv1.Deployment) string {
	if d.Status.ObservedGeneration < d.Generation {
		return outdatedGeneration(d.Status.ObservedGeneration, d.Generation)
	}
	var want int32
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	switch {
	case d.Status.UpdatedReplicas < want:
		return replicas(d.Status.UpdatedReplicas, want, "updated")
	case want != d.Status.AvailableReplicas:
		return replicas(d.Status.AvailableReplicas, want, "available")
	case want != d.Status.Replicas:
		return fmt.Sprintf("%d replicas exist, %d wanted", d.Status.Replicas, want)
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
	if s.Status.UpdatedReplicas < want {
		return replicas(s.Status.UpdatedReplicas, want, "updated")
	}
	if s.Status.AvailableReplicas < want {
		return replicas(s.Status.AvailableReplicas, want, "available")
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
		return fmt.Sprintf("%d of %d pods scheduled", ds.Status.CurrentNumberScheduled, need)
	}
	return ""
}

func replicaSetNotReady(rs *appsv1.ReplicaSet) string {
	if rs.Status.ObservedGeneration < rs.Generation {
		return outdatedGeneration(rs.Status.ObservedGeneration, rs.Generation)
	}
	for _, c := range rs.Status.Conditions {
		if c.Type == appsv1.ReplicaSetReplicaFailure && c.Status != corev1.ConditionFalse {
			return withMessage(fmt.Sprintf("%s: %s", c.Type, c.Reason), c.Message)
		}
	}
	want := int32(1)
	if rs.Spec.Replicas != nil {
		want = *rs.Spec.Replicas
	}
	if rs.Status.ReadyReplicas < want {
		return replicas(rs.Status.ReadyReplicas, want, "ready")
	}
	return ""
}

func replicationControllerNotReady(rc *corev1.ReplicationController) string {
	if rc.Status.ObservedGeneration < rc.Generation {
		return outdatedGeneration(rc.Status.ObservedGeneration, rc.Generation)
	}
	for _, c := range rc.Status.Conditions {
		if c.Type == corev1.ReplicationControllerReplicaFailure && c.Status != corev1.ConditionFalse {
			return withMessage(fmt.Sprintf("%s: %s", c.Type, c.Reason), c.Message)
		}
	}
	want := int32(1)
	if rc.Spec.Replicas != nil {
		want = *rc.Spec.Replicas
	}
	if rc.Status.ReadyReplicas < want {
		return replicas(rc.Status.ReadyReplicas, want, "ready")
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
			return notReady(u, "requirement %s not met: the field does not exist", requirementText(r))
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
				return notReady(u, "requirement %s not met", requirementText(r))
			}
		}
	}
	return nil
}

// requirementText spells a requirement as the user wrote it: its path,
// operator and wanted values (never the live value, which may be data
// the user did not mean to show).
func requirementText(r RequirementSpec) string {
	t := r.JSONPath + " " + string(r.Operator)
	if r.Operator == OpExists || r.Operator == OpDoesNotExist {
		return t
	}
	vals, err := requirementValues(r.Values)
	if err != nil {
		return t
	}
	var parts []string
	for _, v := range vals {
		b, _ := json.Marshal(v)
		parts = append(parts, string(b))
	}
	return t + " " + strings.Join(parts, ", ")
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
// moment ago. It names every object not ready (up to maxNamedNotReady,
// with what their pods say for workloads), not only the first.
func checkReadiness(ctx context.Context, cl *target.Cluster, cfg ReadinessCheckConfiguration,
	managed ManagedResourceStatusList, allMustExist bool, fresh map[string]*unstructured.Unstructured) error {
	var list notReadyList
	if !cfg.DisableDefault {
		for _, mr := range managed {
			ref := mr.Resource
			gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
			if !allMustExist && !IsDefaultChecked(gvk.GroupKind()) {
				continue
			}
			u, ok := fresh[refKey(ref)]
			if !ok && list.first != nil && !IsDefaultChecked(gvk.GroupKind()) {
				// Another look follows anyway; until then only the
				// workloads among the rest are worth a request each.
				continue
			}
			if !ok {
				var err error
				u, err = cl.Get(ctx, gvk, ref.Namespace, ref.Name)
				if apierrors.IsNotFound(err) {
					list.add(&NotReadyError{Object: refString(ref), Reason: "it does not exist"})
					continue
				}
				if err != nil {
					return err
				}
			}
			err := CheckObjectReady(u)
			var nr *NotReadyError
			if !asNotReady(err, &nr) {
				if err != nil {
					return err
				}
				continue
			}
			if list.named() < maxNamedNotReady {
				if hint := podHint(ctx, cl, u); hint != "" {
					nr.Reason += " (" + hint + ")"
				}
			}
			list.add(nr)
		}
	}
	for _, c := range cfg.CustomReadinessChecks {
		if c.Disabled {
			continue
		}
		objs, err := selectObjects(ctx, cl, c)
		var nr *NotReadyError
		if asNotReady(err, &nr) {
			list.add(nr)
			continue
		}
		if err != nil {
			return err
		}
		for _, u := range objs {
			err := CheckRequirements(u, c.Requirements)
			if !asNotReady(err, &nr) {
				if err != nil {
					return err
				}
				continue
			}
			why := fmt.Sprintf("custom readiness check %q: %s", c.Name, nr.Reason)
			if state := jobState(u); state != "" {
				why = state + ", " + why
			}
			nr.Reason = why
			list.add(nr)
		}
	}
	return list.err()
}

// podHint says what the pods of a workload that is not ready say about
// it: the first pod with a problem, or that there is none yet. It is
// best effort: a pod that cannot be listed gives no hint.
func podHint(ctx context.Context, cl *target.Cluster, u *unstructured.Unstructured) string {
	if !workloadKinds[u.GetKind()] {
		return ""
	}
	raw, found, _ := unstructured.NestedMap(u.Object, "spec", "selector")
	if !found {
		return ""
	}
	var ls metav1.LabelSelector
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &ls); err != nil {
		return ""
	}
	sel, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil || sel.Empty() {
		return ""
	}
	ri, _, err := cl.Resource(schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, u.GetNamespace())
	if err != nil {
		return ""
	}
	pods, err := ri.List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return ""
	}
	if len(pods.Items) == 0 {
		return "no pods yet"
	}
	for i := range pods.Items {
		var p corev1.Pod
		if fromUnstructured(&pods.Items[i], &p) != nil {
			continue
		}
		if why := podNotReady(&p); why != "" {
			return "pod " + p.Name + ": " + why
		}
	}
	return ""
}

// jobState says, for a Job, whether it completed, failed or still runs,
// so a custom check waiting on a Job says so in those words.
func jobState(u *unstructured.Unstructured) string {
	if u.GroupVersionKind().GroupKind().String() != "Job.batch" {
		return ""
	}
	var j batchv1.Job
	if fromUnstructured(u, &j) != nil {
		return ""
	}
	for _, c := range j.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			return "complete"
		case batchv1.JobFailed:
			return withMessage("failed: "+c.Reason, c.Message)
		}
	}
	return fmt.Sprintf("not complete (%d active, %d succeeded, %d failed pods)", j.Status.Active, j.Status.Succeeded, j.Status.Failed)
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
