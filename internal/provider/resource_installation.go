package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/google/uuid"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/atrest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/installation"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/lscluster"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/masking"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/privatestate"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/render"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/rollout"
)

const installationType = "landscaper_installation"

// installationSchemaVersion is bumped whenever the schema's type changes.
// Version 2 added deploy_items and sensitive_imports and slimmed status;
// version 3 rollout, rollout_plan and status.rollout; version 4
// sensitive_exports; version 5 made target_lists, target_maps and
// target_exports not sensitive as a whole (only target_exports' config
// is) and added target_exports[*].name, which state of version 4 reads as
// null; version 6 sensitive_imports_wo (write-only, always null in
// state) and sensitive_imports_wo_version, which earlier state reads as
// null; version 7 landscaper_cluster, automatic_reconcile and
// landscaper_objects (remote mode), null in earlier state and in-process.
const installationSchemaVersion = 7

const attrSensitiveExports = "sensitive_exports"

var (
	_ resource.Resource                = (*installationResource)(nil)
	_ resource.ResourceWithImportState = (*installationResource)(nil)
)

// installationResource is landscaper_installation as the framework sees
// it: schema and import. Its data RPCs are served by installations at the
// protocol level, like the execution's: a tree of a thousand deploy items
// is as many nested values.
type installationResource struct{ servedBelowFramework }

func (r *installationResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_installation"
}

