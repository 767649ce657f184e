package helm

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
)

func TestValidate(t *testing.T) {
	d := New(Options{})
	ok := []string{
		`{"name":"a","namespace":"b","chart":{"ref":"example.com/charts/x:1.0.0"}}`,
		`{"name":"a","namespace":"b","chart":{"ref":"oci://localhost:5000/charts/x:1.0.0+build.1"}}`,
		`{"name":"a","namespace":"b","chart":{"ref":"http://10.0.0.1:5000/charts/x@sha256:` + strings.Repeat("a", 64) + `"}}`,
		`{"apiVersion":"helm.deployer.landscaper.gardener.cloud/v1alpha1","kind":"ProviderConfiguration",
		  "name":"a","namespace":"b","createNamespace":true,"chart":{"archive":{"raw":"AAAA"}},
		  "values":{"x":1},"helmDeployment":false,"updateStrategy":"patch",
		  "readinessChecks":{"disableDefault":true},"deletionGroups":[],"continuousReconcile":{"every":"1h"},
		  "exports":{"exports":[{"key":"k","jsonPath":".Values.x"}]},
		  "exportsFromManifests":[{"key":"m","jsonPath":".data.x","fromResource":{"apiVersion":"v1","kind":"ConfigMap","name":"c","namespace":"b"}}]}`,
		`{"name":"a","namespace":"b","chart":{"helmChartRepo":{"helmChartRepoUrl":"http://x","helmChartName":"n","helmChartVersion":"1"}},
		  "helmDeploymentConfig":{"install":{"atomic":true,"timeout":"10m","wait":true},"upgrade":{"force":true},"uninstall":{"wait":true,"timeout":"1m"}}}`,
		`{"name":"a","namespace":"b","chart":{"archive":{"remote":{"url":"./charts/x"}}}}`,
		`{"name":"a","namespace":"b","chart":{"resourceRef":"a2V5"}}`,
	}
	for _, c := range ok {
		if err := d.Validate(json.RawMessage(c)); err != nil {
			t.Errorf("%s: %v", c, err)
		}
	}
	bad := map[string]string{
		`{"namespace":"b","chart":{"ref":"example.com/x:1"}}`:                                                                                            "name: must not be empty",
		`{"nam":"a","namespace":"b","chart":{"ref":"example.com/x:1"}}`:                                                                                  `name: must not be empty (the config has "nam", which this deployer does not know: a misspelling of "name"?)`,
		`{"name":"a","namespace":"b","chrat":{"ref":"example.com/x:1"}}`:                                                                                 `chart: must not be empty (the config has "chrat", which`,
		`{"name":"a","chart":{"ref":"example.com/x:1"}}`:                                                                                                 "namespace: must not be empty",
		`{"name":"a","namespace":"b","chart":{"ref":"charts/x:1"}}`:                                                                                      "chart.ref: \"charts/x:1\" names no registry host",
		`{"name":"a","namespace":"b","chart":{"ref":"example.com/Charts/x:1"}}`:                                                                          "chart.ref: \"example.com/Charts/x:1\" is not an OCI reference",
		`{"name":"a","namespace":"b","chart":{}}`:                                                                                                        "chart: must not be empty",
		`{"name":"a","namespace":"b","chart":{"ref":"example.com/x:1"},"chrat":1}`:                                                                       `unknown field "chrat"`,
		`{"name":"a","namespace":"b","chart":{"archive":{}}}`:                                                                                            "raw or remote.url",
		`{"name":"a","namespace":"b","chart":{"helmChartRepo":{}}}`:                                                                                      "helmChartRepoUrl: must not be empty",
		`{"name":"a","namespace":"b","chart":{"ref":"example.com/x:1"},"values":[1]}`:                                                                    "values: must be an object",
		`{"name":"a","namespace":"b","chart":{"ref":"example.com/x:1"},"kind":"Other"}`:                                                                  "kind: must be",
		`{"name":"a","namespace":"b","chart":{"ref":"example.com/x:1"},"updateStrategy":"x"}`:                                                            "updateStrategy",
		`{"name":"a","namespace":"b","chart":{"ref":"example.com/x:1"},"helmDeploymentConfig":{"install":{"dryRun":true}}}`:                              `unsupported value "dryRun"`,
		`{"name":"a","namespace":"b","chart":{"ref":"example.com/x:1"},"helmDeploymentConfig":{"uninstall":{"atomic":true}}}`:                            `helmDeploymentConfig.uninstall: unsupported value "atomic"`,
		`{"name":"a","namespace":"b","chart":{"ref":"example.com/x:1"},"helmDeploymentConfig":{"install":{"timeout":"soon"}}}`:                           "install.timeout",
		`{"name":"a","namespace":"b","chart":{"ref":"example.com/x:1"},"helmDeploymentConfig":{"upgrade":{"wait":"yes"}}}`:                               "upgrade.wait",
		`{"name":"a","namespace":"b","chart":{"ref":"example.com/x:1"},"exports":{"exports":[{"key":"k","jsonPath":".a"},{"key":"k","jsonPath":".b"}]}}`: "duplicated key k",
		`{"name":"a","namespace":"b","chart":{"ref":"example.com/x:1"},"exports":{"exports":[{"key":"k"}]}}`:                                             "jsonPath: must not be empty",
	}
	for c, want := range bad {
		err := d.Validate(json.RawMessage(c))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", c, err, want)
		}
	}
}

func TestOptions(t *testing.T) {
	o := options(nil)
	if time.Duration(o.Timeout) != defaultOpTimeout || o.Atomic || o.Wait {
		t.Fatalf("defaults: %+v", o)
	}
	o = options(map[string]json.RawMessage{"atomic": json.RawMessage("true"), "timeout": json.RawMessage(`"90s"`)})
	if !o.Atomic || time.Duration(o.Timeout) != 90*time.Second {
		t.Fatalf("decoded: %+v", o)
	}
}

func TestHelmDeploymentDefault(t *testing.T) {
	f, tr := false, true
	for _, c := range []struct {
		v    *bool
		want bool
	}{{nil, true}, {&tr, true}, {&f, false}} {
		if got := (&Config{HelmDeployment: c.v}).helmDeployment(); got != c.want {
			t.Errorf("%v: %v", c.v, got)
		}
	}
}

func TestNoTarget(t *testing.T) {
	d := New(Options{})
	_, err := d.Reconcile(t.Context(), deployer.Request{
		Config: json.RawMessage(`{"name":"a","namespace":"b","chart":{"ref":"example.com/x:1"}}`),
	})
	if err == nil || !strings.Contains(err.Error(), "needs a target") {
		t.Fatal(err)
	}
}
