package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/target"
)

const attrKubernetesRateLimit = "kubernetes_rate_limit"

// kubernetesRateLimitModel is the provider's kubernetes_rate_limit.
type kubernetesRateLimitModel struct {
	QPS   types.Int64 `tfsdk:"qps"`
	Burst types.Int64 `tfsdk:"burst"`
}

func kubernetesRateLimitAttribute() schema.Attribute {
	return schema.SingleNestedAttribute{
		MarkdownDescription: "A client-side limit of the requests the kubernetes-manifest and helm deployers send " +
			"to each cluster, shared by all deploy items on one target. Without it there is none: the API " +
			"server protects itself with API Priority and Fairness, answering excess requests with `429` and " +
			"`Retry-After`, which are waited for and retried (controller-runtime disables client-side limits " +
			"by default for the same reason). Set it to spare an API server without Priority and Fairness, or " +
			"to leave room for others on a shared one.",
		Optional: true,
		Attributes: map[string]schema.Attribute{
			"qps": schema.Int64Attribute{
				MarkdownDescription: "Sustained requests per second to one cluster.",
				Required:            true,
				Validators:          []validator.Int64{int64validator.AtLeast(1)},
			},
			"burst": schema.Int64Attribute{
				MarkdownDescription: "Requests that may go at once above `qps`. Defaults to twice `qps`.",
				Optional:            true,
				Validators:          []validator.Int64{int64validator.AtLeast(1)},
			},
		},
	}
}

// kubernetesRateLimit is the limit the configuration asks for; null (or
// not yet known) is none.
func kubernetesRateLimit(ctx context.Context, o types.Object) target.RateLimit {
	var m kubernetesRateLimitModel
	if o.IsNull() || o.IsUnknown() || o.As(ctx, &m, basetypes.ObjectAsOptions{}).HasError() ||
		m.QPS.IsNull() || m.QPS.IsUnknown() || m.QPS.ValueInt64() < 1 {
		return target.RateLimit{}
	}
	l := target.RateLimit{QPS: float32(m.QPS.ValueInt64()), Burst: int(2 * m.QPS.ValueInt64())}
	if !m.Burst.IsNull() && !m.Burst.IsUnknown() {
		l.Burst = int(m.Burst.ValueInt64())
	}
	return l
}
