// Package provider is the Terraform glue: schemas, models, CRUD and
// diagnostics. All behaviour lives in internal/engine and the deployers;
// this package only translates between Terraform values and engine types.
package provider

import (
	"context"
	"os"
	"sync/atomic"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/list"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/exec"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/helm"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/manifest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/mock"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/installation"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/ociregistry"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/render"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/target"
)

// DefaultMaxParallelism is the number of deploy items running at once when
// the provider block does not say.
const DefaultMaxParallelism = 10

var (
	_ provider.Provider                   = (*Provider)(nil)
	_ provider.ProviderWithValidateConfig = (*Provider)(nil)
	_ provider.ProviderWithListResources  = (*Provider)(nil)
)

// Provider is the landscaper provider.
type Provider struct {
	version    string
	deployers  *deployer.Registry
	engine     atomic.Pointer[engine.Engine]
	components atomic.Pointer[components]
	// planClusterChanges is the provider's plan_cluster_changes.
	planClusterChanges atomic.Bool
	// targets and allowed are the provider's targets and
	// allowed_deployers, set by Configure.
	targets       atomic.Pointer[providerTargets]
	allowed       atomic.Pointer[allowedDeployers]
	executions    *executions
	installations *installations
	blueprints    *blueprints
}

// New returns a constructor of the provider for a plain framework server.
// Terraform is served by NewServer, which adds the protocol fast path.
func New(version string) func() provider.Provider {
	return func() provider.Provider { return newProvider(version) }
}

func newProvider(version string) *Provider {
	p := &Provider{version: version}
	p.deployers = deployers(p.chartRegistry)
	p.executions = &executions{
		vt:             newValueTypes(objectType(&executionResource{})),
		deployers:      p.deployers,
		engine:         p.engine.Load,
		clusterChanges: p.planClusterChanges.Load,
		targets:        p.targets.Load,
		allowed:        p.allowed.Load,
	}
	p.installations = &installations{
		t:              objectType(&installationResource{}),
		deployers:      p.deployers,
		engine:         p.engine.Load,
		clusterChanges: p.planClusterChanges.Load,
		targets:        p.targets.Load,
		allowed:        p.allowed.Load,
	}
	p.installations.registry = p.registryCredentials
	p.installations.overwrites = p.componentOverwrites
	p.blueprints = &blueprints{t: dataSourceObjectType(&blueprintDataSource{}), x: p.installations}
	p.installations.load = func(ctx context.Context, src render.Source) (installation.Blueprint, error) {
		opts := render.Options{Deployers: p.deployers}
		if c := p.components.Load(); c != nil {
			opts.OCM, opts.Verifier = c.context(), c.verifier
		}
		return render.Load(ctx, src, opts)
	}
	return p
}

// routes is the routing table of NewServer: the resources whose data RPCs
// are served at the protocol level, by type name.
func (p *Provider) routes() map[string]protocolResource {
	return map[string]protocolResource{
		executionType:    p.executions,
		installationType: p.installations,
	}
}

// dataRoutes is the routing table of NewServer for data sources.
func (p *Provider) dataRoutes() map[string]protocolDataSource {
	return map[string]protocolDataSource{blueprintType: p.blueprints}
}

// dataSourceObjectType is objectType for a framework data source.
func dataSourceObjectType(d datasource.DataSource) tftypes.Object {
	var s datasource.SchemaResponse
	d.Schema(context.Background(), datasource.SchemaRequest{}, &s)
	t, ok := withoutOptionalAttributes(s.Schema.Type().TerraformType(context.Background())).(tftypes.Object)
	if !ok {
		panic("a data source schema is always an object")
	}
	return t
}

// objectType is the Terraform type of a framework resource's schema, so
// each schema is defined once.
func objectType(r resource.Resource) tftypes.Object {
	var s resource.SchemaResponse
	r.Schema(context.Background(), resource.SchemaRequest{}, &s)
	t, ok := withoutOptionalAttributes(s.Schema.Type().TerraformType(context.Background())).(tftypes.Object)
	if !ok {
		panic("a resource schema is always an object")
	}
	return t
}

// Deployers returns a registry with every deployer type this provider
// supports, under Landscaper's full type names and short aliases.
func Deployers() *deployer.Registry { return deployers(nil) }

// deployers is Deployers with the helm deployer pulling charts through
// the registry client that chartRegistry returns once the provider is
// configured.
func deployers(chartRegistry func() *ociregistry.Client) *deployer.Registry {
	reg := deployer.NewRegistry()
	reg.Register(mock.New(), "landscaper.gardener.cloud/mock", "mock")
	wd, _ := os.Getwd()
	reg.Register(exec.New(exec.Options{DefaultWorkingDir: wd}), "exec")
	reg.Register(helm.New(helm.Options{WorkingDir: wd, Registry: chartRegistry}), helm.Type, helm.Alias)
	reg.Register(manifest.New(), manifest.Type, manifest.Alias)
	reg.RegisterTargetType(target.KubernetesClusterType, target.CheckKubernetesCluster)
	reg.RegisterTargetLocator(target.KubernetesClusterType, target.KubernetesClusterLocation)
	return reg
}