func (r *installationResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Version: installationSchemaVersion,
		MarkdownDescription: "A Landscaper installation: a blueprint, run in-process with its sub-installations " +
			"and deploy items during `terraform apply`, and deleted in reverse order during `terraform destroy`.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				MarkdownDescription: "Same as `name`.",
				Computed:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"name": schema.StringAttribute{
				MarkdownDescription: "Name of the installation; its identity. Changing it replaces the resource. " + nameRuleDescription,
				Required:            true,
			},
			attrReconcileTrigger: reconcileTriggerAttribute("installation and of every sub-installation"),
			"blueprint": schema.SingleNestedAttribute{
				MarkdownDescription: "Where the blueprint comes from: exactly one of `path`, `filesystem` and `ref`.",
				Required:            true,
				Attributes: map[string]schema.Attribute{
					"path": schema.StringAttribute{Optional: true, MarkdownDescription: "A directory holding `blueprint.yaml` " +
						"and the files it refers to. Editing any of them shows an update in the next plan. A relative path is " +
						"relative to the directory Terraform runs in, not to the module: write `\"${path.module}/blueprint\"` in a module."},
					"filesystem": schema.MapAttribute{Optional: true, ElementType: types.StringType, MarkdownDescription: "The " +
						"blueprint's files inline, by path (`blueprint.yaml`, `deploy-execution.yaml`, ...)."},
					"ref": schema.StringAttribute{Optional: true, MarkdownDescription: "The name of a resource of `component` " +
						"(of type `blueprint` or `landscaper.gardener.cloud/blueprint`) holding the blueprint."},
				},
			},
			"component": schema.SingleNestedAttribute{
				MarkdownDescription: "The component the blueprint belongs to: what `blueprint.ref`, `cd://` references, " +
					"`.cd`, `.components`, `getResource` and `getComponent` in templates, and component charts of the helm " +
					"deployer resolve against. It and every component it references, transitively, come from `constructors` " +
					"first, then from `repository`, `repository_context` or the provider's `repository_context`, " +
					"with the provider's `component_overwrites` applied.",
				Optional: true,
				Attributes: map[string]schema.Attribute{
					"name":    schema.StringAttribute{Required: true, MarkdownDescription: "Component name, such as `github.com/acme/app`."},
					"version": schema.StringAttribute{Required: true, MarkdownDescription: "Component version."},
					"constructors": schema.ListAttribute{Optional: true, ElementType: types.StringType, MarkdownDescription: "OCM " +
						"component-constructor files holding components; resources with input type `dir` or `file` are read " +
						"from disk, relative to their file. Components found here win over the repository's."},
					attrRepositoryContext: schema.MapAttribute{Optional: true, ElementType: types.StringType,
						MarkdownDescription: "The OCM repository to read the component from, instead of the provider's. " +
							repositoryContextDescription},
					"repository": schema.StringAttribute{Optional: true, MarkdownDescription: "A local OCM repository to " +
						"read the component from instead of a registry: a common transport format (CTF) directory or " +
						"archive, as `ocm transfer` or `ocm add componentversions --create --file` write it, or a " +
						"component archive (`component-descriptor.yaml` and `blobs/`). For air-gapped use. Conflicts " +
						"with `repository_context`."},
				},
			},
			"verification": schema.SingleNestedAttribute{
				MarkdownDescription: "Verify the component version's signature before anything is rendered, as " +
					"Landscaper's `spec.verification` does. Every component it references must match the digest its " +
					"reference records, and every resource read from them the digest the descriptor records; a " +
					"missing, wrong or unverifiable signature, or tampered content, is a plan-time error and nothing runs.",
				Optional: true,
				Attributes: map[string]schema.Attribute{
					"signature_name": schema.StringAttribute{Required: true, MarkdownDescription: "The name of the " +
						"signature in the component version, and of the key in the provider's `verification_signatures` " +
						"that verifies it."},
				},
			},
			"imports": schema.DynamicAttribute{
				MarkdownDescription: "Data imports by import name; any value. Checked against the blueprint's import " +
					"declarations and JSON schemas at plan time when known.",
				Optional: true,
			},
			attrSensitiveImports: schema.DynamicAttribute{
				MarkdownDescription: "Data imports whose values are secret, by import name, as in `imports`; a name is " +
					"given in one of the two. Terraform hides the attribute, and every value of a rendered deploy item's " +
					"`config` that one of these influenced, whatever the template did with it (`b64enc`, a hash, a " +
					"substring, `printf`), shows as `***` (see `deploy_items`); so do exports computed from them (see " +
					"`sensitive_exports`).",
				Optional:  true,
				Sensitive: true,
			},
			attrSensitiveImportsWO: schema.DynamicAttribute{
				MarkdownDescription: "Data imports whose values are secret, as in `sensitive_imports`, but write-only " +
					"(Terraform 1.11 or later, OpenTofu 1.11 or later): accepts ephemeral values, and Terraform keeps " +
					"them nowhere, neither in plans nor in the state. With it, the state and private state hold no " +
					"value these secrets influenced: rendered deploy items are kept with those values masked, and " +
					"`sensitive_exports` stays null. Terraform cannot tell when a write-only value changed, so a " +
					"change alone plans nothing: change `" + attrWOVersion + "` with it, and the deploy items the " +
					"secrets influenced run again. Conflicts with `sensitive_imports` and with inline target configs " +
					"(use the provider's `targets`) and `rollout`. A deploy item whose deployer needs the secret to " +
					"delete it (`exec`) cannot be deleted: see the security guide.",
				Optional:  true,
				Sensitive: true,
				WriteOnly: true,
			},
			attrWOVersion: schema.Int64Attribute{
				MarkdownDescription: "Says when the values of `" + attrSensitiveImportsWO + "` changed: change it " +
					"(any other number) whenever they do. Then every deploy item they influenced runs again, and " +
					"nothing else does. Without a change to it, a new write-only value plans nothing.",
				Optional: true,
			},
			attrTargets: installationTargetsAttribute(),
			"target_lists": schema.MapAttribute{
				MarkdownDescription: "Target list imports by import name; each target as in `targets`: `{ name = \"...\" }` " +
					"naming a target of " + providerTargetsDocs + " (recommended), or inline (`type`, `config`, optionally " +
					"`name`, `labels`, `annotations`). Not sensitive, so plans and generated configuration show which " +
					"provider target each element uses. An inline target's `config` is stored in the state, and plans " +
					"and `terraform show` print it unless its value is sensitive to Terraform (a `sensitive = true` " +
					"variable, `sensitive(...)`, a sensitive attribute); a plan warns about every inline target here.",
				Optional:    true,
				ElementType: types.ListType{ElemType: installationTargetType()},
			},
			"target_maps": schema.MapAttribute{
				MarkdownDescription: "Target map imports by import name, each a map of targets by key; each target as in " +
					"`target_lists`: a reference to a target of " + providerTargetsDocs + " or inline. Not sensitive, like " +
					"`target_lists`: an inline `config` shows in plans unless its value is sensitive to Terraform.",
				Optional:    true,
				ElementType: types.MapType{ElemType: installationTargetType()},
			},
			"exports": schema.DynamicAttribute{
				MarkdownDescription: "The blueprint's data exports by name, as its export executions computed them. " +
					"An export a secret influenced is null here and its value is in `sensitive_exports`.",
				Computed: true,
			},
			attrSensitiveExports: schema.DynamicAttribute{
				MarkdownDescription: "The data exports a secret influenced, by the same names as `exports`: an export " +
					"read from a Kubernetes Secret (an export's `fromResource` or `fromObjectRef` of kind `Secret`), or " +
					"computed from a target's config, a value of `sensitive_imports`, or the export of a deploy item " +
					"that was given a secret, through any export execution. Terraform hides it; `exports` holds null " +
					"under those names. Null when no export is sensitive.",
				Computed:  true,
				Sensitive: true,
			},
			"target_exports": schema.MapNestedAttribute{
				MarkdownDescription: "The blueprint's target exports by name. An export that passes on a target of " +
					providerTargetsDocs + " stays a reference to it: `name` names it and `config` is null, so a " +
					"downstream installation uses it as `{ name = landscaper_installation.x.target_exports[\"...\"].name }`, " +
					"and no config reaches the state.",
				Computed: true,
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"name": schema.StringAttribute{Computed: true, MarkdownDescription: "For an export that passes on a " +
						"target of " + providerTargetsDocs + ": that target's name; null for other targets."},
					"type": schema.StringAttribute{Computed: true, MarkdownDescription: "Target type."},
					"config": schema.StringAttribute{Computed: true, Sensitive: true, MarkdownDescription: "Target " +
						"config as JSON text; null for a target of " + providerTargetsDocs + "."},
					"labels": schema.MapAttribute{Computed: true, ElementType: types.StringType,
						MarkdownDescription: "The exported target's labels, or null."},
					"annotations": schema.MapAttribute{Computed: true, ElementType: types.StringType,
						MarkdownDescription: "The exported target's annotations, or null."},
				}},
			},
			attrDeployItems: schema.MapNestedAttribute{
				MarkdownDescription: "Every deploy item of the tree as rendered, by `\"<installation path>/<item>\"` as in " +
					"`status.deploy_items`: what each item is asked to do. Known at plan time whenever the inputs " +
					"are, so a plan shows the rendered configuration's diff. Every value a secret influenced (a " +
					"target's config, `sensitive_imports`, a sibling's sensitive export), whatever the template did " +
					"with it, is shown as `***`, or with only the secret part masked (`admin:***`): the tree is " +
					"rendered a second time with stand-ins for the secrets, and what differs is masked: values, map " +
					"keys, lists of another length, and an item's type or target (`***`); an item whose name a " +
					"secret made is keyed `\"<installation path>/***\"` here and in `status`. The `data` " +
					"and `stringData` of every Kubernetes Secret are always masked. See the security guide's " +
					"threat model for what masking promises.",
				Computed:     true,
				NestedObject: schema.NestedAttributeObject{Attributes: renderedItemAttributes()},
			},
			"status": schema.SingleNestedAttribute{
				MarkdownDescription: "What the last job did, for the installation and everything under it. A plan " +
					"that runs items shows the status a successful apply leaves (a new `job_id`, every item " +
					"`Succeeded`); a failed apply records what happened instead.",
				Computed: true,
				Attributes: map[string]schema.Attribute{
					"phase": schema.StringAttribute{Computed: true, MarkdownDescription: "Phase of the root installation: `Init`, " +
						"`CleanupOrphaned`, `ObjectsCreated`, `Progressing`, `Completing`, `Succeeded`, `Failed`; when deleting " +
						"`InitDelete`, `TriggerDelete`, `Deleting`, `DeleteFailed`."},
					"job_id":          schema.StringAttribute{Computed: true, MarkdownDescription: "ID of the last job; every apply that runs anything starts a new one, handed down the whole tree."},
					"job_id_finished": schema.StringAttribute{Computed: true, MarkdownDescription: "Equals `job_id` once that job has finished."},
					"last_error":      errorSchema("the root installation"),
					"installations": schema.MapNestedAttribute{
						MarkdownDescription: "Every installation of the tree by path: `\"\"` is the root, `\"a\"` its " +
							"sub-installation `a`, `\"a/b\"` one level deeper.",
						Computed: true,
						NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
							"phase":      schema.StringAttribute{Computed: true, MarkdownDescription: "Phase of the installation."},
							"last_error": errorSchema("the installation"),
						}},
					},
					attrDeployItems: schema.MapAttribute{
						MarkdownDescription: "The phase of every deploy item of the tree by `\"<installation path>/<item>\"`; " +
							"the root's items by their name alone. `Init` means declared but not run yet.",
						Computed:    true,
						ElementType: types.StringType,
					},
					attrDeployItemErrors: schema.MapNestedAttribute{
						MarkdownDescription: "The last error of every deploy item that has one, in Landscaper's shape, by the " +
							"same key as `deploy_items`; items without an error are left out.",
						Computed:     true,
						NestedObject: schema.NestedAttributeObject{Attributes: errorSchema("the deploy item").Attributes},
					},
					attrRollout: rolloutStatusAttribute(installationRollout),
				},
			},
			attrLandscaperCluster: schema.SingleNestedAttribute{
				MarkdownDescription: "Run the installation on a Landscaper resource cluster instead of in-process " +
					"(remote mode; see the guide \"Running on a Landscaper cluster\"). The apply writes the objects of " +
					"`" + attrLandscaperObjects + "` there with server-side apply, starts a reconcile of the Installation " +
					"and waits until Landscaper's controllers report it `Succeeded` or `Failed`; refresh reads its phase " +
					"and the objects written; destroy deletes the Installation, waits until Landscaper has removed what " +
					"its deploy items installed, then deletes the rest. The plan still renders the tree in-process, so " +
					"`deploy_items` and `plan_cluster_changes` show what Landscaper will be asked to do. Every target " +
					"import becomes a Landscaper Target whose config is kept in a Secret of the namespace (see the " +
					"security guide). Blueprints from `path` or `filesystem` travel inline in the Installation; a " +
					"component must come from a `repository_context` Landscaper can reach (`constructors` and a local " +
					"`repository` are refused). Not with `rollout`, `verification` or `sensitive_imports_wo`. " +
					"Adding it to an installation that ran in-process, or removing it, moves the installation " +
					"between the modes in place (an update: the deployed objects keep their UIDs, helm releases are " +
					"upgraded), when its last job succeeded and its blueprint and imports are unchanged; changing " +
					"its target or namespace replaces the resource.",
				Optional: true,
				Attributes: map[string]schema.Attribute{
					"target": schema.StringAttribute{Required: true, MarkdownDescription: "The provider target (of " +
						"type `landscaper.gardener.cloud/kubernetes-cluster`) whose cluster is Landscaper's resource cluster."},
					"namespace": schema.StringAttribute{Required: true, MarkdownDescription: "The namespace of that " +
						"cluster the Installation and its objects are written to; it must exist."},
				},
			},
			attrAutomaticReconcile: schema.SingleNestedAttribute{
				MarkdownDescription: "With `" + attrLandscaperCluster + "`: Landscaper reconciles the installation on " +
					"its own every `interval` after a job finished, succeeded or failed (the Installation's " +
					"`spec.automaticReconcile`), so drift in the target clusters is repaired between applies. A job " +
					"Landscaper ran on its own shows in `status` once it has finished; one that failed plans an update. " +
					"In-process, nothing runs between applies, so it is refused there.",
				Optional: true,
				Attributes: map[string]schema.Attribute{
					"interval": schema.StringAttribute{Required: true, MarkdownDescription: "How long after a job " +
						"Landscaper starts the next, as a Go duration: `\"1h\"`, `\"30m\"`."},
				},
			},
			attrLandscaperObjects: schema.MapAttribute{
				MarkdownDescription: "In remote mode (`" + attrLandscaperCluster + "`), the Landscaper objects the " +
					"installation writes, by `\"<kind>/<name>\"`, each as YAML: the Installation, its Context, a " +
					"DataObject per entry of `imports`, a Secret per entry of `sensitive_imports`, a Target and the " +
					"Secret holding its config per target import, and, when the provider's `registry_credentials` have " +
					"an entry for the component's registry, the Secret `<name>.registry` (type " +
					"`kubernetes.io/dockerconfigjson`) the Context names in `registryPullSecrets`. The data of every Secret shows as `***`, and any secret value elsewhere is masked " +
					"as in `deploy_items`; a Secret whose content the apply changes (a rotated credential) shows as " +
					"known after apply. Null in-process.",
				Computed:    true,
				ElementType: types.StringType,
			},
			attrRollout:            rolloutAttribute(installationRollout),
			attrRolloutPlan:        rolloutPlanAttribute(installationRollout),
			attrPlanClusterChanges: planClusterChangesAttribute(),
			attrClusterChanges:     clusterChangesAttribute("`\"<installation path>/<item>\"`, as in `deploy_items`"),
			"timeouts":             timeoutsAttribute(ctx, "installation"),
		},
	}
}

