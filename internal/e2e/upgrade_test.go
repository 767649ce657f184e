package e2e

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
)

// State written by the first release (schema version 0, private state in
// the framework's format, recorded in testdata/state-v0) upgrades in
// place: the plan is empty, and the exec item's STATE_PATH survives.
func TestStateFromVersion0Upgrades(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	for _, f := range []string{"main.tf", "terraform.tfstate"} {
		acctest.WriteFile(t, w.Path(f), acctest.ReadFile(t, filepath.Join("testdata", "state-v0", f)))
	}
	if out, code := w.PlanExitCode(); code != 0 {
		t.Fatalf("plan of the recorded v0 state: exit %d, want 0 (no changes):\n%s", code, out)
	}

	// Change only db's command, to one that shows what STATE_PATH holds.
	seen := w.Path("seen")
	tf := acctest.ReadFile(t, w.Path("main.tf"))
	old := `"echo kept > $STATE_PATH/counter; printf '{\"url\":\"db:5432\"}' > $EXPORTS_PATH"`
	if !strings.Contains(tf, old) {
		t.Fatal("testdata/state-v0/main.tf changed; update this test")
	}
	tf = strings.Replace(tf, old, `"cat $STATE_PATH/counter > `+seen+`; printf '{\"url\":\"db:5432\"}' > $EXPORTS_PATH"`, 1)
	acctest.WriteFile(t, w.Path("main.tf"), tf)
	out := w.Apply()
	if !strings.Contains(out, "1 changed") {
		t.Fatalf("apply:\n%s", out)
	}
	if got := strings.TrimSpace(acctest.ReadFile(t, seen)); got != "kept" {
		t.Fatalf("STATE_PATH after the upgrade holds %q, want the v0 run's %q", got, "kept")
	}
	attrs := execution(w)
	if got := acctest.Dig(attrs, "exports", "value", "api", "replicas"); got != float64(3) {
		t.Fatalf("exports of the unchanged item: %v", got)
	}

	raw, err := os.ReadFile(w.Path("terraform.tfstate"))
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Resources []struct {
			Instances []struct {
				SchemaVersion int    `json:"schema_version"`
				Private       string `json:"private"`
			} `json:"instances"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	inst := st.Resources[0].Instances[0]
	priv, _ := base64.StdEncoding.DecodeString(inst.Private)
	if inst.SchemaVersion != 3 || !strings.HasPrefix(string(priv), "LSPS\x02") {
		t.Fatalf("schema version %d, private state %.8q...: want version 3 in the current format (2)", inst.SchemaVersion, priv)
	}
	if _, code := w.PlanExitCode(); code != 0 {
		t.Fatal("the plan after the upgrade apply is not empty")
	}
}

// State of schema version 5 (recorded in testdata/state-v5 by that
// provider), before sensitive_imports_wo, plans nothing: the new
// attributes read as null, no job runs, and the apply writes the current version.
func TestStateFromVersion5Upgrades(t *testing.T) {
	t.Parallel()
	upgradesPlanningNothing(t, "state-v5", "sensitive_imports_wo", "sensitive_imports_wo_version")
}

// State of schema version 6 (recorded in testdata/state-v6 by that
// provider), before remote mode, plans nothing likewise.
func TestStateFromVersion6Upgrades(t *testing.T) {
	t.Parallel()
	upgradesPlanningNothing(t, "state-v6", "landscaper_cluster", "automatic_reconcile", "landscaper_objects")
}

// upgradesPlanningNothing applies the recorded state in testdata/dir of
// landscaper_installation.app: the plan is empty, the apply runs no job
// and writes the current schema version with the attributes added since
// null, and the plan after is empty.
func upgradesPlanningNothing(t *testing.T, dir string, added ...string) {
	t.Helper()
	w := newWorkspace(t)
	for _, f := range []string{"main.tf", "terraform.tfstate"} {
		acctest.WriteFile(t, w.Path(f), acctest.ReadFile(t, filepath.Join("testdata", dir, f)))
	}
	before := w.Attributes("landscaper_installation", "app")
	if out, code := w.PlanExitCode(); code != 0 {
		t.Fatalf("plan of the recorded state in %s: exit %d, want 0 (no changes):\n%s", dir, code, out)
	}
	w.Apply()
	after := w.Attributes("landscaper_installation", "app")
	if a, b := acctest.Dig(after, "status", "job_id"), acctest.Dig(before, "status", "job_id"); a != b || a == nil {
		t.Fatalf("the upgrade ran a job: job_id %v, was %v", a, b)
	}
	for _, a := range added {
		if after[a] != nil {
			t.Errorf("%s after the upgrade: %v", a, after[a])
		}
	}
	if raw := acctest.ReadFile(t, w.Path("terraform.tfstate")); !strings.Contains(raw, `"schema_version": `+fmt.Sprint(installationSchemaVersionNow)) {
		t.Errorf("the state after apply is not of schema version %d:\n%.400s", installationSchemaVersionNow, raw)
	}
	if out, code := w.PlanExitCode(); code != 0 {
		t.Fatalf("plan after the upgrade: exit %d, want 0:\n%s", code, out)
	}
}

// installationSchemaVersionNow is landscaper_installation's schema
// version, which every upgraded state is written in.
const installationSchemaVersionNow = 7
