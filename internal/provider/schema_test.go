package provider

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"
)

var updateGolden = flag.Bool("update", false, "rewrite the schema golden files")

// The type of every resource schema is recorded with its schema version.
// Changing a nested attribute without bumping the version would leave
// Terraform unable to tell old state from new, so this test fails until
// the version is bumped (and an upgrade path exists); then `go test -run
// TestSchemaTypesAreVersioned -update` records the new type.
func TestSchemaTypesAreVersioned(t *testing.T) {
	p := newProvider("test")
	for typeName, r := range p.routes() {
		golden := filepath.Join("testdata", "schema", typeName+".golden")
		got := fmt.Sprintf("version %d\n%s\n", r.schemaVersion(), r.objectType().String())
		want, err := os.ReadFile(golden)
		if *updateGolden || os.IsNotExist(err) {
			if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if got == string(want) {
			continue
		}
		wantVersion, _, _ := strings.Cut(string(want), "\n")
		gotVersion, _, _ := strings.Cut(got, "\n")
		if wantVersion == gotVersion {
			t.Errorf("%s: the schema's type changed but its version is still %q: bump the version, make "+
				"UpgradeResourceState read the old state, then rerun with -update", typeName, gotVersion)
		} else {
			t.Errorf("%s: schema version changed (%s -> %s): rerun with -update to record the new type", typeName, wantVersion, gotVersion)
		}
	}
	// Every routed resource must be one the framework declares too.
	declared := map[string]bool{}
	for _, f := range p.Resources(t.Context()) {
		var m resource.MetadataResponse
		f().Metadata(t.Context(), resource.MetadataRequest{ProviderTypeName: "landscaper"}, &m)
		declared[m.TypeName] = true
	}
	for typeName := range p.routes() {
		if !declared[typeName] {
			t.Errorf("%s is routed but not declared", typeName)
		}
	}
}
