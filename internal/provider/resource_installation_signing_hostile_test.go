//go:build unix

package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/helm/helmtest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/ocitest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/signing"
)

// setDigest gives a resource of a descriptor another digest, as a registry
// may where the signature does not cover it.
func setDigest(t *testing.T, desc []byte, resource string, digest map[string]any) []byte {
	t.Helper()
	var doc map[string]any
	if err := yaml.Unmarshal(desc, &doc); err != nil {
		t.Fatal(err)
	}
	comp, _ := doc["component"].(map[string]any)
	list, _ := comp["resources"].([]any)
	found := false
	for _, r := range list {
		if m, _ := r.(map[string]any); m["name"] == resource {
			m["digest"], found = digest, true
		}
	}
	if !found {
		t.Fatalf("no resource %q", resource)
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Through Terraform, what a registry can change without breaking the
// signature must not get an unsigned chart installed: it respells the
// chart's access type (so a view that pins by exact type would keep its
// unpinned reference), points it at its own chart, and gives a resource
// with access "none" (whose digest the signed form leaves out) that
// chart's manifest digest (so the chart check would count it as signed).
// Both by the access and by a chart.ref naming that chart directly,
// nothing of it runs.
func TestAccInstallation_hostileRegistryCannotSignAChart(t *testing.T) {
	kubeconfig, cs := helmCluster(t)
	key := rsaKey(t)
	charts := helmtest.NewRegistry(t)
	signedRef, signedDigest := pushSignedChart(t, charts, helmtest.Archive(t, helmtest.Demo, "1.0.0"))
	otherRef, otherDigest := pushSignedChart(t, charts, helmtest.Archive(t, helmtest.Workload, "1.0.0"))
	cases := map[string]struct{ chart, want string }{
		"respelt access": {chart: `ref: {{ (getResource .cd "name" "chart").access.imageReference }}`, want: `rendered template contains fields with "<no value>" .* ref: <no value>`},
		"direct ref":     {chart: "ref: " + otherRef, want: `chart.ref ` + otherRef + `: the installation verifies signatures, and the chart pulled .* is no artifact a verified component signs`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ns := "acc-hostile-" + strings.ReplaceAll(name, " ", "-")
			v := signedOCIComponent(t, key, pinnedBlueprint(ns, tc.chart), fmt.Sprintf(`      - name: chart
        type: helmChart
        access: {type: ociArtifact, imageReference: %q}
      - name: docs
        type: plainText
        access: {type: none}
`, signedRef), "chart", signedDigest)
			v.Descriptor = setAccess(t, v.Descriptor, "chart", map[string]any{"type": "ociartifact", "imageReference": otherRef})
			v.Descriptor = setDigest(t, v.Descriptor, "docs", map[string]any{"hashAlgorithm": "SHA-256",
				"normalisationAlgorithm": signing.OCIArtifactDigestV1, "value": strings.TrimPrefix(otherDigest, "sha256:")})
			reg := ocitest.Start(t, ocitest.Options{CA: registryCA})
			pushAll(t, reg, ocitest.OCM, []acctest.PublishedVersion{v})
			config := pinnedConfig(t, reg.Host, key, "", clusterTarget(kubeconfig))
			resource.Test(t, resource.TestCase{ProtoV6ProviderFactories: protoV6ProviderFactories,
				Steps: []resource.TestStep{{Config: config, ExpectError: errorPattern(tc.want)}}})
			if _, err := cs.CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("namespace %s exists: something of the unsigned chart ran (%v)", ns, err)
			}
		})
	}
}