// installations implements landscaper_installation on Terraform values.
type installations struct {
	t         tftypes.Object
	deployers *deployer.Registry
	engine    func() *engine.Engine
	// load loads a root blueprint; render.Load outside tests.
	load func(ctx context.Context, src render.Source) (installation.Blueprint, error)
	// clusterChanges is the provider's plan_cluster_changes.
	clusterChanges func() bool
	// targets and allowed are the provider's targets and
	// allowed_deployers; nil before the provider is configured.
	targets func() *providerTargets
	allowed func() *allowedDeployers
	// registry is the provider's registry_credentials, by their keys;
	// nil before the provider is configured.
	registry func() map[string]lscluster.RegistryAuth
	// overwrites are the provider's component_overwrites; nil before the
	// provider is configured.
	overwrites func() []ocm.Overwrite
}

var _ protocolResource = (*installations)(nil)

func (x *installations) objectType() tftypes.Object { return x.t }
func (x *installations) schemaVersion() int64       { return installationSchemaVersion }

func attrPath(name string) *tftypes.AttributePath {
	return tftypes.NewAttributePath().WithAttributeName(name)
}

func (x *installations) validate(_ context.Context, config tftypes.Value) problems {
	var ps problems
	f := fields(config)
	validateName(&ps, attrPath("name"), "name", f["name"])
	ps = append(ps, validateTimeouts(f["timeouts"])...)
	_, _, rps := strategyOf(f[attrRollout])
	ps = append(ps, rps...)
	ps = append(ps, validateInstallationInputs(f, x.deployers)...)
	ps = append(ps, validateAtRest(f)...)
	ps = append(ps, validateRemote(f)...)
	return append(ps, inlineTargetsWarning(f)...)
}

// inlineTargetsWarning warns, once for the resource, about the inline
// targets of target_lists and target_maps. Neither attribute is sensitive,
// so that plans and generated configuration show references; an inline
// config is then hidden only if Terraform marked its value sensitive, which
// the provider cannot see.
func inlineTargetsWarning(f map[string]tftypes.Value) problems {
	var paths []string
	inline := func(t tftypes.Value) bool {
		c := fields(t)["config"]
		return !c.IsKnown() || !c.IsNull()
	}
	lists := fields(f["target_lists"])
	for _, name := range slices.Sorted(maps.Keys(lists)) {
		var elems []tftypes.Value
		_ = lists[name].As(&elems)
		for i, t := range elems {
			if inline(t) {
				paths = append(paths, fmt.Sprintf("target_lists[%q][%d]", name, i))
			}
		}
	}
	tmaps := fields(f["target_maps"])
	for _, name := range slices.Sorted(maps.Keys(tmaps)) {
		m := fields(tmaps[name])
		for _, key := range slices.Sorted(maps.Keys(m)) {
			if inline(m[key]) {
				paths = append(paths, fmt.Sprintf("target_maps[%q][%q]", name, key))
			}
		}
	}
	if len(paths) == 0 {
		return nil
	}
	var ps problems
	ps.warn(nil, "Inline target configs in target_lists or target_maps show in plans",
		fmt.Sprintf("%s: these targets are given inline, with config. target_lists and target_maps are not sensitive, "+
			"so that plans show which target each element uses; an inline config shows in plans and in terraform show, "+
			"and is stored in the state, unless its value is sensitive to Terraform (a variable with sensitive = true, "+
			"sensitive(...), a sensitive attribute). Define the target in the provider's targets and use it by name, "+
			"{ name = \"...\" }: its config then never reaches plans or state.", strings.Join(paths, ", ")))
	return ps
}

// validateInstallationInputs checks what an installation is rendered
// from: blueprint, component, verification, imports and targets. The
// blueprint data source takes the same attributes.
func validateInstallationInputs(f map[string]tftypes.Value, deployers *deployer.Registry) problems {
	var ps problems
	ps = append(ps, validateTargets(f[attrTargets], deployers, attrPath(attrTargets))...)
	// Sorted, so diagnostics come in the same order every time.
	lists := fields(f["target_lists"])
	for _, name := range slices.Sorted(maps.Keys(lists)) {
		var elems []tftypes.Value
		_ = lists[name].As(&elems)
		for i, t := range elems {
			ps = append(ps, validateTarget(t, deployers, attrPath("target_lists").WithElementKeyString(name).WithElementKeyInt(i))...)
		}
	}
	tmaps := fields(f["target_maps"])
	for _, name := range slices.Sorted(maps.Keys(tmaps)) {
		m := fields(tmaps[name])
		for _, key := range slices.Sorted(maps.Keys(m)) {
			at := attrPath("target_maps").WithElementKeyString(name).WithElementKeyString(key)
			ps = append(ps, validateTarget(m[key], deployers, at)...)
			if key == "" || strings.ContainsAny(key, "[]") {
				// Sub-installations name an element "import[key]".
				ps.add(at, "Invalid target map key", fmt.Sprintf("target map %q, key %q: a target map key is not empty and has no square brackets", name, key))
			}
		}
	}
	ps = append(ps, validateTargetMetadata(f)...)
	bp := fields(f["blueprint"])
	if bp != nil {
		set := 0
		for _, k := range []string{"path", "filesystem", "ref"} {
			if v := bp[k]; !v.IsKnown() || !v.IsNull() {
				set++
			}
		}
		if set != 1 {
			ps.add(attrPath("blueprint"), "Invalid blueprint", "set exactly one of path, filesystem and ref")
		}
		if r := bp["ref"]; r.IsKnown() && !r.IsNull() && f["component"].IsKnown() && f["component"].IsNull() {
			ps.add(attrPath("blueprint").WithAttributeName("ref"), "Invalid blueprint", "ref names a resource of component, so component must be set")
		}
	}
	ps = append(ps, validateComponent(f["component"], f["verification"])...)
	for _, a := range []string{"imports", attrSensitiveImports, attrSensitiveImportsWO} {
		if imp := f[a]; imp.IsKnown() && !imp.IsNull() {
			if _, ok := imp.Type().(tftypes.Object); !ok {
				if _, ok := imp.Type().(tftypes.Map); !ok {
					ps.add(attrPath(a), "Invalid imports", a+" must be an object or a map, by import name")
				}
			}
		}
	}
	plain := fields(f["imports"])
	for _, n := range slices.Sorted(maps.Keys(fields(f[attrSensitiveImports]))) {
		if _, ok := plain[n]; ok {
			ps.add(attrPath(attrSensitiveImports).WithElementKeyString(n), "Invalid imports",
				fmt.Sprintf("import %q is given in both imports and sensitive_imports; give it in one", n))
		}
	}
	return ps
}

