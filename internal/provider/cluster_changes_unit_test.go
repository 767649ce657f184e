package provider

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
)

type fakePreviewer struct{ deployer.Deployer }

func (fakePreviewer) Validate(json.RawMessage) error { return nil }

func (fakePreviewer) Preview(_ context.Context, req deployer.Request) ([]deployer.ObjectChange, error) {
	if req.Item == "down" {
		return nil, errors.New("dial tcp 127.0.0.1:1: connection refused")
	}
	return []deployer.ObjectChange{{Object: "v1 ConfigMap ns/a", Summary: "update: data.k"}}, nil
}

// A dry run that fails is a warning naming the item and why, and the
// item is left out; the others show their changes by object.
func TestPreviewerWarnsAndLeavesOutFailedItems(t *testing.T) {
	reg := deployer.NewRegistry()
	reg.Register(fakePreviewer{}, "fake")
	pv := &previewer{e: engine.New(reg, 2), changes: map[string]tftypes.Value{}}
	ex := engine.Execution{Items: map[string]engine.ItemSpec{"down": {Type: "fake"}, "up": {Type: "fake"}, "idle": {Type: "fake"}}}
	pv.add(context.Background(), "x", ex, engine.Status{}, engine.Run{}, []string{"down", "up"}, func(n string) string { return "sub/" + n })
	if len(pv.changes) != 1 || str(fields(pv.changes["sub/up"])["v1 ConfigMap ns/a"]) != "update: data.k" {
		t.Fatalf("changes %v", pv.changes)
	}
	if len(pv.ps) != 1 || !pv.ps[0].warning || !strings.Contains(pv.ps[0].summary, `"sub/down"`) || !strings.Contains(pv.ps[0].detail, "connection refused") {
		t.Fatalf("problems %+v", pv.ps)
	}
}
