// Package testenv pins the Kubernetes control-plane commands that
// scripts/testenv-build.sh builds, so `go mod tidy` keeps their modules.
package testenv

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
)