// source reads where the blueprint comes from; known is false while any
// part of it is unknown.
func sourceOf(f map[string]tftypes.Value) (render.Source, bool) {
	if !f["blueprint"].IsFullyKnown() || !f["component"].IsFullyKnown() || !f["verification"].IsFullyKnown() {
		return render.Source{}, false
	}
	bp := fields(f["blueprint"])
	src := render.Source{Path: str(bp["path"]), Ref: str(bp["ref"])}
	if fs := fields(bp["filesystem"]); fs != nil {
		src.Filesystem = make(map[string]string, len(fs))
		for k, v := range fs {
			src.Filesystem[k] = str(v)
		}
	}
	if c := fields(f["component"]); c != nil {
		src.Component = &render.Component{Name: str(c["name"]), Version: str(c["version"]), Constructors: stringList(c["constructors"])}
		if rc := fields(c[attrRepositoryContext]); rc != nil {
			src.Component.RepositoryContext = map[string]any{}
			for k, v := range rc {
				src.Component.RepositoryContext[k] = str(v)
			}
		}
		if repo := str(c["repository"]); repo != "" {
			src.Component.RepositoryContext = localRepository(repo)
		}
		if v := fields(f["verification"]); v != nil {
			src.Component.Verify, src.Component.SignatureName = true, str(v["signature_name"])
		}
	}
	return src, true
}

// importsOf reads the imports; known is false while any part is unknown,
// including a provider target pt cannot resolve yet. A provider target
// that is not defined is a problem on the path of its reference.
func importsOf(f map[string]tftypes.Value, pt *providerTargets) (installation.Imports, bool, problems) {
	var imp installation.Imports
	data, known := valueToAny(f["imports"])
	secret, secretKnown := valueToAny(f[attrSensitiveImports])
	wo, woKnown := valueToAny(f[attrSensitiveImportsWO])
	if !known || !secretKnown || !woKnown || !f[attrTargets].IsFullyKnown() || !f["target_lists"].IsFullyKnown() || !f["target_maps"].IsFullyKnown() {
		return imp, false, nil
	}
	imp.Data, _ = data.(map[string]any)
	for _, m := range []any{secret, wo} {
		if sm, _ := m.(map[string]any); len(sm) > 0 {
			merged := make(map[string]any, len(imp.Data)+len(sm))
			maps.Copy(merged, imp.Data)
			maps.Copy(merged, sm)
			imp.Data = merged
		}
	}
	if wm, _ := wo.(map[string]any); len(wm) > 0 {
		imp = atrest.Sealed(imp, slices.Collect(maps.Keys(wm)), woVersion(f))
	}
	var ps problems
	imp.Targets, known, ps = targetsOf(f[attrTargets], pt, attrPath(attrTargets))
	add := func(t tftypes.Value, name string, at *tftypes.AttributePath) *deployer.Target {
		tg, p := targetOf(name, t, pt, at)
		ps = append(ps, p...)
		if tg == nil && len(p) == 0 {
			known = false
		}
		return tg
	}
	// Sorted, so diagnostics come in the same order every time.
	lists := fields(f["target_lists"])
	for _, name := range slices.Sorted(maps.Keys(lists)) {
		var elems []tftypes.Value
		_ = lists[name].As(&elems)
		l := make([]*deployer.Target, 0, len(elems))
		for i, t := range elems {
			if tg := add(t, fmt.Sprintf("%s[%d]", name, i), attrPath("target_lists").WithElementKeyString(name).WithElementKeyInt(i)); tg != nil {
				l = append(l, tg)
			}
		}
		if imp.TargetLists == nil {
			imp.TargetLists = map[string][]*deployer.Target{}
		}
		imp.TargetLists[name] = l
	}
	tmaps := fields(f["target_maps"])
	for _, name := range slices.Sorted(maps.Keys(tmaps)) {
		tm := map[string]*deployer.Target{}
		m := fields(tmaps[name])
		for _, key := range slices.Sorted(maps.Keys(m)) {
			if tg := add(m[key], fmt.Sprintf("%s[%s]", name, key), attrPath("target_maps").WithElementKeyString(name).WithElementKeyString(key)); tg != nil {
				tm[key] = tg
			}
		}
		if imp.TargetMaps == nil {
			imp.TargetMaps = map[string]map[string]*deployer.Target{}
		}
		imp.TargetMaps[name] = tm
	}
	return imp, known && !ps.errors(), ps
}

// loadProblems turns an error of loading or rendering into diagnostics on
// the attribute it is about, where there is one.
func loadProblems(err error) problems {
	var ps problems
	var ie *render.ImportError
	var se *render.SourceError
	var pe *installation.PathError
	var te *render.TemplateError
	switch {
	case errors.As(err, &pe) && pe.Path == "" && errors.As(pe.Err, &ie), errors.As(err, &ie) && (pe == nil || pe.Path == ""):
		for _, p := range ie.Problems {
			a := map[render.ImportKind]string{render.ImportData: "imports", render.ImportTarget: attrTargets,
				render.ImportTargetList: "target_lists", render.ImportTargetMap: "target_maps"}[p.Kind]
			at := attrPath(a).WithElementKeyString(p.Name)
			if i, err := strconv.Atoi(p.Element); err == nil && p.Kind == render.ImportTargetList {
				at = at.WithElementKeyInt(i)
			} else if p.Element != "" {
				at = at.WithElementKeyString(p.Element)
			}
			if p.Field != "" {
				at = at.WithAttributeName(p.Field)
			}
			// Named in the text too: a missing import has no place in
			// the configuration for Terraform to point at.
			ps.add(at, "Invalid import", fmt.Sprintf("%s import %q: %s", p.Kind, p.Name, p.Message))
		}
	case errors.As(err, &te):
		// The tree's blueprints all come from the root's blueprint source.
		summary := "Invalid installation template"
		if pe != nil && pe.Path != "" {
			summary = fmt.Sprintf("Invalid installation template in sub-installation %q", pe.Path)
		}
		ps.add(attrPath("blueprint"), summary, te.Error())
	case errors.As(err, &se):
		at := attrPath("blueprint").WithAttributeName(se.Field)
		switch se.Field {
		case "constructors":
			at = attrPath("component").WithAttributeName("constructors")
			if se.Index >= 0 {
				at = at.WithElementKeyInt(se.Index)
			}
		case "component", "verification":
			at = attrPath(se.Field)
		case "filesystem":
			if se.Key != "" {
				at = at.WithElementKeyString(se.Key)
			}
		}
		ps.add(at, "Invalid blueprint source", se.Err.Error())
	default:
		summary := "Blueprint cannot be rendered"
		if pe != nil && pe.Path != "" {
			summary = fmt.Sprintf("Sub-installation %q cannot be rendered", pe.Path)
		}
		ps.add(attrPath("blueprint"), summary, err.Error())
	}
	return ps
}

// settled checks what a settled tree's plan checks, without decoding its
// status: the last job succeeded, and the blueprint's content, the imports
// and reconcile_trigger are what it ran with. Loading the blueprint is what
// tells whether its files changed.
func (x *installations) settled(ctx context.Context, dv *tfprotov6.DynamicValue, private []byte) (bool, problems) {
	blobs, err := privatestate.Blobs(private)
	if err != nil || len(blobs[settledKey]) != 1 || len(blobs[inputKey]) == 0 {
		return false, nil
	}
	config, diags := decode(x, dv)
	if diags != nil {
		return false, nil
	}
	f := fields(config)
	src, srcKnown := sourceOf(f)
	imp, impKnown, _ := importsOf(f, x.targets().assuming(storedLocations(blobs[refsKey])))
	if !srcKnown || !impKnown {
		return false, nil
	}
	bp, err := x.load(ctx, src)
	if err != nil {
		return false, nil
	}
	return string(blobs[inputKey]) == settledInput(installation.InputHash(bp, imp), str(f[attrReconcileTrigger])), componentWarnings(bp)
}

// inputKey is a blob of settled private state: what the tree was run
// from (settledInput), so a no-op plan compares it without decoding the
// status.
const inputKey = "\x00input"

func settledInput(inputHash, trigger string) string { return inputHash + "\x00" + trigger }

func treeDrifted(st *installation.Status) bool {
	drifted := false
	st.Walk(func(_ string, s *installation.Status) { drifted = drifted || s.Execution.Drifted() })
	return drifted
}

