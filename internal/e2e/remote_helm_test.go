package e2e

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/helm/helmtest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/lscluster/lstest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/ocitest"
)

const remoteHelmComponent = "example.com/remote-helm/app"

// remoteHelmBlueprint installs the component's chart resource as a helm
// release through Landscaper's helm deployer: chart.resourceRef, so the
// deployer reads the chart from the component's registry itself.
const remoteHelmBlueprint = `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
jsonSchema: "https://json-schema.org/draft/2019-09/schema"
imports:
  - {name: cluster, type: target, targetType: landscaper.gardener.cloud/kubernetes-cluster}
  - {name: message, type: data, schema: {type: string}}
  - {name: namespace, type: data, schema: {type: string}}
deployExecutions:
  - name: default
    type: GoTemplate
    template: |
      deployItems:
        - name: release
          type: landscaper.gardener.cloud/helm
          target: {import: cluster}
          config:
            apiVersion: helm.deployer.landscaper.gardener.cloud/v1alpha1
            kind: ProviderConfiguration
            name: hello
            namespace: {{ .imports.namespace }}
            createNamespace: true
            chart:
              resourceRef: {{ getResourceKey "cd://resources/chart" }}
            values:
              message: {{ .imports.message | quote }}
`

// remoteHelmConfig is a remote installation of the component in the
// registry at host (plain HTTP), with the provider's credentials for it.
func remoteHelmConfig(host, password, lsNS, appNS, message string) string {
	return fmt.Sprintf(`
provider "landscaper" {
  targets = {
    landscaper = { type = "landscaper.gardener.cloud/kubernetes-cluster", config = yamlencode({ kubeconfig = file("${path.module}/kubeconfig") }) }
    app        = { type = "landscaper.gardener.cloud/kubernetes-cluster", config = yamlencode({ kubeconfig = file("${path.module}/kubeconfig") }) }
  }
  registry_credentials = {
    "http://%[1]s" = { username = "robot", password = %[2]q }
  }
}

resource "landscaper_installation" "helm" {
  name               = "helm"
  landscaper_cluster = { target = "landscaper", namespace = %[3]q }
  component = {
    name               = %[6]q
    version            = "1.0.0"
    repository_context = { type = "OCIRegistry", baseUrl = "http://%[1]s/ocm" }
  }
  blueprint = { ref = "blueprint" }
  imports   = { message = %[5]q, namespace = %[4]q }
  targets   = { cluster = { name = "app" } }
  timeouts  = { create = "4m", update = "4m", delete = "4m" }
}
`, host, password, lsNS, appNS, message, remoteHelmComponent)
}

