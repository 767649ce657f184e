package provider

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
)

// targetRefsHCL uses the provider target "prod" by name in target_lists
// and target_maps, beside an inline target whose config Terraform knows
// to be sensitive.
func targetRefsHCL() string {
	return strings.Replace(providerTargetsHCL("https://127.0.0.1:1", "t0k3n-refs-1"),
		`target_lists = { fleet = [{ name = "prod" }] }`,
		`target_lists = { fleet = [{ name = "prod" }, { type = "landscaper.gardener.cloud/kubernetes-cluster", config = sensitive(yamlencode({
    kubeconfig = yamlencode({
      apiVersion = "v1", kind = "Config", "current-context" = "c"
      clusters   = [{ name = "c", cluster = { server = "https://127.0.0.9:1" } }]
      users      = [{ name = "u", user = { token = "inl1ne-t0k3n-77" } }]
      contexts   = [{ name = "c", context = { cluster = "c", user = "u" } }]
    })
  })) }] }`, 1)
}

// The plan Terraform makes shows target_lists' and target_maps'
// references (neither attribute is sensitive as a whole) and hides only
// the inline config Terraform marked sensitive.
func TestAccInstallation_targetListsAndMapsAreNotSensitive(t *testing.T) {
	cfg := targetRefsHCL()
	if !strings.Contains(cfg, "inl1ne-t0k3n-77") {
		t.Fatal("providerTargetsHCL changed; update targetRefsHCL")
	}
	check := acctest.PlanFunc(func(req plancheck.CheckPlanRequest) error {
		for _, rc := range req.Plan.ResourceChanges {
			if rc.Address != "landscaper_installation.targets" {
				continue
			}
			sens, _ := rc.Change.AfterSensitive.(map[string]any)
			for _, a := range []string{"target_lists", "target_maps"} {
				if sens[a] == true {
					return fmt.Errorf("%s is sensitive as a whole in the plan", a)
				}
			}
			want := map[string]any{"fleet": []any{map[string]any{}, map[string]any{"config": true}}}
			if got := sens["target_lists"]; !reflect.DeepEqual(got, want) {
				return fmt.Errorf("target_lists' sensitive paths %v, want only the inline config: %v", got, want)
			}
			if got := acctest.Dig(rc.Change.After, "target_maps", "regions", "eu", "name"); got != "prod" {
				return fmt.Errorf("target_maps.regions.eu.name in the plan = %v, want prod", got)
			}
			return nil
		}
		return fmt.Errorf("no change of landscaper_installation.targets in the plan")
	})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:           cfg,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{check}},
			Check: resource.ComposeTestCheckFunc(
				resource.TestCheckResourceAttr("landscaper_installation.targets", "target_lists.fleet.0.name", "prod"),
				resource.TestCheckResourceAttr("landscaper_installation.targets", "deploy_items.fleet-1.target",
					"fleet[1]"),
			),
		}},
	})
}

// The warning names every inline target of target_lists and target_maps,
// once for the resource, and no reference.
func TestInlineTargetsWarning(t *testing.T) {
	obj := as[tftypes.Map](objectType(&installationResource{}).AttributeTypes["target_lists"])
	elem := as[tftypes.Object](withoutOptionalAttributes(as[tftypes.List](obj.ElementType).ElementType))
	target := func(name, config string) tftypes.Value {
		v := map[string]tftypes.Value{}
		for n, at := range elem.AttributeTypes {
			v[n] = tftypes.NewValue(at, nil)
		}
		v["name"] = stringValue(name)
		if config != "" {
			v["type"], v["config"] = stringValue("landscaper.gardener.cloud/kubernetes-cluster"), stringValue(config)
		}
		return tftypes.NewValue(elem, v)
	}
	list := tftypes.List{ElementType: elem}
	m := tftypes.Map{ElementType: elem}
	f := map[string]tftypes.Value{
		"target_lists": tftypes.NewValue(tftypes.Map{ElementType: list}, map[string]tftypes.Value{
			"fleet": tftypes.NewValue(list, []tftypes.Value{target("prod", ""), target("a", "kubeconfig: x")}),
		}),
		"target_maps": tftypes.NewValue(tftypes.Map{ElementType: m}, map[string]tftypes.Value{
			"regions": tftypes.NewValue(m, map[string]tftypes.Value{"eu": target("prod", ""), "us": target("b", "kubeconfig: y")}),
		}),
	}
	ps := inlineTargetsWarning(f)
	if len(ps) != 1 || !ps[0].warning {
		t.Fatalf("problems %+v, want one warning", ps)
	}
	if !strings.HasPrefix(ps[0].detail, `target_lists["fleet"][1], target_maps["regions"]["us"]: `) {
		t.Errorf("the warning names %q", ps[0].detail)
	}
	if strings.Contains(ps[0].detail, "kubeconfig") {
		t.Errorf("the warning quotes a config: %q", ps[0].detail)
	}
	delete(f, "target_maps")
	f["target_lists"] = tftypes.NewValue(tftypes.Map{ElementType: list}, map[string]tftypes.Value{
		"fleet": tftypes.NewValue(list, []tftypes.Value{target("prod", "")})})
	if ps := inlineTargetsWarning(f); len(ps) != 0 {
		t.Errorf("references alone warn: %+v", ps)
	}
}
