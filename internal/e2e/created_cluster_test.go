package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
)

// createdClusterConfig deploys into a cluster created in the same
// configuration. terraform_data.cluster stands in for a managed-cluster
// module: its output carries the kubeconfig (read from the workspace's
// file kubeconfig), unknown at plan time whenever the resource is created
// or changes (version), and replaced by another whenever generation
// changes. The provider's target "created" takes its config from that
// output; an execution and an installation deploy into it, with
// plan_cluster_changes on, the installation with the cluster's ID as its
// reconcile_trigger. data goes into both ConfigMaps.
func createdClusterConfig(generation, version int, data string) string {
	return fmt.Sprintf(`
resource "terraform_data" "cluster" {
  input            = { kubeconfig = sensitive(file("${path.module}/kubeconfig")), version = %[2]d }
  triggers_replace = %[4]d
}

provider "landscaper" {
  plan_cluster_changes = true
  targets = {
    created = {
      type   = "landscaper.gardener.cloud/kubernetes-cluster"
      config = yamlencode({ kubeconfig = terraform_data.cluster.output.kubeconfig })
    }
  }
}

resource "landscaper_execution" "app" {
  name    = "app"
  targets = { cluster = { name = "created" } }
  deploy_items = {
    ns = {
      type   = "kubernetes-manifest"
      target = "cluster"
      config = yamlencode({ manifests = [{ manifest = { apiVersion = "v1", kind = "Namespace", metadata = { name = %[1]q } } }] })
    }
    cm = {
      type       = "kubernetes-manifest"
      target     = "cluster"
      depends_on = ["ns"]
      config = yamlencode({ manifests = [{ manifest = {
        apiVersion = "v1", kind = "ConfigMap", metadata = { name = "from-execution", namespace = %[1]q }, data = { v = %[3]q }
      } }] })
    }
  }
}

resource "landscaper_installation" "inst" {
  name              = "inst"
  reconcile_trigger = terraform_data.cluster.id
  targets    = { cluster = { name = "created" } }
  imports    = { namespace = %[1]q, v = %[3]q }
  depends_on = [landscaper_execution.app]
  blueprint = { filesystem = { "blueprint.yaml" = <<-EOT
    apiVersion: landscaper.gardener.cloud/v1alpha1
    kind: Blueprint
    imports:
      - {name: cluster, targetType: landscaper.gardener.cloud/kubernetes-cluster}
      - {name: namespace, schema: {type: string}}
      - {name: v, schema: {type: string}}
    deployExecutions:
      - name: x
        type: GoTemplate
        template: |
          deployItems:
            - name: cm
              type: landscaper.gardener.cloud/kubernetes-manifest
              target: {import: cluster}
              config:
                manifests:
                  - manifest:
                      apiVersion: v1
                      kind: ConfigMap
                      metadata: {name: from-installation, namespace: {{ .imports.namespace }}}
                      data: {v: {{ .imports.v }}}
  EOT
  } }
}
`, createdClusterNS, version, data, generation)
}

// createdClusterNS is the namespace createdClusterConfig deploys into.
const createdClusterNS = "e2e-created-cluster"

// savedPlan is what `terraform show -json` says of a saved plan: each
// resource's actions, planned values and which of them are unknown.
type savedPlan map[string]struct {
	Actions      []string
	After        map[string]any
	AfterUnknown map[string]any
}

