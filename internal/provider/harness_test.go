package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/plancheck"
)

// world is the outside a test's exec items act on: a run log every item
// appends "<item> <OPERATION>" to, and flag files that make an item fail.
type world struct {
	t   *testing.T
	dir string
}

func newWorld(t *testing.T) *world {
	return &world{t: t, dir: t.TempDir()}
}

// script is the command of every exec item. It logs the run, then fails
// if the flag fail-<item>-<OPERATION> exists, and exports what EXPORT says.
const script = `echo "$DEPLOY_ITEM_NAME $OPERATION" >> "$W/runs.log"
if [ -e "$W/fail-$DEPLOY_ITEM_NAME-$OPERATION" ]; then echo "flagged to fail" >&2; exit 3; fi
if [ -n "$EXPORT" ]; then printf '%s' "$EXPORT" > "$EXPORTS_PATH"; fi`

// config renders a configuration with one landscaper_execution "app".
// providerBlock may be empty; items maps names to HCL object bodies.
func (w *world) config(providerBlock string, items map[string]string, extra ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "locals {\n  script = %q\n  w = %q\n}\n", script, w.dir)
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

func (w *world) flag(name string) {
	w.t.Helper()
	if err := os.WriteFile(filepath.Join(w.dir, name), nil, 0o600); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) unflag(name string) {
	w.t.Helper()
	if err := os.Remove(filepath.Join(w.dir, name)); err != nil && !os.IsNotExist(err) {
		w.t.Fatal(err)
	}
}

// runs returns the run log lines and empties the log.
func (w *world) runs() []string {
	w.t.Helper()
	p := filepath.Join(w.dir, "runs.log")
	b, err := os.ReadFile(p)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		w.t.Fatal(err)
	}
	_ = os.Remove(p)
	return strings.Fields(strings.ReplaceAll(strings.TrimSpace(string(b)), " ", ":"))
}

// expectRuns checks the set of runs since the last call, ignoring order.
func (w *world) expectRuns(want ...string) error {
	got := w.runs()
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		return fmt.Errorf("runs %v, want %v", got, want)
	}
	return nil
}

// planFunc adapts a function to plancheck.PlanCheck.
type planFunc func(req plancheck.CheckPlanRequest) error

func (f planFunc) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	resp.Error = f(req)
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
func plannedAfter(req plancheck.CheckPlanRequest) (after, unknown map[string]any, action string, err error) {
	for _, rc := range req.Plan.ResourceChanges {
		if rc.Address != "landscaper_execution.app" {
			continue
		}
		after, _ = rc.Change.After.(map[string]any)
		unknown, _ = rc.Change.AfterUnknown.(map[string]any)
		return after, unknown, string(rc.Change.Actions[0]), nil
	}
	return nil, nil, "", fmt.Errorf("no change planned for landscaper_execution.app")
}

// dig walks nested maps.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}
