// Package e2e drives the real terraform CLI against the real provider
// binary, for what terraform-plugin-testing cannot do: send Ctrl-C, read
// the provider's logs, and start from state an earlier release wrote.
// Like acceptance tests, it runs only with TF_ACC set, and needs terraform
// on PATH. No network is needed: the provider is found through
// dev_overrides, so `terraform init` is skipped.
package e2e

import (
	"os"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
)

// providerDir holds the provider binary built by TestMain; buildErr says
// why there is none.
var (
	providerDir string
	buildErr    error
)

func TestMain(m *testing.M) {
	dir, cleanup, err := acctest.BuildProvider()
	providerDir, buildErr = dir, err
	code := m.Run()
	cleanup()
	os.Exit(code)
}

func newWorkspace(t *testing.T) *acctest.Workspace {
	t.Helper()
	return acctest.NewWorkspace(t, providerDir, buildErr)
}

// execution returns the attributes of landscaper_execution.app.
func execution(w *acctest.Workspace) map[string]any {
	w.T.Helper()
	return w.Attributes("landscaper_execution", "app")
}

// itemField reads status.deploy_items[item][field] from state attributes.
func itemField(attrs map[string]any, item, field string) any {
	return acctest.Dig(attrs, "status", "deploy_items", item, field)
}
