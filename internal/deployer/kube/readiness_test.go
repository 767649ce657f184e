package kube

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// What a wait says is what a user reads when it times out: each object
// in the words kubectl would use, never the fields' raw Go names.
func TestNotReadyInUserWords(t *testing.T) {
	cases := []struct{ y, want string }{
		{"{apiVersion: apps/v1, kind: Deployment, metadata: {name: web, namespace: example, generation: 1}, spec: {replicas: 1}, status: {observedGeneration: 1, replicas: 1, updatedReplicas: 1, availableReplicas: 0}}",
			"Deployment example/web: 0 of 1 replicas available"},
		{"{apiVersion: apps/v1, kind: Deployment, metadata: {name: web, namespace: example, generation: 2}, spec: {replicas: 1}, status: {observedGeneration: 1}}",
			"Deployment example/web: its controller has not yet seen generation 2 (observed 1)"},
		{"{apiVersion: apps/v1, kind: StatefulSet, metadata: {name: db, namespace: example, generation: 1}, spec: {replicas: 3}, status: {observedGeneration: 1, updatedReplicas: 3, availableReplicas: 2}}",
			"StatefulSet example/db: 2 of 3 replicas available"},
		{"{apiVersion: v1, kind: Pod, metadata: {name: p, namespace: example}, status: {phase: Pending, containerStatuses: [{name: web, state: {waiting: {reason: ImagePullBackOff, message: 'Back-off pulling image \"nope\"'}}}]}}",
			`Pod example/p: container web: ImagePullBackOff: Back-off pulling image "nope"`},
		{"{apiVersion: v1, kind: Pod, metadata: {name: p, namespace: example}, status: {phase: Running, containerStatuses: [{name: web, state: {terminated: {exitCode: 2, reason: Error}}}]}}",
			"Pod example/p: container web: exited with code 2 (Error)"},
		{"{apiVersion: v1, kind: Pod, metadata: {name: p, namespace: example}, status: {phase: Pending, conditions: [{type: PodScheduled, status: 'False', reason: Unschedulable, message: '0/3 nodes are available'}]}}",
			"Pod example/p: not scheduled: Unschedulable: 0/3 nodes are available"},
		{"{apiVersion: v1, kind: Pod, metadata: {name: p, namespace: example}, status: {}}",
			"Pod example/p: pending"},
	}
	for _, c := range cases {
		err := CheckObjectReady(obj(t, c.y))
		var nr *NotReadyError
		if !errors.As(err, &nr) || nr.Error() != c.want {
			t.Errorf("%s:\n got %v\nwant %s", c.y, err, c.want)
		}
	}
}

func TestCustomRequirementAndJobInUserWords(t *testing.T) {
	job := obj(t, "{apiVersion: batch/v1, kind: Job, metadata: {name: migrate, namespace: example}, status: {active: 1}}")
	if got, want := jobState(job), "not complete (1 active, 0 succeeded, 0 failed pods)"; got != want {
		t.Errorf("job state %q, want %q", got, want)
	}
	failed := obj(t, "{apiVersion: batch/v1, kind: Job, metadata: {name: migrate}, status: {conditions: [{type: Failed, status: 'True', reason: BackoffLimitExceeded}]}}")
	if got := jobState(failed); got != "failed: BackoffLimitExceeded" {
		t.Errorf("failed job state %q", got)
	}
	req := RequirementSpec{JSONPath: ".status.succeeded", Operator: OpEquals, Values: []json.RawMessage{json.RawMessage(`{"value": 1}`)}}
	err := CheckRequirements(job, []RequirementSpec{req})
	if err == nil || err.Error() != "Job example/migrate: requirement .status.succeeded = 1 not met: the field does not exist" {
		t.Errorf("requirement: %v", err)
	}
	// The live value is not quoted: the selected object may be a Secret.
	sec := obj(t, "{apiVersion: v1, kind: Secret, metadata: {name: s}, data: {token: c2VjcmV0}}")
	req = RequirementSpec{JSONPath: ".data.token", Operator: OpEquals, Values: []json.RawMessage{json.RawMessage(`{"value": "x"}`)}}
	if err := CheckRequirements(sec, []RequirementSpec{req}); err == nil || strings.Contains(err.Error(), "c2VjcmV0") {
		t.Errorf("requirement on a secret: %v", err)
	}
}

func TestNotReadyListNamesEachObjectThenCounts(t *testing.T) {
	var l notReadyList
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		l.add(&NotReadyError{Object: "ConfigMap ns/" + n, Reason: "it does not exist"})
	}
	want := "ConfigMap ns/a: it does not exist; ConfigMap ns/b: it does not exist; ConfigMap ns/c: it does not exist; " +
		"ConfigMap ns/d: it does not exist; ConfigMap ns/e: it does not exist; and 2 more"
	if got := l.err().Error(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	var empty notReadyList
	if empty.err() != nil {
		t.Error("an empty list is no error")
	}
	// A long status message is cut, so one pod cannot flood the diagnostic.
	p := &corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "c",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull", Message: strings.Repeat("x", 500)}}}}}}
	if got := podProblem(p); len(got) > maxMessage+40 || !strings.HasSuffix(got, "...") {
		t.Errorf("long message not cut: %d characters", len(got))
	}
}
