// Package testenv runs a real Kubernetes control plane for tests: etcd,
// kube-apiserver and kube-controller-manager as local processes on
// 127.0.0.1, built from the Go modules pinned in tools/testenv by
// scripts/testenv-build.sh. Test packages start one environment each through
// Main in their TestMain. Unix only: processes are managed by process group.
package testenv
