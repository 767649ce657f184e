package e2e

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	helmkube "helm.sh/helm/v3/pkg/kube"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/helm/helmtest"
)

// installDemoRelease installs the demo chart as Landscaper's helm deployer
// and the helm provider do: helm's install action with the release name
// and namespace (created if missing), releases stored in Secrets. The
// release is at revision 1.
func installDemoRelease(t *testing.T, kubeconfigPath, ns, name string, values map[string]any) {
	t.Helper()
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig, flags.Namespace = &kubeconfigPath, &ns
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	kc := helmkube.New(flags)
	kc.Namespace = ns
	ac := &action.Configuration{RESTClientGetter: flags, KubeClient: kc,
		Releases: storage.Init(driver.NewSecrets(cs.CoreV1().Secrets(ns))), Log: func(string, ...any) {}}
	ch, err := loader.LoadArchive(bytes.NewReader(helmtest.Archive(t, helmtest.Demo, "")))
	if err != nil {
		t.Fatal(err)
	}
	in := action.NewInstall(ac)
	in.ReleaseName, in.Namespace, in.CreateNamespace, in.Timeout = name, ns, true, time.Minute
	if _, err := in.Run(ch, values); err != nil {
		t.Fatal(err)
	}
}

// TestImportFromLandscaper_helm takes over an installation of the guided
// tour's kind whose helm release Landscaper installed: the first apply
// upgrades that release (one revision more), the objects stay the same,
// and the plan after is empty.
func TestImportFromLandscaper_helm(t *testing.T) {
	w := newWorkspace(t)
	c := newLandscaperCluster(t)
	acctest.WriteFile(t, w.Path("kubeconfig"), kubeEnv.Kubeconfig())
	c.write("apiVersion: v1\nkind: Namespace\nmetadata: {name: cu-helm}\n")
	installDemoRelease(t, w.Path("kubeconfig"), "helm-example", "hello", map[string]any{"message": "from-landscaper"})
	cs, _ := clients(t, w.Path("kubeconfig"))
	before := helmtest.DemoUIDs(t, cs, "helm-example", "hello")

	c.write(myClusterTarget("cu-helm"))
	raw := helmtest.ArchiveBase64(t, helmtest.Demo, "")
	item := fmt.Sprintf(`type: landscaper.gardener.cloud/helm
target: {name: my-cluster, namespace: cu-helm}
config:
  apiVersion: helm.deployer.landscaper.gardener.cloud/v1alpha1
  kind: ProviderConfiguration
  name: hello
  namespace: helm-example
  createNamespace: true
  chart: {archive: {raw: %s}}
  values: {message: from-landscaper}
`, raw)
	blueprint := fmt.Sprintf(`apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
jsonSchema: "https://json-schema.org/draft/2019-09/schema"
imports:
  - name: cluster
    type: target
    targetType: landscaper.gardener.cloud/kubernetes-cluster
deployExecutions:
  - name: default
    type: GoTemplate
    template: |
      deployItems:
        - name: default-deploy-item
          target:
            import: cluster
%s
`, indentLines(item, "          "))
	inst := c.writeInstallation("cu-helm", "hello-helm", "", blueprint)
	c.writeExecution("cu-helm", "hello-helm", inst.GetUID(), item, "")

	w.Config(importConfig("landscaper/cu-helm/hello-helm"))
	out, code := w.Run(nil, "plan", "-input=false", "-no-color", "-generate-config-out=generated.tf")
	if code != 0 {
		t.Fatalf("plan -generate-config-out exited %d:\n%s", code, out)
	}
	w.Apply()

	if got := strings.Join(helmtest.History(t, cs, "helm-example", "hello"), ","); got != "1:superseded,2:deployed" {
		t.Fatalf("release history %s, want Landscaper's revision 1 upgraded in place to 2", got)
	}
	if after := helmtest.DemoUIDs(t, cs, "helm-example", "hello"); after != before {
		t.Fatalf("the release's objects were re-created: UIDs %s, were %s", after, before)
	}
	if out, code := w.PlanExitCode(); code != 0 {
		t.Fatalf("plan after the take-over exited %d:\n%s", code, out)
	}
}