type providerModel struct {
	MaxParallelism      types.Int64  `tfsdk:"max_parallelism"`
	PlanClusterChanges  types.Bool   `tfsdk:"plan_cluster_changes"`
	KubernetesRateLimit types.Object `tfsdk:"kubernetes_rate_limit"`
	// Targets and AllowedDeployers are read from the raw configuration
	// (see Configure); the fields only give the framework a place.
	Targets          types.Map  `tfsdk:"targets"`
	AllowedDeployers types.List `tfsdk:"allowed_deployers"`
	componentsModel
}

func (p *Provider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "landscaper"
	resp.Version = p.version
}

func (p *Provider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Runs [Landscaper](https://github.com/gardener/landscaper) in-process: " +
			"installations from blueprints and OCM components, and executions of deploy items, are " +
			"reconciled in dependency order during `terraform apply` and deleted in reverse order during " +
			"`terraform destroy`, against the clusters their targets name. No Landscaper cluster is needed.",
		Attributes: func() map[string]schema.Attribute {
			attrs := componentProviderAttributes()
			attrs["max_parallelism"] = schema.Int64Attribute{
				MarkdownDescription: "Maximum number of deploy items running at once, across all resources " +
					"of this provider configuration. Defaults to `10`.",
				Optional:   true,
				Validators: []validator.Int64{int64validator.AtLeast(1)},
			}
			attrs[attrKubernetesRateLimit] = kubernetesRateLimitAttribute()
			attrs[attrTargets] = providerTargetsAttribute()
			attrs[attrAllowedDeployers] = allowedDeployersAttribute()
			attrs[attrPlanClusterChanges] = schema.BoolAttribute{Optional: true,
				MarkdownDescription: planClusterChangesDescription + " Defaults to `false`; a resource's own " +
					"`plan_cluster_changes` overrides it."}
			return attrs
		}(),
	}
}

// ValidateConfig reports bad component settings at plan time, on their
// attribute paths.
func (p *Provider) ValidateConfig(ctx context.Context, req provider.ValidateConfigRequest, resp *provider.ValidateConfigResponse) {
	var cfg providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	cc, diags := cfg.decode(ctx)
	resp.Diagnostics.Append(diags...)
	raw := fields(req.Config.Raw)
	_, diags = decodeProviderTargets(raw[attrTargets], p.deployers)
	resp.Diagnostics.Append(diags...)
	_, diags = decodeAllowedDeployers(raw[attrAllowedDeployers], p.deployers)
	resp.Diagnostics.Append(diags...)
	resp.Diagnostics.Append(cc.signatureWarnings()...)
}

func (p *Provider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var cfg providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	limit := DefaultMaxParallelism
	if !cfg.MaxParallelism.IsNull() && !cfg.MaxParallelism.IsUnknown() {
		limit = int(cfg.MaxParallelism.ValueInt64())
	}
	// client-go and helm log globally: their lines go to this provider's
	// log, at DEBUG, from now on.
	target.SetLogger(newTFLogLogger(ctx))
	target.SetRateLimit(kubernetesRateLimit(ctx, cfg.KubernetesRateLimit))
	raw := fields(req.Config.Raw)
	pt, diags := decodeProviderTargets(raw[attrTargets], p.deployers)
	resp.Diagnostics.Append(diags...)
	allowed, adiags := decodeAllowedDeployers(raw[attrAllowedDeployers], p.deployers)
	resp.Diagnostics.Append(adiags...)
	if resp.Diagnostics.HasError() {
		return
	}
	p.targets.Store(pt)
	p.allowed.Store(allowed)
	e := engine.New(p.deployers, limit)
	e.Targets = pt.resolve
	if allowed != nil {
		e.Allowed = allowed.check
	}
	p.engine.Store(e)
	p.planClusterChanges.Store(cfg.PlanClusterChanges.ValueBool())
	cc, diags := cfg.decode(ctx)
	resp.Diagnostics.Append(diags...)
	if diags.HasError() {
		return
	}
	c, err := newComponents(cc, p.version)
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root(attrCacheDir), "Cannot use the component cache", err.Error())
		return
	}
	p.components.Store(c)
}

func (p *Provider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{
		func() resource.Resource { return &executionResource{} },
		func() resource.Resource { return &installationResource{} },
	}
}

// ListResources are served by the framework on every path (Terraform
// 1.14+ asks for them; earlier clients never do).
func (p *Provider) ListResources(context.Context) []func() list.ListResource {
	return []func() list.ListResource{
		func() list.ListResource { return &installationList{x: p.installations} },
	}
}

func (p *Provider) DataSources(context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{
		func() datasource.DataSource { return &blueprintDataSource{} },
	}
}