// plan renders the tree when its inputs are known and shows what the job
// would do: every rendered deploy item, and the status a successful job
// leaves (see plannedStatus); a tree with nothing to do plans to its
// prior state.
func (x *installations) plan(ctx context.Context, prior, proposed tftypes.Value, priorPrivate []byte) (tftypes.Value, []*tftypes.AttributePath, problems) {
	if proposed.IsNull() {
		// A destroy: the provider's targets the tree used must still be
		// there, as the state keeps no config for them.
		saved, err := decodeInstallationPrivate(priorPrivate)
		if err != nil || saved.Remote != nil {
			// Landscaper deletes what it deployed, with its own targets.
			return proposed, nil, nil
		}
		dels, why := treeDeletions(saved.Status, ""), "is deleted when the resource is destroyed"
		ps := x.allowed().refusedDeletes(dels, why)
		ps = append(ps, refusedWithheld(x.deployers, dels, why)...)
		return proposed, nil, append(ps, x.targets().missingForDestroy(treeTargets(saved.Status), "destroying")...)
	}
	f := fields(proposed)
	f["id"] = f["name"]
	var replace []*tftypes.AttributePath
	pf := fields(prior)
	if pf != nil && !pf["name"].Equal(f["name"]) {
		replace = append(replace, attrPath("name"))
	}
	unknown := func(a ...string) {
		for _, a := range a {
			f[a] = tftypes.NewValue(x.t.AttributeTypes[a], tftypes.UnknownValue)
		}
	}
	unknownAll := func() tftypes.Value {
		unknown("status", "exports", attrSensitiveExports, "target_exports", attrDeployItems, attrClusterChanges, attrRolloutPlan)
		return tftypes.NewValue(x.t, f)
	}
	if prior.IsNull() {
		priorPrivate = nil
	}
	saved, err := decodeInstallationPrivate(priorPrivate)
	if err != nil {
		var ps problems
		ps.add(nil, "Corrupt private state", err.Error())
		return unknownAll(), replace, ps
	}
	if _, _, set, _ := remoteCluster(f); set {
		return x.planRemote(ctx, f, pf, saved, replace)
	}
	var leaving *storedInstallation
	if saved.Remote != nil {
		// Back in-process (installation_modes.go): planned as a first run
		// here, which adopts what Landscaper deployed; a replacement
		// deletes it on the Landscaper cluster instead.
		leaving = &storedInstallation{Status: saved.Status, Remote: saved.Remote}
		saved, priorPrivate = storedInstallation{}, nil
		f[attrLandscaperObjects] = tftypes.NewValue(x.t.AttributeTypes[attrLandscaperObjects], nil)
	}
	src, srcKnown := sourceOf(f)
	pt := x.targets().assuming(locations(treeTargets(saved.Status)))
	imp, impKnown, ips := importsOf(f, pt)
	if ips.errors() {
		return unknownAll(), replace, ips
	}
	// Terraform plans a changing resource again during the apply, with the
	// config of a pending provider target known: what the tree does there
	// is then known only after apply (see providerTargets.assuming).
	pending, unchanged := pt.pendingIn(imp), proposed.Equal(prior)
	if !srcKnown || !impKnown || !f["name"].IsKnown() {
		return unknownAll(), replace, nil
	}
	bp, err := x.load(ctx, src)
	if err != nil {
		return unknownAll(), replace, loadProblems(err)
	}
	warnings := componentWarnings(bp)
	if leaving != nil && !replaceNeeded(replace) {
		if refused := leaveProblems(leaving.Remote, leaving.Status, installation.InputHash(bp, imp)); refused.errors() {
			return unknownAll(), replace, append(warnings, refused...)
		}
		warnings = append(warnings, leaveWarning(leaving.Remote, leaving.Status, str(f["name"]))...)
	}
	sec := secretsOf(f, imp)
	sec.AddTree(saved.Status)
	strategy, strategyKnown, _ := strategyOf(f[attrRollout])
	// A settled tree whose imports and blueprint content are as they were
	// has nothing to do: no need to render it. A rollout (set, or taken
	// away) may change its status all the same.
	if len(replace) == 0 && settledMark(priorPrivate) && saved.Status.InputHash == installation.InputHash(bp, imp) &&
		saved.Status.ReconcileTrigger == triggerOf(f) && f[attrRollout].IsNull() && pf[attrRollout].IsNull() && (!pending || unchanged) {
		if pf[attrDeployItems].IsNull() || pf["status"].IsNull() {
			// State of version 1 (see upgradeJSON): filled in once.
			pf[attrDeployItems] = statusItems(x.t.AttributeTypes[attrDeployItems], saved.Status, sec)
			pf["status"] = x.statusValue(saved.Status, sec)
			if pf["exports"], pf[attrSensitiveExports], pf["target_exports"], err = x.exportValues(saved.Status); err != nil {
				warnings.add(attrPath("exports"), "Export cannot be represented", err.Error())
			}
		}
		// What was computed stays; what is configured (timeouts, say) is
		// taken as given.
		for _, a := range []string{"status", "exports", attrSensitiveExports, "target_exports", attrDeployItems, attrClusterChanges, attrRolloutPlan} {
			f[a] = pf[a]
		}
		return tftypes.NewValue(x.t, f), nil, warnings
	}
	p, _, err := x.planTree(ctx, sealOf(f), bp, imp, saved.Status, triggerOf(f), strategy)
	if err != nil {
		in := masking.ShadowInput{Blueprint: bp, Imports: imp, Sensitive: sensitiveImports(f), Status: saved.Status}
		return unknownAll(), replace, append(warnings, renderProblems(ctx, sec, in, err)...)
	}
	uncertain := pending && (!p.Noop || !unchanged)
	if refused := treeRefused(p, x.allowed()); refused.errors() {
		return unknownAll(), replace, append(warnings, refused...)
	}
	dels, why := orphanDeletions(p, saved.Status), "is no longer rendered"
	if replaceNeeded(replace) {
		dels, why = treeDeletions(saved.Status, ""), "is deleted with the object this plan replaces"
	}
	if refused := append(x.allowed().refusedDeletes(dels, why), refusedWithheld(x.deployers, dels, why)...); refused.errors() {
		return unknownAll(), replace, append(warnings, refused...)
	}
	if missing := x.targets().missingForDestroy(orphanTargets(p, saved.Status), "deleting"); missing.errors() {
		return unknownAll(), replace, append(warnings, missing...)
	}
	warnings = append(warnings, validateTreeRollout(strategy, p)...)
	f[attrRolloutPlan] = x.plannedRollouts(p, strategyKnown, false)
	p.Walk(func(n *installation.Plan) {
		for _, w := range n.Warnings {
			where := "the root installation"
			if n.Path != "" {
				where = fmt.Sprintf("sub-installation %q", n.Path)
			}
			warnings.warn(attrPath("blueprint"), "Deploy item config has unknown fields", fmt.Sprintf("%s: %s", where, w))
		}
	})
	p.Walk(func(n *installation.Plan) { sec.AddImports(n.Imports) })
	if p.AllKnown() {
		sec.Current(renderedSpecs(p))
		sec.Prior(shownItems(pf[attrDeployItems]), saved.Status)
		sec.Shadow(ctx, masking.ShadowInput{Blueprint: bp, Imports: imp, Sensitive: sensitiveImports(f), Status: saved.Status, Known: planKnown(p)},
			plannedSpecs(p, saved.Status))
	}
	f[attrDeployItems] = plannedItems(x.t.AttributeTypes[attrDeployItems], p, saved.Status, sec)
	if uncertain {
		f[attrDeployItems] = pendingTargetsUnknown(f[attrDeployItems], plannedSpecs(p, saved.Status), pt)
	}
	if newSubMembers(p) {
		// A rollout may hold a sub-installation that never ran past this
		// apply, and what it renders is known once it runs.
		unknown(attrDeployItems)
	}
	f[attrClusterChanges] = tftypes.NewValue(x.t.AttributeTypes[attrClusterChanges], nil)
	if p.Noop && !replaceNeeded(replace) && !uncertain {
		if pf != nil {
			f[attrClusterChanges] = pf[attrClusterChanges]
			if !pf[attrRolloutPlan].IsNull() && !f[attrRolloutPlan].IsNull() {
				// Nothing to do: what the last apply planned stays.
				f[attrRolloutPlan] = pf[attrRolloutPlan]
			}
		}
		f["status"] = x.statusValue(saved.Status, sec)
		if rolloutsMove(p, saved.Status) {
			unknown("status")
		}
		f["exports"], f[attrSensitiveExports], f["target_exports"], err = x.exportValues(saved.Status)
		ps := warnings
		if err != nil {
			ps.add(attrPath("exports"), "Export cannot be represented", err.Error())
		}
		return tftypes.NewValue(x.t, f), replace, ps.masked(sec.Text)
	}
	var previewProblems problems
	f[attrClusterChanges], previewProblems = x.plannedClusterChanges(ctx, f, p, saved.Status, sec, uncertain)
	warnings = append(warnings, previewProblems...)
	unknown("exports", attrSensitiveExports, "target_exports")
	if _, exports := render.Declarations(bp); bp != nil && !slices.ContainsFunc(exports, func(d render.Declaration) bool { return d.Type != "data" }) {
		// No target exports to wait for: the plan need not show them as changing.
		f["target_exports"] = tftypes.NewValue(x.t.AttributeTypes["target_exports"], map[string]tftypes.Value{})
	}
	if kept, ok := importedExports(pf, f, saved.Status, bp); ok && !replaceNeeded(replace) {
		f["exports"] = kept
	}
	if saved.Status == nil || !p.AllKnown() || replaceNeeded(replace) || !strategyKnown || rolloutsMove(p, saved.Status) || uncertain ||
		!f[attrReconcileTrigger].IsKnown() {
		unknown("status")
		return tftypes.NewValue(x.t, f), replace, warnings.masked(sec.Text)
	}
	f["status"] = x.plannedStatus(saved.Status, p, plannedJobID(saved.Status, bp, imp, str(f[attrReconcileTrigger])), sec)
	return tftypes.NewValue(x.t, f), replace, warnings.masked(sec.Text)
}

