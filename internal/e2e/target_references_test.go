package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
)

// targetListsConfig imports the provider target "prod" by name into a
// target list and a target map, and one inline target whose config comes
// from a sensitive variable.
const targetListsConfig = `
variable "inline" {
  type      = string
  sensitive = true
}

provider "landscaper" {
  targets = {
    prod = {
      type   = "landscaper.gardener.cloud/kubernetes-cluster"
      config = yamlencode({ kubeconfig = yamlencode({
        apiVersion        = "v1"
        kind              = "Config"
        clusters          = [{ name = "c", cluster = { server = "https://127.0.0.1:1" } }]
        users             = [{ name = "u", user = { token = "pr0v-t0k3n-aa11" } }]
        contexts          = [{ name = "c", context = { cluster = "c", user = "u" } }]
        "current-context" = "c"
      }) })
    }
  }
}

resource "landscaper_installation" "fleet" {
  name = "fleet"
  blueprint = { filesystem = { "blueprint.yaml" = <<-EOT
    apiVersion: landscaper.gardener.cloud/v1alpha1
    kind: Blueprint
    imports:
      - {name: fleet, type: targetList, targetType: landscaper.gardener.cloud/kubernetes-cluster}
      - {name: regions, type: targetMap, targetType: landscaper.gardener.cloud/kubernetes-cluster}
    deployExecutions:
      - name: default
        type: GoTemplate
        template: |
          deployItems:
          {{- range $i, $t := .imports.fleet }}
            - name: fleet-{{ $i }}
              type: landscaper.gardener.cloud/mock
              target: {import: fleet, index: {{ $i }}}
              config: {export: {{ toJson $t.metadata.name }}}
          {{- end }}
          {{- range $k, $t := .imports.regions }}
            - name: region-{{ $k }}
              type: landscaper.gardener.cloud/mock
              target: {import: regions, key: {{ $k }}}
              config: {export: {{ $k }}}
          {{- end }}
    EOT
  } }
  target_lists = { fleet = [
    { name = "prod" },
    { name = "inline-one", type = "landscaper.gardener.cloud/kubernetes-cluster", config = var.inline },
  ] }
  target_maps = { regions = { eu = { name = "prod" } } }
}
`

const inlineKubeconfig = `kubeconfig: |
  apiVersion: v1
  kind: Config
  clusters: [{name: c, cluster: {server: "https://127.0.0.9:1"}}]
  users: [{name: u, user: {token: inl1ne-t0k3n-bb22}}]
  contexts: [{name: c, context: {cluster: c, user: u}}]
  current-context: c
`

// flat joins a CLI text's words with single spaces: Terraform wraps
// diagnostics at the terminal width.
func flat(s string) string { return strings.Join(strings.Fields(s), " ") }