func showPlan(t *testing.T, w *acctest.Workspace, plan string) savedPlan {
	t.Helper()
	out, code := w.Run(nil, "show", "-json", plan)
	if code != 0 {
		t.Fatalf("terraform show -json exited %d:\n%s", code, out)
	}
	var p struct {
		ResourceChanges []struct {
			Address string
			Change  struct {
				Actions      []string
				After        map[string]any `json:"after"`
				AfterUnknown map[string]any `json:"after_unknown"`
			}
		} `json:"resource_changes"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("terraform show -json: %v\n%s", err, out)
	}
	sp := savedPlan{}
	for _, rc := range p.ResourceChanges {
		sp[rc.Address] = struct {
			Actions      []string
			After        map[string]any
			AfterUnknown map[string]any
		}{rc.Change.Actions, rc.Change.After, rc.Change.AfterUnknown}
	}
	return sp
}

// action is the one action the plan takes on the resource address.
func (p savedPlan) action(address string) string {
	return strings.Join(p[address].Actions, ",")
}

// planTo runs `terraform plan -out` and returns the saved plan's content.
func planTo(t *testing.T, w *acctest.Workspace) savedPlan {
	t.Helper()
	if out, code := w.Run(nil, "plan", "-input=false", "-no-color", "-out=tfplan"); code != 0 {
		t.Fatalf("plan exited %d:\n%s", code, out)
	}
	return showPlan(t, w, "tfplan")
}

// applyPlan applies the saved plan tfplan and returns the output.
func applyPlan(t *testing.T, w *acctest.Workspace) string {
	t.Helper()
	out, code := w.Run(nil, "apply", "-input=false", "-no-color", "tfplan")
	if code != 0 {
		t.Fatalf("apply exited %d:\n%s", code, out)
	}
	return out
}

// before fails the test unless a comes before b in out.
func before(t *testing.T, out, a, b string) {
	t.Helper()
	i, j := strings.Index(out, a), strings.Index(out, b)
	if i < 0 || j < 0 || i > j {
		t.Errorf("%q does not come before %q:\n%s", a, b, out)
	}
}

// A cluster created in the same apply: its kubeconfig is unknown at plan
// time, yet the plan shows what deploys into it (targets known after
// apply), one apply creates the cluster and then deploys, the next plan is
// empty, a change of the cluster that leaves its kubeconfig unknown again
// plans nothing for what runs on it, and destroy deletes the deploy items
// before the cluster goes.
func TestCreatedClusterInTheSameApply(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	if kubeEnv == nil {
		t.Fatal("no control plane")
	}
	const ns = createdClusterNS
	acctest.WriteFile(t, w.Path("kubeconfig"), kubeEnv.Kubeconfig())
	w.Config(createdClusterConfig(1, 1, "a"))

	p := planTo(t, w)
	for _, a := range []string{"terraform_data.cluster", "landscaper_execution.app", "landscaper_installation.inst"} {
		if p.action(a) != "create" {
			t.Fatalf("the first plan does not create %s: %v", a, p[a].Actions)
		}
	}
	inst := p["landscaper_installation.inst"]
	if got := acctest.Dig(inst.After, "deploy_items", "cm", "type"); got != "landscaper.gardener.cloud/kubernetes-manifest" {
		t.Errorf("the plan does not render the installation's deploy item: deploy_items.cm.type = %v", got)
	}
	if acctest.Dig(inst.AfterUnknown, "deploy_items", "cm", "target") != true {
		t.Errorf("deploy_items.cm.target is not known after apply: %v", acctest.Dig(inst.After, "deploy_items", "cm", "target"))
	}
	for _, a := range []string{"landscaper_execution.app", "landscaper_installation.inst"} {
		if p[a].AfterUnknown["cluster_changes"] != true {
			t.Errorf("%s: cluster_changes is not known after apply, though its cluster does not exist yet: %v", a, p[a].After["cluster_changes"])
		}
	}

	out := applyPlan(t, w)
	before(t, out, "terraform_data.cluster: Creation complete", "landscaper_execution.app: Creating...")
	cm := configMap(t, ns, "from-execution")
	if cm == nil || configMap(t, ns, "from-installation") == nil {
		t.Fatalf("the apply did not deploy into the created cluster:\n%s", out)
	}
	target := acctest.Dig(w.Attributes("landscaper_installation", "inst"), "deploy_items", "cm", "target")
	if s, _ := target.(string); !strings.Contains(s, `provider target "created" (`+kubeEnv.Host()+")") {
		t.Errorf("deploy_items.cm.target = %v after apply, want the provider target and its server", target)
	}
	// Terraform plans again during the apply, once the cluster exists:
	// that plan's dry run is what the state keeps.
	if cc := acctest.Dig(w.Attributes("landscaper_execution", "app"), "cluster_changes", "cm", "v1 ConfigMap "+ns+"/from-execution"); cc != "create" {
		t.Errorf("execution: cluster_changes of cm = %v after the apply, want the apply-time dry run's create", cc)
	}
	if cc := acctest.Dig(w.Attributes("landscaper_installation", "inst"), "cluster_changes", "cm", "v1 ConfigMap "+ns+"/from-installation"); cc != "create" {
		t.Errorf("installation: cluster_changes of cm = %v after the apply, want the apply-time dry run's create", cc)
	}
	if out, code := w.PlanExitCode(); code != 0 {
		t.Fatalf("plan after the apply exited %d:\n%s", code, out)
	}
	jobs := func() [2]any {
		return [2]any{acctest.Dig(w.Attributes("landscaper_execution", "app"), "status", "job_id"),
			acctest.Dig(w.Attributes("landscaper_installation", "inst"), "status", "job_id")}
	}
	jobsBefore := jobs()

	// The cluster changes in place: its kubeconfig is unknown until it is
	// applied, and nothing that runs on it is planned to run again.
	w.Config(createdClusterConfig(1, 2, "a"))
	p = planTo(t, w)
	if p.action("terraform_data.cluster") != "update" || p.action("landscaper_execution.app") != "no-op" ||
		p.action("landscaper_installation.inst") != "no-op" {
		t.Fatalf("a change of the cluster plans cluster %v, execution %v, installation %v; want an update and two no-ops",
			p["terraform_data.cluster"].Actions, p["landscaper_execution.app"].Actions, p["landscaper_installation.inst"].Actions)
	}
	applyPlan(t, w)
	if jobs() != jobsBefore {
		t.Errorf("jobs %v after the cluster changed, were %v: something ran", jobs(), jobsBefore)
	}

	// The cluster changes and the items' configs with it: they run. An
	// item the plan cannot yet tell is still on the same cluster may run,
	// so its outcome, and where an installation's items go, are known
	// after apply. It is the same cluster, so it does not run.
	nsJob := acctest.Dig(w.Attributes("landscaper_execution", "app"), "status", "deploy_items", "ns", "job_id_finished")
	w.Config(createdClusterConfig(1, 3, "b"))
	p = planTo(t, w)
	if p.action("landscaper_execution.app") != "update" || p.action("landscaper_installation.inst") != "update" {
		t.Fatalf("plan: execution %v, installation %v; want updates",
			p["landscaper_execution.app"].Actions, p["landscaper_installation.inst"].Actions)
	}
	if unknown := p["landscaper_execution.app"].AfterUnknown["status"]; unknown != true &&
		acctest.Dig(unknown, "deploy_items", "ns") == nil {
		t.Errorf("the plan shows the outcome of item ns, on the cluster being changed: after_unknown.status = %v", unknown)
	}
	inst = p["landscaper_installation.inst"]
	if acctest.Dig(inst.AfterUnknown, "deploy_items", "cm", "target") != true || inst.AfterUnknown["status"] != true {
		t.Errorf("the installation's plan shows where its item goes (%v) or its outcome (%v) before the changed cluster is known",
			acctest.Dig(inst.After, "deploy_items", "cm", "target"), inst.After["status"])
	}
	applyPlan(t, w)
	for _, n := range []string{"from-execution", "from-installation"} {
		if got := acctest.Dig(configMap(t, ns, n), "data", "v"); got != "b" {
			t.Errorf("the changed item did not run: ConfigMap %s data v = %v", n, got)
		}
	}
	if got := acctest.Dig(w.Attributes("landscaper_execution", "app"), "status", "deploy_items", "ns", "job_id_finished"); got != nsJob {
		t.Errorf("item ns ran again (job %v, was %v), though its cluster is the same", got, nsJob)
	}
	if out, code := w.PlanExitCode(); code != 0 {
		t.Fatalf("plan after the apply exited %d:\n%s", code, out)
	}

	// The cluster is replaced by one at another address. The installation,
	// whose reconcile_trigger is the cluster's ID, deploys into it in the
	// same apply; the execution's plan takes the cluster to be where it
	// was, and the plan after the apply deploys there.
	acctest.WriteFile(t, w.Path("kubeconfig"), strings.ReplaceAll(kubeEnv.Kubeconfig(), kubeEnv.Host(),
		strings.Replace(kubeEnv.Host(), "127.0.0.1", "localhost", 1)))
	w.Config(createdClusterConfig(2, 3, "b"))
	p = planTo(t, w)
	if p.action("terraform_data.cluster") != "delete,create" || p.action("landscaper_execution.app") != "no-op" ||
		p.action("landscaper_installation.inst") != "update" {
		t.Fatalf("replacing the cluster plans cluster %v, execution %v, installation %v; want a replacement, a no-op and an update",
			p["terraform_data.cluster"].Actions, p["landscaper_execution.app"].Actions, p["landscaper_installation.inst"].Actions)
	}
	applyPlan(t, w)
	target = acctest.Dig(w.Attributes("landscaper_installation", "inst"), "deploy_items", "cm", "target")
	if s, _ := target.(string); !strings.Contains(s, "localhost") {
		t.Errorf("the installation did not deploy into the new cluster in the same apply: deploy_items.cm.target = %v", target)
	}
	p = planTo(t, w)
	if p.action("landscaper_execution.app") != "update" || p.action("landscaper_installation.inst") != "no-op" {
		t.Fatalf("the plan after the replacement: execution %v, installation %v; want the execution to deploy there",
			p["landscaper_execution.app"].Actions, p["landscaper_installation.inst"].Actions)
	}
	applyPlan(t, w)
	if out, code := w.PlanExitCode(); code != 0 {
		t.Fatalf("plan after deploying to the moved cluster exited %d:\n%s", code, out)
	}
	if got := configMap(t, ns, "from-execution"); got == nil || acctest.Dig(got, "metadata", "uid") != acctest.Dig(cm, "metadata", "uid") {
		t.Errorf("the ConfigMap was re-created: %v", got)
	}

	out, code := w.Run(nil, "destroy", "-auto-approve", "-input=false", "-no-color")
	if code != 0 {
		t.Fatalf("destroy exited %d:\n%s", code, out)
	}
	before(t, out, "landscaper_execution.app: Destruction complete", "terraform_data.cluster: Destroying...")
	before(t, out, "landscaper_installation.inst: Destruction complete", "terraform_data.cluster: Destroying...")
	if configMap(t, ns, "from-execution") != nil || configMap(t, ns, "from-installation") != nil {
		t.Error("destroy left ConfigMaps in the cluster")
	}
}
