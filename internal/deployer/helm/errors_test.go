package helm

import (
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
)

// helm's errors are classified as the manifest deployer classifies the
// API server's answers: a refused credential or permission fails at once,
// whether helm kept the API error or flattened it into text.
func TestHelmErrorsFollowTheManifestDeployersModel(t *testing.T) {
	secrets := schema.GroupResource{Resource: "secrets"}
	forbidden := apierrors.NewForbidden(secrets, "", errors.New(`User "system:serviceaccount:ns:sa" cannot list resource "secrets" in API group "" in the namespace "ns"`))
	cases := []struct {
		name      string
		err       *core.Error
		transient bool
		code      string
	}{
		{"forbidden, wrapped", helmError("Install", "unable to install", fmt.Errorf("query: failed to query with labels: %w", forbidden)), false, core.CodeUnauthorized},
		{"forbidden, as text", helmError("Upgrade", "unable to upgrade", fmt.Errorf("failed to create resource: %s", forbidden.Error())), false, core.CodeUnauthorized},
		{"unauthorized", kubeError("GetRelease", apierrors.NewUnauthorized("bad token")), false, core.CodeUnauthorized},
		{"release records forbidden", kubeError("GetRelease", fmt.Errorf("list: %w", forbidden)), false, core.CodeUnauthorized},
		{"conflict", kubeError("GetRelease", apierrors.NewConflict(secrets, "x", errors.New("changed"))), true, ""},
		{"throttled", helmError("Install", "unable to install", apierrors.NewTooManyRequests("slow down", 1)), true, ""},
		{"server error", kubeError("GetRelease", apierrors.NewInternalError(errors.New("etcd"))), true, ""},
		{"network", kubeError("GetRelease", errors.New("dial tcp 127.0.0.1:1: connect: connection refused")), true, ""},
		{"chart error", helmError("Install", "unable to install", errors.New(`template: x/templates/a.yaml:1: bad`)), false, core.CodeConfigurationProblem},
	}
	for _, c := range cases {
		if c.err.Transient != c.transient || (c.code != "" && !core.Unrecoverable(c.err.Codes)) ||
			(c.code != "" && c.err.Codes[0] != c.code) {
			t.Errorf("%s: %+v, want transient=%v code %q", c.name, c.err, c.transient, c.code)
		}
	}
	if e := kubeError("GetRelease", fmt.Errorf("list: %w", forbidden)); e.Reason != "Unauthorized" || e.Message == "" {
		t.Errorf("the message must keep the API server's words (user, verb, object): %+v", e)
	}
}