// A reference is not a secret: plans and terraform show print which
// provider target each element of target_lists and target_maps uses, and
// hide an inline config only because Terraform marked its value
// sensitive; the plan warns, once, naming the inline element.
func TestTargetListsShowReferencesAndHideSensitiveConfigs(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.Config(targetListsConfig)
	env := []string{"TF_VAR_inline=" + inlineKubeconfig}

	plan, code := w.Run(env, "plan", "-input=false", "-no-color")
	if code != 0 {
		t.Fatalf("plan exited %d:\n%s", code, plan)
	}
	refs := regexp.MustCompile(`(?s)\+ target_lists\s+= \{\s+\+ "fleet" = \[\s+\+ \{\s+\+ name = "prod"\s+\},\s+\+ \{\s+` +
		`\+ config = \(sensitive value\)\s+\+ name\s+= "inline-one"`)
	if !refs.MatchString(plan) {
		t.Errorf("the plan does not show target_lists' reference and a hidden inline config:\n%s", plan)
	}
	if !regexp.MustCompile(`(?s)\+ target_maps\s+= \{\s+\+ "regions" = \{\s+\+ "eu" = \{\s+\+ name = "prod"`).MatchString(plan) {
		t.Errorf("the plan does not show target_maps' reference:\n%s", plan)
	}
	warning := `Warning: Inline target configs in target_lists or target_maps show in plans`
	if got := strings.Count(plan, warning); got != 1 {
		t.Errorf("the plan warns %d times about inline targets, want once:\n%s", got, plan)
	}
	if !strings.Contains(flat(plan), `target_lists["fleet"][1]: these targets are given inline`) ||
		strings.Contains(plan, `target_lists["fleet"][0]`) || strings.Contains(plan, `target_maps["regions"]`) {
		t.Errorf("the warning does not name exactly the inline element:\n%s", plan)
	}

	w.Apply(env...)
	show, code := w.Run(env, "show", "-no-color")
	if code != 0 {
		t.Fatalf("show exited %d:\n%s", code, show)
	}
	if !regexp.MustCompile(`(?s)target_lists\s+= \{\s+"fleet" = \[\s+\{\s+name = "prod"\s+\},\s+\{\s+config = \(sensitive value\)`).MatchString(show) {
		t.Errorf("terraform show does not show the reference and a hidden inline config:\n%s", show)
	}
	for _, text := range []string{plan, show} {
		for _, secret := range []string{"pr0v-t0k3n-aa11", "inl1ne-t0k3n-bb22"} {
			if strings.Contains(text, secret) {
				t.Errorf("%s printed:\n%s", secret, text)
			}
		}
	}
	if out, code := w.Run(env, "plan", "-input=false", "-no-color", "-detailed-exitcode"); code != 0 {
		t.Fatalf("plan after apply exited %d:\n%s", code, out)
	}
}

