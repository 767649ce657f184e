package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
)

// sourceProviderEnv, set in the environment of this test binary, makes it
// serve stubProvider under the provider address it holds instead of
// running tests.
const sourceProviderEnv = "LANDSCAPER_E2E_SOURCE_PROVIDER"

// stubProvider stands in for the provider of a `moved` block's source
// (the helm, kubernetes or a kubectl provider), which the tests may not
// use. Terraform needs every provider the state names to be installed and
// to answer for its schema (it loads the schemas of the state's providers
// to render a plan), but a move across types only calls the destination
// provider. So the stub has no resource types, and any other call
// crashes it (the embedded interface is nil), which fails the test:
// the move must not need the source provider for anything else.
type stubProvider struct{ tfprotov6.ProviderServer }

func (stubProvider) GetMetadata(context.Context, *tfprotov6.GetMetadataRequest) (*tfprotov6.GetMetadataResponse, error) {
	return &tfprotov6.GetMetadataResponse{}, nil
}

func (stubProvider) GetProviderSchema(context.Context, *tfprotov6.GetProviderSchemaRequest) (*tfprotov6.GetProviderSchemaResponse, error) {
	return &tfprotov6.GetProviderSchemaResponse{Provider: &tfprotov6.Schema{Block: &tfprotov6.SchemaBlock{}}}, nil
}

func (stubProvider) StopProvider(context.Context, *tfprotov6.StopProviderRequest) (*tfprotov6.StopProviderResponse, error) {
	return &tfprotov6.StopProviderResponse{}, nil
}

// serveStubProvider serves stubProvider as the provider address, until
// Terraform stops it.
func serveStubProvider(address string) {
	if err := tf6server.Serve(address, func() tfprotov6.ProviderServer { return stubProvider{} }); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// installStubProvider makes Terraform in w find stubProvider as the
// provider of address (registry.terraform.io/hashicorp/helm): an
// executable named as Terraform looks for it, which runs this test binary.
func installStubProvider(t *testing.T, w *acctest.Workspace, address string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(address, "/")
	dir := t.TempDir()
	script := fmt.Sprintf("#!/bin/sh\nexec env %s=%s %q\n", sourceProviderEnv, address, self)
	if err := os.WriteFile(filepath.Join(dir, "terraform-provider-"+parts[len(parts)-1]), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	w.Override(strings.Join(parts[len(parts)-2:], "/"), dir)
}