// TestRemoteHelmFromComponent runs a helm installation from a component
// on Landscaper's own controllers through the terraform CLI. The component
// (a blueprint and a helm chart, both local blobs) is in a registry that
// refuses anonymous pulls, so Landscaper's controller (component and
// blueprint) and its helm deployer (the chart) read it only with the pull
// secret the provider wrote from its registry_credentials. Applied (the
// release at revision 1), planned empty, a rotated registry password
// (its Secret alone changes, nothing runs), updated (revision 2), and
// destroyed (release and pull secret gone).
func TestRemoteHelmFromComponent(t *testing.T) {
	w, k, lsNS, appNS := remoteWorkspace(t, "remote-helm")
	w.Env = append(w.Env, "XDG_CACHE_HOME="+w.Path("cache"))
	const password = "pull-pw-4f9e1c"
	reg := ocitest.Start(t, ocitest.Options{Auth: ocitest.Basic, Username: "robot", Password: password})

	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "blueprint"), 0o755); err != nil {
		t.Fatal(err)
	}
	acctest.WriteFile(t, filepath.Join(dir, "blueprint", "blueprint.yaml"), remoteHelmBlueprint)
	if err := os.WriteFile(filepath.Join(dir, "chart.tgz"), helmtest.Archive(t, helmtest.Demo, "1.0.0"), 0o600); err != nil {
		t.Fatal(err)
	}
	acctest.WriteFile(t, filepath.Join(dir, "component-constructor.yaml"), `components:
  - name: `+remoteHelmComponent+`
    version: 1.0.0
    provider: {name: acme}
    repositoryContexts: [{type: OCIRegistry, baseUrl: "http://`+reg.Host+`", subPath: ocm, componentNameMapping: urlPath}]
    resources:
      - name: blueprint
        type: landscaper.gardener.cloud/blueprint
        input: {type: dir, path: ./blueprint, compress: true, mediaType: application/vnd.gardener.landscaper.blueprint.v1+tar+gzip}
      - name: chart
        type: helmChart
        input: {type: file, path: ./chart.tgz, mediaType: application/vnd.cncf.helm.chart.content.v1.tar+gzip}
`)
	// The descriptor names the repository it is in, as ocm transfer
	// writes it: Landscaper refuses a component version without one.
	acctest.Push(t, reg, ocitest.OCM, acctest.Publish(t, false, filepath.Join(dir, "component-constructor.yaml")))
	cs, _ := clients(t, w.Path("kubeconfig"))

	w.Config(remoteHelmConfig(reg.Host, password, lsNS, appNS, "from-landscaper"))
	w.Apply()
	inst := k.Get(lstest.GVRs["Installation"], lsNS, "helm")
	if phase := dig(inst.Object, "status", "phase"); phase != "Succeeded" {
		t.Fatalf("Installation phase %v", phase)
	}
	if got := strings.Join(helmtest.History(t, cs, appNS, "hello"), ","); got != "1:deployed" {
		t.Fatalf("release history %q, want revision 1 deployed", got)
	}
	if got := dig(k.Get(configMaps, appNS, "hello-config").Object, "data", "message"); got != "from-landscaper" {
		t.Errorf("the release's ConfigMap holds %v", got)
	}
	const pullSecret = "helm.registry"
	ctx := k.Get(lstest.GVRs["Context"], lsNS, "helm.context")
	if got := fmt.Sprint(dig(ctx.Object, "registryPullSecrets")); got != "[map[name:"+pullSecret+"]]" {
		t.Errorf("the Context's registryPullSecrets: %s", got)
	}
	checkPullSecret(t, k, lsNS, pullSecret, reg.Host, password)
	attrs := w.Attributes("landscaper_installation", "helm")
	objects, _ := attrs["landscaper_objects"].(map[string]any)
	if shown := fmt.Sprint(objects["Secret/"+pullSecret]); !strings.Contains(shown, "kubernetes.io/dockerconfigjson") ||
		!strings.Contains(shown, ".dockerconfigjson: '***'") {
		t.Errorf("landscaper_objects shows the pull secret as:\n%s", shown)
	}
	if shown := fmt.Sprint(objects); strings.Contains(shown, password) || strings.Contains(shown, base64.StdEncoding.EncodeToString([]byte("robot:"+password))) {
		t.Errorf("landscaper_objects shows the registry password:\n%s", shown)
	}
	if out, code := w.PlanExitCode(); code != 0 {
		t.Fatalf("plan after the apply: exit %d, want 0:\n%s", code, out)
	}
	jobID := acctest.Dig(attrs, "status", "job_id")

	// The registry's password is rotated: the pull secret alone changes,
	// and Landscaper runs nothing.
	const rotated = "pull-pw-rotated-7b21"
	reg.SetPassword(rotated)
	w.Config(remoteHelmConfig(reg.Host, rotated, lsNS, appNS, "from-landscaper"))
	out, code := w.PlanExitCode()
	if code != 2 || !strings.Contains(out, `"Secret/`+pullSecret+`"`) || strings.Count(out, "(known after apply)") != 1 ||
		strings.Contains(out, rotated) {
		t.Fatalf("plan of a rotated registry password: exit %d, want only the pull secret changing:\n%s", code, out)
	}
	w.Apply()
	if got := acctest.Dig(w.Attributes("landscaper_installation", "helm"), "status", "job_id"); got != jobID {
		t.Errorf("the rotated registry password ran a job: job_id %v, was %v", got, jobID)
	}
	checkPullSecret(t, k, lsNS, pullSecret, reg.Host, rotated)
	if out, code := w.PlanExitCode(); code != 0 {
		t.Fatalf("plan after the rotation: exit %d, want 0:\n%s", code, out)
	}

	// A value changes: Landscaper upgrades the release, reading the
	// component with the rotated password.
	w.Config(remoteHelmConfig(reg.Host, rotated, lsNS, appNS, "upgraded"))
	w.Apply()
	if got := strings.Join(helmtest.History(t, cs, appNS, "hello"), ","); got != "1:superseded,2:deployed" {
		t.Fatalf("release history after the update %q, want revision 2 deployed", got)
	}
	if got := dig(k.Get(configMaps, appNS, "hello-config").Object, "data", "message"); got != "upgraded" {
		t.Errorf("the release's ConfigMap holds %v after the update", got)
	}
	if out, code := w.PlanExitCode(); code != 0 {
		t.Fatalf("plan after the update: exit %d, want 0:\n%s", code, out)
	}

	if out, code := w.Run(nil, "destroy", "-input=false", "-no-color", "-auto-approve"); code != 0 {
		t.Fatalf("terraform destroy exited %d:\n%s", code, out)
	}
	if got := helmtest.History(t, cs, appNS, "hello"); len(got) > 0 {
		t.Errorf("destroy left the release: %v", got)
	}
	if k.exists(configMaps, appNS, "hello-config") || k.exists(lstest.GVRs["Installation"], lsNS, "helm") ||
		k.exists(secretsOf, lsNS, pullSecret) || k.exists(lstest.GVRs["Context"], lsNS, "helm.context") {
		t.Errorf("destroy left the release's ConfigMap, the Installation, the pull secret or the Context")
	}
}