// State of schema version 4, which hid target_lists, target_maps and
// target_exports as a whole (recorded in testdata/state-v4 by that
// provider), stays valid: Terraform plans one update that only unmarks the
// three attributes, the update runs nothing (the job stays the same), and
// the plan after it is empty.
func TestStateFromVersion4Upgrades(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	for _, f := range []string{"main.tf", "terraform.tfstate"} {
		acctest.WriteFile(t, w.Path(f), acctest.ReadFile(t, filepath.Join("testdata", "state-v4", f)))
	}
	before := w.Attributes("landscaper_installation", "fleet")
	out, code := w.PlanExitCode()
	if code != 2 || !strings.Contains(flat(out), "target_lists = (sensitive value)") ||
		strings.Count(out, "will no longer be marked as sensitive") != 3 {
		t.Fatalf("plan of the recorded v4 state: exit %d, want 2 with only target_lists, target_maps and target_exports unmarked:\n%s", code, out)
	}
	w.Apply()
	after := w.Attributes("landscaper_installation", "fleet")
	if a, b := acctest.Dig(after, "status", "job_id"), acctest.Dig(before, "status", "job_id"); a != b || a == nil {
		t.Fatalf("the upgrade ran a job: job_id %v, was %v", a, b)
	}
	if out, code := w.PlanExitCode(); code != 0 {
		t.Fatalf("plan after the upgrade: exit %d, want 0:\n%s", code, out)
	}
	raw, err := os.ReadFile(w.Path("terraform.tfstate"))
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Resources []struct {
			Instances []struct {
				SchemaVersion int               `json:"schema_version"`
				Sensitive     []json.RawMessage `json:"sensitive_attributes"`
			} `json:"instances"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	inst := st.Resources[0].Instances[0]
	if inst.SchemaVersion != installationSchemaVersionNow {
		t.Errorf("schema_version %d after apply, want %d", inst.SchemaVersion, installationSchemaVersionNow)
	}
	for _, p := range inst.Sensitive {
		if s := string(p); slices.Contains([]string{`[{"type":"get_attr","value":"target_lists"}]`,
			`[{"type":"get_attr","value":"target_maps"}]`, `[{"type":"get_attr","value":"target_exports"}]`}, s) {
			t.Errorf("the state still marks %s sensitive as a whole", s)
		}
	}
	show, _ := w.Run(nil, "show", "-no-color")
	if !strings.Contains(flat(show), `target_maps = { "regions" = { "eu" = { name = "prod" }, }`) ||
		!strings.Contains(flat(show), `config = (sensitive value)`) || strings.Contains(show, "inl1ne-t0k3n-bb22") {
		t.Errorf("terraform show after the upgrade:\n%s", show)
	}
}

// Configuration Terraform generates from an imported state carries the
// references of target_lists and target_maps (it writes attributes that
// are sensitive as a whole as null), and plans as it stands.
func TestImportFromLandscaper_targetListsInGeneratedConfig(t *testing.T) {
	w := newWorkspace(t)
	c := newLandscaperCluster(t)
	c.write("apiVersion: v1\nkind: Namespace\nmetadata: {name: cu-lists}\n")
	for _, n := range []string{"us-1", "eu-1"} {
		c.write(fmt.Sprintf(`apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Target
metadata: {name: %s, namespace: cu-lists}
spec:
  type: landscaper.gardener.cloud/kubernetes-cluster
  config: {kubeconfig: "kubeconfig of %s"}
`, n, n))
	}
	c.write(`apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Installation
metadata: {name: fleet, namespace: cu-lists}
spec:
  imports:
    targets:
      - {name: clusters, targets: [us-1, eu-1]}
      - {name: regions, targetMap: {europe: eu-1}}
  blueprint:
    inline:
      filesystem:
        blueprint.yaml: |
          apiVersion: landscaper.gardener.cloud/v1alpha1
          kind: Blueprint
          imports:
            - {name: clusters, type: targetList, targetType: landscaper.gardener.cloud/kubernetes-cluster}
            - {name: regions, type: targetMap, targetType: landscaper.gardener.cloud/kubernetes-cluster}
status:
  observedGeneration: 1
  phase: Succeeded
`)
	acctest.WriteFile(t, w.Path("kubeconfig"), kubeEnv.Kubeconfig())
	w.Config(`
provider "landscaper" {
  targets = {
    landscaper = { type = "landscaper.gardener.cloud/kubernetes-cluster", config = yamlencode({ kubeconfig = file("${path.module}/kubeconfig") }) }
    us-1       = { type = "landscaper.gardener.cloud/kubernetes-cluster", config = yamlencode({ kubeconfig = file("${path.module}/kubeconfig") }) }
    eu-1       = { type = "landscaper.gardener.cloud/kubernetes-cluster", config = yamlencode({ kubeconfig = file("${path.module}/kubeconfig") }) }
  }
}

import {
  to = landscaper_installation.fleet
  id = "landscaper/cu-lists/fleet"
}
`)
	out, code := w.Run(nil, "plan", "-input=false", "-no-color", "-generate-config-out=generated.tf")
	if code != 0 {
		t.Fatalf("plan -generate-config-out exited %d:\n%s", code, out)
	}
	// Terraform's own two (dev overrides, experimental generation), none
	// of the provider's: there is nothing left to set by hand.
	if strings.Count(out, "Warning:") != 2 {
		t.Errorf("the import warns:\n%s", out)
	}
	generated := flat(acctest.ReadFile(t, w.Path("generated.tf")))
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`target_lists = \{ clusters = \[\{ annotations = null config = null labels = null name = "us-1" type = null \}, \{ annotations = null config = null labels = null name = "eu-1" type = null \}\] \}`),
		regexp.MustCompile(`target_maps = \{ regions = \{ europe = \{ annotations = null config = null labels = null name = "eu-1" type = null \} \} \}`),
	} {
		if !want.MatchString(generated) {
			t.Errorf("generated configuration lacks %s:\n%s", want, generated)
		}
	}
	// The generated configuration plans as it stands: the import and
	// nothing else to fill in.
	out, code = w.Run(nil, "plan", "-input=false", "-no-color")
	if code != 0 || !strings.Contains(out, "1 to import") {
		t.Fatalf("plan with the generated configuration exited %d:\n%s", code, out)
	}
}
