package provider

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/masking"
)

// plan_cluster_changes: a plan dry-runs the Kubernetes items that will
// run against their clusters (deployer.Previewer) and shows per object
// what the apply would do, in cluster_changes.

const (
	attrPlanClusterChanges = "plan_cluster_changes"
	attrClusterChanges     = "cluster_changes"
)

const planClusterChangesDescription = "When `true`, a plan dry-runs every kubernetes-manifest and helm deploy " +
	"item that will run against its target (the API server validates and defaults each write with " +
	"`dryRun=All`; a helm release as `helm upgrade --install --dry-run=server`), and `cluster_changes` shows " +
	"per object what the apply would do. A cluster that cannot be reached makes this a warning, never a " +
	"failed plan. Costs a round trip per object at every plan that runs items."

func planClusterChangesAttribute() schema.BoolAttribute {
	return schema.BoolAttribute{Optional: true, MarkdownDescription: planClusterChangesDescription +
		" Overrides the provider's `plan_cluster_changes`."}
}

func clusterChangesAttribute(key string) schema.MapAttribute {
	return schema.MapAttribute{
		Computed:    true,
		ElementType: types.MapType{ElemType: types.StringType},
		MarkdownDescription: "With `plan_cluster_changes`, what the planned run changes in the clusters: by deploy " +
			"item (" + key + ") that runs, by object (`\"apps/v1 Deployment default/web\"`), one of `create`, " +
			"`delete`, `unchanged` or `update: ` and the paths of the fields that change. Field values are never " +
			"shown, so a Secret's data stays unseen; the rendered values are in the item's config. After the " +
			"apply it keeps what that apply's plan showed; a plan that runs nothing keeps it. Null when " +
			"`plan_cluster_changes` is off.",
	}
}

// clusterChangesWanted reads the resource's plan_cluster_changes, which
// overrides the provider's.
func clusterChangesWanted(f map[string]tftypes.Value, providerDefault bool) bool {
	return boolean(f[attrPlanClusterChanges], providerDefault)
}

// previewer collects dry runs into the cluster_changes value.
type previewer struct {
	e       *engine.Engine
	changes map[string]tftypes.Value
	ps      problems
	// sec, when set, masks what the dry runs say: an object's name or
	// an API server's message may quote a value a secret influenced.
	sec *masking.Tree
}

func (p *previewer) masked(s string) string {
	if p.sec == nil {
		return s
	}
	return p.sec.Text(s)
}

// add dry-runs the items of one execution that will run; key names an
// item as the attribute does.
func (p *previewer) add(ctx context.Context, name string, ex engine.Execution, prev engine.Status, run engine.Run,
	items []string, key func(string) string,
) {
	results := p.e.Preview(ctx, name, ex, prev, run, items)
	for _, item := range slices.Sorted(maps.Keys(results)) {
		r := results[item]
		if r.Err != nil {
			p.ps.warn(tftypes.NewAttributePath().WithAttributeName(attrClusterChanges),
				fmt.Sprintf("Cluster changes of deploy item %q unknown", key(item)),
				p.masked(fmt.Sprintf("The dry run against its target failed, so the plan cannot show what the apply changes there: %v", r.Err)))
			continue
		}
		objects := make(map[string]tftypes.Value, len(r.Changes))
		for _, c := range r.Changes {
			objects[p.masked(c.Object)] = stringValue(p.masked(c.Summary))
		}
		p.changes[key(item)] = tftypes.NewValue(tftypes.Map{ElementType: tftypes.String}, objects)
	}
}

func (p *previewer) value(t tftypes.Type) tftypes.Value {
	return tftypes.NewValue(t, p.changes)
}

// keepClusterChanges makes the applied state carry what the plan showed:
// Terraform holds an apply to the known values of its plan.
func keepClusterChanges(t tftypes.Type, planned tftypes.Value) tftypes.Value {
	if !planned.IsKnown() {
		return tftypes.NewValue(t, nil)
	}
	return planned
}
