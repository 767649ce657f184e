package provider

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// The blueprint data source masks by derivation as the resource does:
// its rendered items and every installation's imports show no canary.
func TestAccBlueprintDataSource_masksByDerivation(t *testing.T) {
	t.Parallel()
	dir, err := filepath.Abs(filepath.Join("testdata", "installation", "masking"))
	if err != nil {
		t.Fatal(err)
	}
	ds := "data.landscaper_blueprint.app"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
data "landscaper_blueprint" "app" {
  blueprint         = { path = %q }
  imports           = { plain = "blue" }
  sensitive_imports = { password = %q }
}`, dir, maskingPassword),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(ds, tfjsonpath.New(attrDeployItems).AtMapKey("transforms").AtMapKey("config"),
					knownvalue.StringRegexp(regexp.MustCompile(`"b64":"\*\*\*".*"concat":"blue-\*\*\*"`))),
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("installations").AtMapKey("").AtMapKey("imports"),
					knownvalue.StringRegexp(regexp.MustCompile(`"password":"\*\*\*"`))),
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("installations").AtMapKey("producer").AtMapKey("imports"),
					knownvalue.StringExact(`{"pw":"***"}`)),
				noCanariesInData{ds, noCanaries{maskingCanaries()}},
			},
		}},
	})
}

// noCanariesInData fails when a canary is in an attribute of a data
// source that is not sensitive.
type noCanariesInData struct {
	addr     string
	canaries noCanaries
}

func (c noCanariesInData) CheckState(_ context.Context, req statecheck.CheckStateRequest, resp *statecheck.CheckStateResponse) {
	for _, r := range req.State.Values.RootModule.Resources {
		if r.Address != c.addr {
			continue
		}
		for attr, v := range r.AttributeValues {
			if attr == attrSensitiveImports {
				continue
			}
			if s := c.canaries.find(fmt.Sprint(v)); s != "" {
				resp.Error = fmt.Errorf("%s: %s holds %q: %v", r.Address, attr, s, v)
				return
			}
		}
	}
}
