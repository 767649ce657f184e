package kube

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/target"
)

// PodHealth is what the pods of an item's workloads say about it, as a
// rollout's bake looks at a canary.
type PodHealth struct {
	// Restarts is the highest restart count of a container of any pod:
	// the ExtendedDaemonSet judges a canary by its worst pod.
	Restarts int
	// Ready is true when every pod is ready (and there is at least one).
	Ready   bool
	Message string
}

// workloadKinds are the managed kinds whose pods are looked at, by the
// label selector in their spec; a managed Pod is looked at itself.
var workloadKinds = map[string]bool{"Deployment": true, "StatefulSet": true, "DaemonSet": true, "ReplicaSet": true, "Job": true}

// Health looks at the pods of the workloads st manages: their restart
// counts and readiness.
func Health(ctx context.Context, cl *target.Cluster, st State) (PodHealth, error) {
	h := PodHealth{Ready: true}
	pods := 0
	look := func(p *corev1.Pod) {
		if p.DeletionTimestamp != nil {
			return // on its way out: no longer part of the workload
		}
		pods++
		for _, cs := range append(append([]corev1.ContainerStatus(nil), p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
			if int(cs.RestartCount) > h.Restarts {
				h.Restarts = int(cs.RestartCount)
				why := ""
				if w := cs.State.Waiting; w != nil && w.Reason != "" {
					why = " (" + w.Reason + ")"
				} else if t := cs.LastTerminationState.Terminated; t != nil && t.Reason != "" {
					why = " (last " + t.Reason + ")"
				}
				h.Message = fmt.Sprintf("pod %s/%s container %s restarted %d times%s", p.Namespace, p.Name, cs.Name, cs.RestartCount, why)
			}
		}
		if podNotReady(p) != "" {
			h.Ready = false
		}
	}
	podGVK := schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
	for _, mr := range st.Managed {
		ref := mr.Resource
		gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
		switch {
		case gvk == podGVK:
			u, err := cl.Get(ctx, gvk, ref.Namespace, ref.Name)
			if apierrors.IsNotFound(err) {
				h.Ready = false
				continue
			}
			if err != nil {
				return h, err
			}
			var p corev1.Pod
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &p); err != nil {
				return h, err
			}
			look(&p)
		case workloadKinds[ref.Kind]:
			u, err := cl.Get(ctx, gvk, ref.Namespace, ref.Name)
			if apierrors.IsNotFound(err) {
				h.Ready = false
				continue
			}
			if err != nil {
				return h, err
			}
			raw, found, _ := unstructured.NestedMap(u.Object, "spec", "selector")
			if !found {
				continue
			}
			var ls metav1.LabelSelector
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &ls); err != nil {
				return h, err
			}
			sel, err := metav1.LabelSelectorAsSelector(&ls)
			if err != nil || sel.Empty() {
				continue
			}
			ri, _, err := cl.Resource(podGVK, ref.Namespace)
			if err != nil {
				return h, err
			}
			list, err := ri.List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
			if err != nil {
				return h, err
			}
			for i := range list.Items {
				var p corev1.Pod
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(list.Items[i].Object, &p); err != nil {
					return h, err
				}
				look(&p)
			}
		}
	}
	if pods == 0 {
		h.Ready = false
	}
	if !h.Ready && h.Message == "" {
		h.Message = "not every pod is ready"
	}
	return h, nil
}
