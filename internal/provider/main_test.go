//go:build unix

package provider

import (
	"os"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/ocitest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/testenv"
)

// kubeEnv is the Kubernetes control plane of the acceptance tests that
// deploy to a cluster. It is started only for acceptance runs (TF_ACC), so
// unit tests need no control plane.
var kubeEnv *testenv.Env

// registryCA issues the certificates of the tests' OCI registries. The
// provider trusts it through SSL_CERT_FILE, as a user's provider trusts a
// private CA: set before anything verifies a certificate, since Go reads
// the system roots once.
var registryCA *ocitest.CA

func TestMain(m *testing.M) {
	var err error
	if registryCA, err = ocitest.NewCA(); err != nil {
		panic(err)
	}
	dir, err := os.MkdirTemp("", "provider-test-ca-")
	if err != nil {
		panic(err)
	}
	caFile, err := registryCA.WriteFile(dir)
	if err != nil {
		panic(err)
	}
	_ = os.Setenv("SSL_CERT_FILE", caFile)
	code := 0
	if os.Getenv("TF_ACC") == "" {
		code = m.Run()
	} else {
		code = testenv.Main(m, &kubeEnv)
	}
	_ = os.RemoveAll(dir)
	os.Exit(code)
}
