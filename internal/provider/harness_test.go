package provider

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
)

// world is an acctest.World with this package's configurations.
type world struct{ *acctest.World }

func newWorld(t *testing.T) *world { return &world{acctest.NewWorld(t)} }

// config renders a configuration with one landscaper_execution "app".
// providerBlock may be empty; items maps names to HCL object bodies.
func (w *world) config(providerBlock string, items map[string]string, extra ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "locals {\n  script = %q\n  w = %q\n}\n", acctest.Script, w.Dir)
	if providerBlock != "" {
		fmt.Fprintf(&b, "provider \"landscaper\" {\n%s\n}\n", providerBlock)
	}
	b.WriteString("resource \"landscaper_execution\" \"app\" {\n  name = \"app\"\n  deploy_items = {\n")
	for _, n := range slices.Sorted(maps.Keys(items)) {
		fmt.Fprintf(&b, "    %q = %s\n", n, items[n])
	}
	b.WriteString("  }\n}\n")
	for _, e := range extra {
		b.WriteString(e + "\n")
	}
	return b.String()
}

// execItem is an item running the world's script; env adds HCL map entries
// (a changed env is a changed config).
func execItem(deps []string, env string, attrs ...string) string {
	d := make([]string, len(deps))
	for i, x := range deps {
		d[i] = fmt.Sprintf("%q", x)
	}
	return fmt.Sprintf(`{
      type = "exec"
      config = jsonencode({ command = ["sh", "-c", local.script], env = merge({ W = local.w }, { %s }) })
      depends_on = [%s]
      %s
    }`, env, strings.Join(d, ", "), strings.Join(attrs, "\n      "))
}

// priorItems returns status.deploy_items of landscaper_execution.app from
// the plan's prior state: what the last apply left, as Terraform stored it.
func priorItems(req plancheck.CheckPlanRequest) (map[string]map[string]any, error) {
	if req.Plan.PriorState == nil || req.Plan.PriorState.Values == nil {
		return nil, fmt.Errorf("no prior state")
	}
	for _, r := range req.Plan.PriorState.Values.RootModule.Resources {
		if r.Address != "landscaper_execution.app" {
			continue
		}
		raw, _ := json.Marshal(r.AttributeValues["status"])
		var st struct {
			DeployItems map[string]map[string]any `json:"deploy_items"`
		}
		if err := json.Unmarshal(raw, &st); err != nil {
			return nil, err
		}
		return st.DeployItems, nil
	}
	return nil, fmt.Errorf("landscaper_execution.app not in prior state")
}

// phases reduces item statuses to their phases.
func phases(items map[string]map[string]any) map[string]string {
	out := map[string]string{}
	for n, it := range items {
		out[n], _ = it["phase"].(string)
	}
	return out
}

// plannedAfter returns the planned value and the unknown-markers of
// landscaper_execution.app.
func plannedAfter(req plancheck.CheckPlanRequest) (after, unknown map[string]any, err error) {
	return plannedAfterOf(req, "landscaper_execution.app")
}

// plannedAfterOf is plannedAfter for the resource at address.
func plannedAfterOf(req plancheck.CheckPlanRequest, address string) (after, unknown map[string]any, err error) {
	for _, rc := range req.Plan.ResourceChanges {
		if rc.Address != address {
			continue
		}
		after, _ = rc.Change.After.(map[string]any)
		unknown, _ = rc.Change.AfterUnknown.(map[string]any)
		return after, unknown, nil
	}
	return nil, nil, fmt.Errorf("no change planned for %s", address)
}