// checkPullSecret: the Secret is a Docker config whose only entry is the
// registry's, with the user and password given.
func checkPullSecret(t *testing.T, k *diffKube, ns, name, host, password string) {
	t.Helper()
	sec := k.Get(secretsOf, ns, name)
	if typ := dig(sec.Object, "type"); typ != "kubernetes.io/dockerconfigjson" {
		t.Errorf("the pull secret's type is %v", typ)
	}
	raw, err := base64.StdEncoding.DecodeString(fmt.Sprint(dig(sec.Object, "data", ".dockerconfigjson")))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Auths map[string]struct{ Username, Password string } `json:"auths"`
	}
	if err := json.Unmarshal(raw, &cfg); err != nil {
		t.Fatalf("the pull secret's .dockerconfigjson: %v", err)
	}
	if e := cfg.Auths[host]; len(cfg.Auths) != 1 || e.Username != "robot" || e.Password != password {
		t.Errorf("the pull secret holds the entries %v, want only %s with robot and the current password", slices.Sorted(maps.Keys(cfg.Auths)), host)
	}
}

// TestRemoteRefusesWhatLandscaperCannotPull: a registry token for the
// component's registry cannot become a pull secret Landscaper uses, and
// Landscaper refuses a component whose descriptor records no repository
// (repositoryContexts): each fails the plan on its attribute, saying why,
// without the token, and before the Landscaper cluster is contacted.
func TestRemoteRefusesWhatLandscaperCannotPull(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.Env = append(w.Env, "XDG_CACHE_HOME="+w.Path("cache"))
	reg := ocitest.Start(t, ocitest.Options{})
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "blueprint"), 0o755); err != nil {
		t.Fatal(err)
	}
	acctest.WriteFile(t, filepath.Join(dir, "blueprint", "blueprint.yaml"), remoteHelmBlueprint)
	acctest.WriteFile(t, filepath.Join(dir, "component-constructor.yaml"), `components:
  - name: example.com/no-repository-context
    version: 1.0.0
    provider: {name: acme}
    resources:
      - name: blueprint
        type: landscaper.gardener.cloud/blueprint
        input: {type: dir, path: ./blueprint, compress: true, mediaType: application/vnd.gardener.landscaper.blueprint.v1+tar+gzip}
`)
	acctest.Push(t, reg, ocitest.OCM, acctest.Publish(t, false, filepath.Join(dir, "component-constructor.yaml")))
	w.Config(fmt.Sprintf(`
provider "landscaper" {
  targets = {
    landscaper = { type = "landscaper.gardener.cloud/kubernetes-cluster", config = yamlencode({ kubeconfig = %q }) }
  }
  registry_credentials = { "registry.invalid" = { token = "tok-refused-5c0a" } }
}

resource "landscaper_installation" "tokened" {
  name               = "tokened"
  landscaper_cluster = { target = "landscaper", namespace = "ls" }
  blueprint          = { ref = "blueprint" }
  component = {
    name               = "example.com/app"
    version            = "1.0.0"
    repository_context = { type = "OCIRegistry", baseUrl = "registry.invalid/ocm" }
  }
}

resource "landscaper_installation" "unrecorded" {
  name               = "unrecorded"
  landscaper_cluster = { target = "landscaper", namespace = "ls" }
  blueprint          = { ref = "blueprint" }
  component = {
    name               = "example.com/no-repository-context"
    version            = "1.0.0"
    repository_context = { type = "OCIRegistry", baseUrl = "http://%s/ocm" }
  }
  imports = { message = "m", namespace = "n" }
  targets = { cluster = { name = "landscaper" } }
}
`, acctest.UnreachableKubeconfig, reg.Host))
	out, code := w.Run(nil, "plan", "-input=false", "-no-color")
	flat := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{"Registry token not usable on a Landscaper cluster", "registry_credentials for registry.invalid",
		"with landscaper_installation.tokened", "repository_context = { type",
		"Component not readable by Landscaper", "example.com/no-repository-context:1.0.0 lists no repositoryContexts",
		"with landscaper_installation.unrecorded"} {
		if !strings.Contains(flat, want) {
			t.Errorf("the plan does not say %q", want)
		}
	}
	if code != 1 || strings.Contains(out, "tok-refused-5c0a") {
		t.Fatalf("plan exited %d, want 1, without the token:\n%s", code, out)
	}
}
