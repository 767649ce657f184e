//go:build unix

package provider

import (
	"os"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/testenv"
)

// kubeEnv is the Kubernetes control plane of the acceptance tests that
// deploy to a cluster. It is started only for acceptance runs (TF_ACC), so
// unit tests need no control plane.
var kubeEnv *testenv.Env

func TestMain(m *testing.M) {
	if os.Getenv("TF_ACC") == "" {
		os.Exit(m.Run())
	}
	os.Exit(testenv.Main(m, &kubeEnv))
}
