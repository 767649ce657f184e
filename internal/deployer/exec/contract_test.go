package exec

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
)

// args follow command, as in a container.
func TestArgsFollowCommand(t *testing.T) {
	d := newTestDeployer(t)
	cfg := json.RawMessage(`{"command":["sh","-c"],"args":["printf '%s,%s' \"$0\" \"$1\" > \"$EXPORTS_PATH\"","zero","one"]}`)
	res, err := d.Reconcile(context.Background(), deployer.Request{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Export) != `"zero,one"` {
		t.Fatalf("export %s", res.Export)
	}
	if err := d.Validate(json.RawMessage(`{"command":["sh"],"args":"x"}`)); err == nil {
		t.Fatal("args as a string accepted")
	}
}

// cleanEnv keeps PATH and HOME of the provider's environment, the config's
// env and the contract, and nothing else.
func TestCleanEnv(t *testing.T) {
	d := New(Options{
		BaseEnv:           []string{"PATH=" + os.Getenv("PATH"), "HOME=/home/x", "SECRET_TOKEN=leak", "OTHER=1"},
		DefaultWorkingDir: t.TempDir(),
	})
	script := `env | cut -d= -f1 | sort | tr '\n' ' ' > "$EXPORTS_PATH"`
	for _, tc := range []struct {
		clean bool
		want  string
	}{
		{true, "DEPLOY_ITEM_NAME EXECUTION_NAME EXPORTS_PATH FROM_CONFIG HOME IMPORTS_PATH JOB_ID OPERATION PATH PWD STATE_PATH"},
		{false, "DEPLOY_ITEM_NAME EXECUTION_NAME EXPORTS_PATH FROM_CONFIG HOME IMPORTS_PATH JOB_ID OPERATION OTHER PATH PWD SECRET_TOKEN STATE_PATH"},
	} {
		res, err := d.Reconcile(context.Background(), deployer.Request{Config: shConfig(t, script, map[string]any{
			"cleanEnv": tc.clean, "env": map[string]string{"FROM_CONFIG": "y"},
		})})
		if err != nil {
			t.Fatal(err)
		}
		var got string
		_ = json.Unmarshal(res.Export, &got)
		// sh may add its own (PWD, SHLVL, _); only PWD is stable across shells.
		var names []string
		for _, n := range strings.Fields(got) {
			if n != "SHLVL" && n != "_" {
				names = append(names, n)
			}
		}
		if strings.Join(names, " ") != tc.want {
			t.Errorf("cleanEnv=%v: variables %v, want %s", tc.clean, names, tc.want)
		}
	}
}

// The provider status reports the operation, exit code, duration and
// attempt, on success and on failure.
func TestProviderStatus(t *testing.T) {
	d := newTestDeployer(t)
	for _, tc := range []struct {
		script  string
		attempt int
		code    int
		op      string
	}{
		{"true", 1, 0, "RECONCILE"},
		{"exit 3", 2, 3, "RECONCILE"},
		{"exit 75", 4, 75, "RECONCILE"},
		{"kill -9 $$", 1, -1, "RECONCILE"},
		{"exit 4", 1, 4, "DELETE"},
	} {
		req := deployer.Request{Config: shConfig(t, tc.script, nil), Attempt: tc.attempt}
		run := d.Reconcile
		if tc.op == "DELETE" {
			run = d.Delete
		}
		res, _ := run(context.Background(), req)
		var ps providerStatus
		if err := json.Unmarshal(res.ProviderStatus, &ps); err != nil {
			t.Fatalf("%s: provider status %s: %v", tc.script, res.ProviderStatus, err)
		}
		if ps.ExitCode != tc.code || ps.Attempts != tc.attempt || ps.LastOperation != tc.op || ps.Duration == "" {
			t.Errorf("%s: provider status %+v", tc.script, ps)
		}
	}
}

// TARGET_PATH, COMPONENT_DESCRIPTOR_PATH and CONTENT_PATH are set when the
// request carries their part, in Landscaper's formats, and left out
// otherwise.
func TestContainerContractFiles(t *testing.T) {
	d := newTestDeployer(t)
	script := `{
printf '{"target":%s,' "$(cat "$TARGET_PATH")"
printf '"cd":%s,' "$(cat "$COMPONENT_DESCRIPTOR_PATH")"
printf '"blueprint":"%s"}' "$(cat "$CONTENT_PATH/blueprint.yaml")"
} > "$EXPORTS_PATH"`
	req := deployer.Request{
		Config:              shConfig(t, script, nil),
		Target:              &deployer.Target{Name: "cluster", Type: "landscaper.gardener.cloud/kubernetes-cluster", Config: json.RawMessage(`{"kubeconfig":"k"}`)},
		ComponentDescriptor: json.RawMessage(`{"meta":{"schemaVersion":"v2"},"components":[]}`),
		Content:             fstest.MapFS{"blueprint.yaml": {Data: []byte("kind: Blueprint")}},
	}
	res, err := d.Reconcile(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"target":{"target":{"apiVersion":"landscaper.gardener.cloud/v1alpha1","kind":"Target","metadata":{"name":"cluster","creationTimestamp":null},` +
		`"spec":{"type":"landscaper.gardener.cloud/kubernetes-cluster","config":{"kubeconfig":"k"}}},"content":"{\"kubeconfig\":\"k\"}"},` +
		`"cd":{"meta":{"schemaVersion":"v2"},"components":[]},"blueprint":"kind: Blueprint"}`
	if string(res.Export) != want {
		t.Fatalf("export\n%s\nwant\n%s", res.Export, want)
	}

	bare := deployer.Request{Config: shConfig(t, `env | grep -E '^(TARGET|CONTENT|COMPONENT_DESCRIPTOR)_PATH=' && exit 9; true`, nil)}
	if _, err := d.Reconcile(context.Background(), bare); err != nil {
		t.Fatalf("contract variables set without their parts: %v", err)
	}
}