// plannedJobID names the job a plan announces. Terraform plans twice,
// before and during apply, and the two must agree, so the ID is derived
// from what the job starts from, not drawn at random; the prior job ID in
// it makes every job's ID new.
func plannedJobID(prev *installation.Status, bp installation.Blueprint, imp installation.Imports, trigger string) string {
	return uuid.NewSHA1(uuid.NameSpaceOID, []byte(prev.JobID+"\x00"+installation.InputHash(bp, imp)+"\x00"+trigger)).String()
}

// upgradeJSON drops the status of state before version 2, whose deploy
// items were objects: the next plan rebuilds it, and the new deploy_items,
// from private state.
func (x *installations) upgradeJSON(from int64, raw []byte) ([]byte, error) {
	if from >= 2 {
		return raw, nil
	}
	var attrs map[string]json.RawMessage
	if err := json.Unmarshal(raw, &attrs); err != nil {
		return nil, err
	}
	delete(attrs, "status")
	return json.Marshal(attrs)
}

// plannedClusterChanges dry-runs the items the plan runs, when asked to.
func (x *installations) plannedClusterChanges(ctx context.Context, f map[string]tftypes.Value, p *installation.Plan, prev *installation.Status, sec *masking.Tree, onPending bool) (tftypes.Value, problems) {
	t := x.t.AttributeTypes[attrClusterChanges]
	e := x.engine()
	if e == nil || !clusterChangesWanted(f, x.clusterChanges()) {
		return tftypes.NewValue(t, nil), nil
	}
	if !p.AllKnown() || onPending {
		// Nothing to dry-run against before the cluster's config is known.
		return tftypes.NewValue(t, tftypes.UnknownValue), nil
	}
	prevOf := map[string]engine.Status{}
	prev.Walk(func(path string, s *installation.Status) { prevOf[path] = s.Execution })
	pv := &previewer{e: e, changes: map[string]tftypes.Value{}, sec: sec}
	p.Walk(func(n *installation.Plan) {
		pv.add(ctx, installation.ExecutionName(str(f["name"]), n.Path), engine.Execution{Items: n.Items}, prevOf[n.Path],
			engine.Run{Resources: n.Resources}, n.Job.Run, func(item string) string { return sec.Key(installation.Join(n.Path, item)) })
	})
	return pv.value(t), pv.ps
}

func replaceNeeded(replace []*tftypes.AttributePath) bool { return len(replace) > 0 }

// apply runs a job of the tree, or deletes it when planned is null.
func (x *installations) apply(ctx context.Context, prior, planned tftypes.Value, private []byte) (tftypes.Value, []byte, problems) {
	return applyJob(ctx, x.engine(), prior, planned, private, decodeInstallationPrivate, x.applyTree, x.destroy)
}

func (x *installations) applyTree(r *jobRun[storedInstallation]) (tftypes.Value, []byte, problems) {
	if _, _, set, _ := remoteCluster(r.f); set {
		return x.applyRemote(r)
	}
	if r.saved.Remote != nil {
		return x.applyLeaving(r)
	}
	return x.applyInProcess(r)
}

// applyInProcess runs a job of the tree in-process.
func (x *installations) applyInProcess(r *jobRun[storedInstallation]) (tftypes.Value, []byte, problems) {
	ctx, f := r.ctx, r.f
	var ps problems
	src, srcKnown := sourceOf(f)
	imp, impKnown, ips := importsOf(f, x.targets())
	if ips.errors() {
		return r.failed(ips)
	}
	if !srcKnown || !impKnown {
		ps.add(nil, "Installation not known", "blueprint, component or imports still hold unknown values at apply time.")
		return r.failed(ps)
	}
	bp, err := x.load(ctx, src)
	if err != nil {
		return r.failed(loadProblems(err))
	}
	strategy, _, rps := strategyOf(f[attrRollout])
	if rps.errors() {
		return r.failed(rps)
	}
	trigger := str(f[attrReconcileTrigger])
	// The tree as the plan rendered it, rendered again where needed (once).
	seal, prev := sealOf(f), r.saved.Status
	var planned *installation.Plan
	var planErr error
	plan := func() (*installation.Plan, error) {
		if planned == nil && planErr == nil {
			planned, prev, planErr = x.planTree(ctx, seal, bp, imp, r.saved.Status, trigger, strategy)
		}
		return planned, planErr
	}
	if atrest.Forced(r.saved.Status) {
		// Decides, as the plan did, whether what the stored status did
		// not keep runs again.
		_, _ = plan()
	}
	if !f[attrRolloutPlan].IsKnown() {
		// The plan could not render the whole tree; what it renders now.
		f[attrRolloutPlan] = tftypes.NewValue(x.t.AttributeTypes[attrRolloutPlan], nil)
		if p, err := plan(); err == nil {
			f[attrRolloutPlan] = x.plannedRollouts(p, true, true)
		}
	}
	if a := x.allowed(); a != nil {
		// The plan refused such trees; checked again before anything runs,
		// as the plan may not have rendered every node. Nodes rendered
		// only now are refused by the engine, before their items run.
		if p, err := plan(); err == nil {
			if refused := treeRefused(p, a); refused.errors() {
				return r.failed(refused)
			}
		}
	}
	logs := newJobLogger(ctx, nil, engine.Status{})
	logs.addProviderTargets(x.targets())
	sensitive := sensitiveImports(f)
	runner := &installation.Runner{Engine: r.engine, Name: str(f["name"]), Observe: logs.observeInstallation,
		ReconcileTrigger: trigger, JobID: str(fields(f["status"])["job_id"]), Rollout: strategy}
	secret := masking.HoldsSecrets(imp, sensitive, r.saved.Status, nil)
	// The plan compared the items with their shadows and shows the
	// outcome in deploy_items: where what a node renders now aligns with
	// it, the log learns from it what a secret became, before the node's
	// items run, and the state shows it; only the exports need a shadow.
	shown := shownItems(f[attrDeployItems])
	aligned := secret && f[attrDeployItems].IsFullyKnown() && shown != nil && !masking.Quoting(shown)
	var current map[string]engine.ItemSpec
	switch {
	case aligned:
		early := secretsOf(f, imp)
		var mu sync.Mutex
		// What each node renders now: an item a rollout holds at (or
		// auto-fail reverts to) another config is not compared with a
		// shadow of this rendering.
		current = map[string]engine.ItemSpec{}
		runner.Rendered = func(path string, rd *installation.Rendered) {
			specs := make(map[string]engine.ItemSpec, len(rd.Items))
			for n, spec := range rd.Items {
				specs[installation.Join(path, n)] = spec
			}
			mu.Lock()
			defer mu.Unlock()
			maps.Copy(current, specs)
			early.Align(shown, specs, targetLabel)
			logs.addSecretList(early.List())
		}
	case secret:
		// What the items will be given, rendered as far as it can be
		// before the run, so the log masks what a secret became.
		before := secretsOf(f, imp)
		if p, err := plan(); err == nil {
			current = renderedSpecs(p)
			before.Current(current)
			before.Prior(shownItems(fields(r.prior)[attrDeployItems]), r.saved.Status)
			before.Shadow(ctx, masking.ShadowInput{Blueprint: bp, Imports: imp, Sensitive: sensitive, Status: r.saved.Status, Known: planKnown(p)}, planSpecs(p))
		}
		logs.addSecretList(before.List())
	}
	if seal != nil {
		// What the sealed secrets became, as far as the seal found it.
		logs.addSecretList(seal.Derived())
	}
	st := runner.Apply(ctx, sealed(seal, bp), imp, prev)
	sec := secretsOf(f, imp)
	sec.AddTree(st)
	if current != nil {
		sec.Current(current)
	}
	sec.Prior(shownItems(fields(r.prior)[attrDeployItems]), r.saved.Status)
	in := masking.ShadowInput{Blueprint: bp, Imports: imp, Sensitive: sensitive, Status: st, Exports: true}
	if aligned && st.Succeeded() && sec.Align(shown, st.ItemSpecs(), targetLabel) {
		in.SkipItems = true
		sec.Shadow(ctx, in, nil)
	} else {
		sec.Shadow(ctx, in, st.ItemSpecs())
	}
	maskNodeErrors(sec, st)
	logs.addSecretList(sec.List())
	redactTree(logs, st)
	ps = append(ps, treeProblems(st, sec)...)
	moved := map[string]*rollout.State{}
	st.Walk(func(p string, s *installation.Status) { maps.Copy(moved, treeRollouts(p, s, st.JobID)) })
	ps = append(ps, rolloutProblems(moved, r.prior.IsNull())...)
	promised := f[attrDeployItems]
	promisedExports := f["exports"]
	var state tftypes.Value
	var priv []byte
	state, priv, ps = x.stateOf(f, st, sec, seal, ps.masked(sec.Text))
	if r.saved.Status != nil && r.saved.Status.JobID == "" && !ps.errors() {
		ps = append(ps, importedExportsDiffer(promisedExports, fields(state)["exports"])...)
	}
	if promised.IsFullyKnown() && !ps.errors() {
		sf := fields(state)
		if !sf[attrDeployItems].Equal(promised) {
			// Only a template that renders differently each time (random
			// values, the time) gets here; Terraform insists on what the
			// plan promised.
			ps.warn(attrPath(attrDeployItems), "Deploy items rendered differently than planned",
				"The blueprint rendered other deploy items at apply time than at plan time, so a template "+
					"is not deterministic (random values or the time?). The state keeps the planned rendering; "+
					"the items ran with the new one.")
			sf[attrDeployItems] = promised
			state = tftypes.NewValue(x.t, sf)
		}
	}
	return state, priv, ps
}

