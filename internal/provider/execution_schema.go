package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func errorSchema(of string) schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		MarkdownDescription: "The last error of " + of + " in Landscaper's shape, or null.",
		Computed:            true,
		Attributes: map[string]schema.Attribute{
			"operation": schema.StringAttribute{Computed: true, MarkdownDescription: "What was being done: `Reconcile` or `Delete`."},
			"reason":    schema.StringAttribute{Computed: true, MarkdownDescription: "Short machine-readable cause, such as `Timeout` or `CommandFailed`."},
			"message":   schema.StringAttribute{Computed: true, MarkdownDescription: "What happened, for humans."},
			"codes": schema.ListAttribute{Computed: true, ElementType: types.StringType,
				MarkdownDescription: "Landscaper error codes, such as `ERR_TIMEOUT` or `ERR_CONFIGURATION_PROBLEM`."},
		},
	}
}

func (r *executionResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A Landscaper execution: a set of deploy items with dependencies, reconciled " +
			"in-process during `terraform apply` and deleted in reverse dependency order during `terraform destroy`.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				MarkdownDescription: "Same as `name`.",
				Computed:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"name": schema.StringAttribute{
				MarkdownDescription: "Name of the execution; its identity. Changing it replaces the resource. " +
					"Deploy items see it as `EXECUTION_NAME`.",
				Required:      true,
				Validators:    []validator.String{stringvalidator.LengthAtLeast(1)},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"deploy_items": schema.MapNestedAttribute{
				MarkdownDescription: "Deploy items keyed by name. Removing an item deletes it (its deployer's " +
					"delete runs) during the next apply.",
				Required: true,
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"type": schema.StringAttribute{
						MarkdownDescription: "Deployer type: `exec`, or `landscaper.gardener.cloud/mock` (alias `mock`).",
						Required:            true,
					},
					"config": schema.StringAttribute{
						MarkdownDescription: "Deployer configuration as JSON or YAML text (for example from `jsonencode`). " +
							"Checked by the deployer at plan time; unknown fields are errors. Empty means `{}`.",
						Optional: true,
					},
					"depends_on": schema.ListAttribute{
						MarkdownDescription: "Names of other deploy items of this execution that must have succeeded " +
							"before this one starts. On destroy, this item is deleted before them.",
						Optional:    true,
						ElementType: types.StringType,
					},
					"timeout": schema.StringAttribute{
						MarkdownDescription: "How long one run of the item may take, retries included: a Go duration " +
							"(`90s`, `10m`) or `none`. Over it the item fails with `ERR_TIMEOUT`. Defaults to `10m`.",
						Optional: true,
					},
					"update_on_change_only": schema.BoolAttribute{
						MarkdownDescription: "When `true`, the item is not re-run while its type and config equal " +
							"those of its last successful run. When `false`, it re-runs in every apply that runs anything. Defaults to `true`.",
						Optional: true,
					},
					"sensitive_export": schema.BoolAttribute{
						MarkdownDescription: "When `true`, the item's export appears in `sensitive_exports` instead of " +
							"`exports`, and is masked in logs. Defaults to `false`.",
						Optional: true,
					},
				}},
			},
			"exports": schema.DynamicAttribute{
				MarkdownDescription: "An object with one attribute per deploy item holding its export " +
					"(null when the item exported nothing, failed, or its export is sensitive).",
				Computed: true,
			},
			"sensitive_exports": schema.DynamicAttribute{
				MarkdownDescription: "Like `exports`, for the items with `sensitive_export = true`; null for the others.",
				Computed:            true,
				Sensitive:           true,
			},
			"status": schema.SingleNestedAttribute{
				MarkdownDescription: "What the last job did.",
				Computed:            true,
				Attributes: map[string]schema.Attribute{
					"phase": schema.StringAttribute{Computed: true, MarkdownDescription: "Phase of the execution: " +
						"`Init`, `Progressing`, `Completing`, `Succeeded`, `Failed`; when deleting `InitDelete`, `Deleting`, `DeleteFailed`."},
					"job_id":          schema.StringAttribute{Computed: true, MarkdownDescription: "ID of the last job; every apply that runs anything starts a new one."},
					"job_id_finished": schema.StringAttribute{Computed: true, MarkdownDescription: "Equals `job_id` once that job has finished."},
					"last_error":      errorSchema("the execution"),
					"deploy_items": schema.MapNestedAttribute{
						MarkdownDescription: "Status of every deploy item, by name.",
						Computed:            true,
						NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
							"phase": schema.StringAttribute{Computed: true, MarkdownDescription: "Phase of the item. " +
								"`Init` means it was declared but has not run yet."},
							"job_id_finished": schema.StringAttribute{Computed: true, MarkdownDescription: "The job in which the item " +
								"last finished a run. Items skipped because they did not change keep the job they last ran in."},
							"last_error": errorSchema("the deploy item"),
							"provider_status": schema.StringAttribute{Computed: true, MarkdownDescription: "Deployer-specific " +
								"status as JSON text, or null."},
						}},
					},
				},
			},
			"timeouts": timeoutsAttribute(ctx),
		},
	}
}

// timeoutsAttribute is the framework's timeouts attribute with our defaults
// described, since the framework leaves the attribute itself undocumented.
func timeoutsAttribute(ctx context.Context) schema.Attribute {
	a := timeouts.Attributes(ctx, timeouts.Opts{Create: true, Update: true, Delete: true})
	if n, ok := a.(schema.SingleNestedAttribute); ok {
		n.MarkdownDescription = "Bounds for a whole apply (`create`, `update`) or destroy (`delete`) of this " +
			"execution, each `1h` by default. When one expires, running items are stopped and fail with `ERR_TIMEOUT`."
		return n
	}
	return a
}