// stateOf writes a tree status into the resource value and private state;
// a tree without secrets at rest (seal, or a status kept so before) keeps
// what its Seal keeps.
func (x *installations) stateOf(f map[string]tftypes.Value, st *installation.Status, sec *masking.Tree, seal *atrest.Seal, ps problems) (tftypes.Value, []byte, problems) {
	f["status"] = x.statusValue(st, sec)
	f[attrDeployItems] = statusItems(x.t.AttributeTypes[attrDeployItems], st, sec)
	f[attrClusterChanges] = keepClusterChanges(x.t.AttributeTypes[attrClusterChanges], f[attrClusterChanges])
	kept := x.sealStatus(st, seal, sec)
	var err error
	if f["exports"], f[attrSensitiveExports], f["target_exports"], err = x.exportValues(kept); err != nil {
		ps.add(attrPath("exports"), "Export cannot be represented", err.Error())
	}
	priv, err := encodeInstallationPrivate(kept)
	if err != nil {
		ps.add(nil, "Cannot store the installation's status", err.Error())
	}
	return tftypes.NewValue(x.t, f), priv, ps
}

func (x *installations) destroy(r *jobRun[storedInstallation]) (tftypes.Value, []byte, problems) {
	f := r.f
	if r.saved.Remote != nil {
		return x.destroyRemote(r)
	}
	if r.saved.Status == nil {
		return tftypes.NewValue(x.t, nil), nil, nil
	}
	logs := newJobLogger(r.ctx, nil, engine.Status{})
	logs.addProviderTargets(x.targets())
	runner := &installation.Runner{Engine: r.engine, Name: str(f["name"]), Observe: logs.observeInstallation}
	st := runner.Destroy(r.ctx, r.saved.Status)
	if st == nil {
		return tftypes.NewValue(x.t, nil), nil, nil
	}
	imp, _, _ := importsOf(f, x.targets())
	sec := secretsOf(f, imp)
	sec.AddTree(st)
	// Nothing is rendered on destroy: the items left keep the masking
	// their configs had in state.
	sec.Prior(shownItems(f[attrDeployItems]), r.saved.Status)
	sec.Derive(st.ItemSpecs())
	logs.addSecretList(sec.List())
	redactTree(logs, st)
	return x.stateOf(f, st, sec, nil, treeProblems(st, sec).masked(sec.Text))
}

// read asks the deployers of every succeeded item in the tree for drift.
func (x *installations) read(ctx context.Context, state tftypes.Value, private []byte) (tftypes.Value, []byte, problems) {
	e := x.engine()
	if e == nil || state.IsNull() {
		return state, private, nil
	}
	if isRemote(private) {
		saved, err := decodeInstallationPrivate(private)
		if err != nil {
			return state, private, nil
		}
		st, priv, ps := x.readRemote(ctx, state, saved)
		if priv == nil && !st.IsNull() {
			priv = private
		}
		return st, priv, ps
	}
	if !x.refreshes(private) {
		return state, private, nil
	}
	saved, err := decodeInstallationPrivate(private)
	if err != nil || !saved.Status.Succeeded() {
		return state, private, nil
	}
	name := str(fields(state)["name"])
	var ps problems
	changedAny := false
	st := saved.Status.Clone()
	var sec *masking.Tree
	st.Walk(func(p string, s *installation.Status) {
		refreshed, changed := e.Refresh(ctx, installation.Join(name, p), s.Execution)
		if !changed {
			return
		}
		changedAny = true
		for _, n := range slices.Sorted(maps.Keys(refreshed.Items)) {
			if d := refreshed.Items[n].Drift; d != "" && s.Execution.Items[n].Drift == "" {
				if sec == nil {
					sec = driftMasking(state, saved.Status)
				}
				key := installation.Join(p, n)
				ps.warn(nil, fmt.Sprintf("Deploy item %q changed outside Terraform", sec.Key(key)),
					sec.Text(d)+"\nThe next apply runs the item again.")
			}
		}
		s.Execution = refreshed
	})
	if !changedAny {
		return state, private, nil
	}
	priv, err := encodeInstallationPrivate(st)
	if err != nil {
		ps.add(nil, "Cannot store the installation's status", err.Error())
		return state, private, ps
	}
	return state, priv, ps
}

// driftMasking masks what a refresh says of the items of st as the state
// shows them: an item named after a secret under its masked key, and
// every text the state's masks cover (an object's name) wherever a
// drift message quotes it. A refresh has no configuration to render
// shadows from; the state's deploy_items are what the last plan found.
func driftMasking(state tftypes.Value, st *installation.Status) *masking.Tree {
	sec := masking.NewTree()
	if !sec.Align(shownItems(fields(state)[attrDeployItems]), st.ItemSpecs(), targetLabel) {
		// Shown otherwise than kept (state of an older release): say
		// nothing a secret may have made.
		for _, spec := range st.ItemSpecs() {
			if v, ok := masking.Decode(spec.Config); ok {
				sec.AddValue(v)
			}
		}
	}
	return sec
}

// treeRefused reports every rendered deploy item of the tree whose type
// the provider's allowed_deployers does not list, by its path.
func treeRefused(p *installation.Plan, a *allowedDeployers) problems {
	var ps problems
	if a == nil {
		return ps
	}
	p.Walk(func(n *installation.Plan) {
		for _, item := range slices.Sorted(maps.Keys(n.Items)) {
			if err := a.check(n.Items[item].Type); err != nil {
				ps.add(attrPath("blueprint"), "Deployer not allowed", fmt.Sprintf("deploy item %q: %v; nothing runs.",
					installation.Join(n.Path, item), err))
			}
		}
	})
	return ps
}

// orphanDeletions are the stored items a plan deletes: orphaned items of
// its nodes, and every item under orphaned sub-installations.
func orphanDeletions(p *installation.Plan, prev *installation.Status) []deletion {
	var out []deletion
	prevOf := prev.ByPath()
	p.Walk(func(n *installation.Plan) {
		ps := prevOf[n.Path]
		if ps == nil {
			return
		}
		out = append(out, executionDeletions(ps.Execution, n.Job.Delete, pathPrefix(n.Path))...)
		for _, o := range n.Orphans {
			out = append(out, treeDeletions(ps.Subs[o], installation.Join(n.Path, o))...)
		}
	})
	return out
}

// treeDeletions are the items a destroy of the tree st, at root, deletes.
func treeDeletions(st *installation.Status, root string) []deletion {
	var out []deletion
	st.Walk(func(p string, n *installation.Status) {
		if p == "" {
			p = root
		} else {
			p = installation.Join(root, p)
		}
		out = append(out, executionDeletions(n.Execution, n.Execution.DeletedOnDestroy(), pathPrefix(p))...)
	})
	return out
}

// pathPrefix is what precedes an item's name in the key of a node's item.
func pathPrefix(path string) string {
	if path == "" {
		return ""
	}
	return path + "/"
}

// orphanTargets are the targets of the items a plan deletes: orphaned
// items of its nodes, and every item under orphaned sub-installations.
func orphanTargets(p *installation.Plan, prev *installation.Status) map[string]*deployer.Target {
	out := map[string]*deployer.Target{}
	prevOf := prev.ByPath()
	p.Walk(func(n *installation.Plan) {
		ps := prevOf[n.Path]
		if ps == nil {
			return
		}
		for _, item := range n.Job.Delete {
			if is := ps.Execution.Items[item]; is != nil {
				out[installation.Join(n.Path, item)] = is.Spec.Target
			}
		}
		for _, o := range n.Orphans {
			for k, t := range treeTargets(ps.Subs[o]) {
				out[installation.Join(installation.Join(n.Path, o), k)] = t
			}
		}
	})
	return out
}

// treeTargets are the targets of every stored item of a tree, by
// "<path>/<item>".
func treeTargets(st *installation.Status) map[string]*deployer.Target {
	out := map[string]*deployer.Target{}
	st.Walk(func(p string, n *installation.Status) {
		maps.Copy(out, executionTargets(n.Execution, pathPrefix(p)))
	})
	return out
}

// redactTree masks what the logger knows to be secret in error messages.
func redactTree(l *jobLogger, st *installation.Status) {
	st.Walk(func(_ string, s *installation.Status) {
		s.Execution = l.redact(s.Execution)
		if s.LastError != nil {
			e := *s.LastError
			e.Message = l.masked(e.Message)
			s.LastError = &e
		}
	})
}

// maskNodeErrors masks what a node's blueprint said when it failed (its
// rendering, import mappings or exports), by comparison with what its
// shadows said (masking.Tree.Error): a template's message may quote what
// it made of a secret. Where no shadow failed so, whether the node fails
// depends on a secret, and nothing of the message shows; the message
// joins the secret texts, so the summaries above it that quote it are
// masked too. Sub-installation names a secret made are masked in every
// message naming the node.
func maskNodeErrors(sec *masking.Tree, st *installation.Status) {
	// Every node first: a summary lists also sub-installations that did
	// not run, and names those below it.
	st.Walk(func(p string, _ *installation.Status) { sec.AddPath(p) })
	st.Walk(func(p string, s *installation.Status) {
		if s.LastError == nil {
			return
		}
		e := *s.LastError
		s.LastError = &e
		if s.FailedIn == "" && !sec.ShadowFailed(p) {
			// A summary of its items' and sub-installations' errors,
			// each masked where it is.
			e.Message = sec.Text(e.Message)
			return
		}
		if m, ok := sec.Error(p, e.Message); ok {
			e.Message = m
			return
		}
		sec.AddText(e.Message)
		e.Message = "the message is not shown: whether the blueprint fails this way depends on the value of a secret"
	})
}

// treeProblems reports every item and installation that failed in the
// job just run, named by its path in the tree; the root's own error when
// nothing under it explains the failure.
func treeProblems(st *installation.Status, sec *masking.Tree) problems {
	var ps problems
	st.Walk(func(p string, s *installation.Status) {
		if s.JobIDFinished != st.JobID {
			return
		}
		for _, n := range slices.Sorted(maps.Keys(s.Execution.Items)) {
			is := s.Execution.Items[n]
			if is.JobIDFinished != st.JobID || is.LastError == nil {
				continue
			}
			verb := "failed"
			if is.Phase == core.PhaseDeleteFailed {
				verb = "could not be deleted"
			}
			// The item is the blueprint's: its rendering is where it comes from.
			ps.add(attrPath("blueprint"), fmt.Sprintf("Deploy item %q %s", sec.Key(installation.Join(p, n)), verb), errorDetail(is.LastError))
		}
	})
	if len(ps) == 0 {
		st.Walk(func(p string, s *installation.Status) {
			if s.LastError == nil || s.JobIDFinished != st.JobID || len(ps) > 0 && p == "" {
				return
			}
			name := "Installation"
			if p != "" {
				name = fmt.Sprintf("Sub-installation %q", p)
			}
			if rolloutError(s.LastError) {
				return // rolloutProblems says why, and where
			}
			if p == "" || !strings.HasPrefix(s.LastError.Reason, "SubInstallations") {
				ps.add(attrPath("blueprint"), name+" "+strings.ToLower(string(s.Phase)), errorDetail(s.LastError))
			}
		})
	}
	return ps
}

// storedInstallation is what private state keeps for one installation.
type storedInstallation struct {
	Status *installation.Status `json:"status"`
	// Remote is set in remote mode (installation_remote.go).
	Remote *remoteState `json:"remote,omitempty"`
}

func decodeInstallationPrivate(private []byte) (storedInstallation, error) {
	var s storedInstallation
	doc, err := privatestate.Decode(private)
	if err != nil {
		return s, fmt.Errorf("%w; remove the resource from state and import it again", err)
	}
	if doc.JSON == nil {
		return s, nil
	}
	if err := json.Unmarshal(doc.JSON, &s); err != nil {
		return s, fmt.Errorf("the stored status cannot be read (%w); remove the resource from state and import it again", err)
	}
	s.Status.Walk(func(p string, n *installation.Status) {
		for item, is := range n.Execution.Items {
			is.State = doc.Blobs[installation.Join(p, item)]
		}
	})
	return s, nil
}

func encodeInstallationPrivate(st *installation.Status) ([]byte, error) {
	st = st.Clone()
	blobs := map[string][]byte{}
	st.Walk(func(p string, n *installation.Status) {
		for item, is := range n.Execution.Items {
			if len(is.State) > 0 {
				blobs[installation.Join(p, item)], is.State = is.State, nil
			}
		}
	})
	settled := st.Succeeded() && !treeDrifted(st)
	markSettled(blobs, settled)
	if settled {
		blobs[inputKey] = []byte(settledInput(st.InputHash, st.ReconcileTrigger))
		// What a settled plan assumes of a provider target whose config
		// is not known yet.
		markRefs(blobs, treeTargets(st))
	}
	var executions []engine.Status
	st.Walk(func(_ string, n *installation.Status) { executions = append(executions, n.Execution) })
	markTypes(blobs, executions...)
	return privatestate.Encode(storedInstallation{Status: st}, blobs)
}

func (x *installations) refreshes(private []byte) bool {
	return isRemote(private) || settledMark(private) && mayDrift(private, x.deployers)
}
