// Package manifest implements Landscaper's kubernetes-manifest deployer
// in-process: a deploy item of this type applies Kubernetes manifests to
// the cluster of its kubernetes-cluster target, waits until they are
// ready, reads exports from them, and deletes them again, with the
// semantics of Landscaper's manifest deployer (see internal/deployer/kube).
//
// The config is Landscaper's ProviderConfiguration, apiVersion
// manifest.deployer.landscaper.gardener.cloud/v1alpha2 (or v1alpha1).
package manifest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	sigsjson "sigs.k8s.io/json"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/kube"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/target"
)

// Type is Landscaper's type of the deployer; Alias is its short form.
const (
	Type  = "landscaper.gardener.cloud/kubernetes-manifest"
	Alias = "kubernetes-manifest"
)

// API versions and kind of the provider configuration and status.
const (
	APIVersionV1alpha2 = "manifest.deployer.landscaper.gardener.cloud/v1alpha2"
	APIVersionV1alpha1 = "manifest.deployer.landscaper.gardener.cloud/v1alpha1"
	Kind               = "ProviderConfiguration"
)

// ProviderConfiguration is Landscaper's v1alpha2 provider configuration.
type ProviderConfiguration struct {
	APIVersion                 string                           `json:"apiVersion,omitempty"`
	Kind                       string                           `json:"kind,omitempty"`
	UpdateStrategy             kube.UpdateStrategy              `json:"updateStrategy,omitempty"`
	ReadinessChecks            kube.ReadinessCheckConfiguration `json:"readinessChecks,omitempty"`
	Manifests                  []kube.Manifest                  `json:"manifests,omitempty"`
	Exports                    *kube.Exports                    `json:"exports,omitempty"`
	ContinuousReconcile        json.RawMessage                  `json:"continuousReconcile,omitempty"`
	DeletionGroups             []kube.DeletionGroupDefinition   `json:"deletionGroups,omitempty"`
	DeletionGroupsDuringUpdate []kube.DeletionGroupDefinition   `json:"deletionGroupsDuringUpdate,omitempty"`

	// DeleteTimeout is accepted from configs written for older Landscaper
	// versions and has no effect: the item's timeout bounds deletion.
	DeleteTimeout *kube.Duration `json:"deleteTimeout,omitempty"`
	// Kubeconfig was removed from Landscaper's configuration; it is
	// declared only to reject it with a helpful message.
	Kubeconfig *string `json:"kubeconfig,omitempty"`
}

// v1alpha1 differs from v1alpha2 in its manifests: plain objects, each
// managed with policy manage.
type v1alpha1Configuration struct {
	ProviderConfiguration
	Manifests []json.RawMessage `json:"manifests,omitempty"`
}

// Problems are what is wrong with a config. Unknown lists fields the
// format does not have (typos, fields of other versions); Invalid lists
// everything else. They are kept apart so a caller may treat unknown
// fields as warnings.
type Problems struct {
	Unknown []string
	Invalid []string
}

// Err returns the problems as one configuration error, or nil. Unknown
// fields alone are a warning (deployer.UnknownFieldsError): Landscaper
// ignores them, and so does apply.
func (p Problems) Err() error {
	switch {
	case len(p.Invalid) > 0:
		all := append(append([]string{}, p.Invalid...), p.Unknown...)
		return core.ConfigurationProblem("invalid kubernetes-manifest configuration: %s", strings.Join(all, "; "))
	case len(p.Unknown) > 0:
		return &deployer.UnknownFieldsError{Fields: p.Unknown}
	}
	return nil
}

// Decode reads a config: type errors and invalid values go to Invalid,
// unknown fields to Unknown. The configuration is usable (for apply or
// delete) when Invalid is empty.
func Decode(config json.RawMessage) (*ProviderConfiguration, Problems) {
	var p Problems
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := json.Unmarshal(config, &head); err != nil {
		p.Invalid = append(p.Invalid, "the config must be an object")
		return nil, p
	}
	if head.Kind != "" && head.Kind != Kind {
		p.Invalid = append(p.Invalid, fmt.Sprintf("kind: must be %q, not %q", Kind, head.Kind))
	}
	cfg := &ProviderConfiguration{}
	var strict []error
	var err error
	switch head.APIVersion {
	case "", APIVersionV1alpha2:
		strict, err = sigsjson.UnmarshalStrict(config, cfg)
	case APIVersionV1alpha1:
		var old v1alpha1Configuration
		strict, err = sigsjson.UnmarshalStrict(config, &old)
		cfg = &old.ProviderConfiguration
		cfg.Manifests = nil
		for _, m := range old.Manifests {
			cfg.Manifests = append(cfg.Manifests, kube.Manifest{Policy: kube.PolicyManage, Manifest: m})
		}
		if old.UpdateStrategy != "" && old.UpdateStrategy != kube.StrategyUpdate && old.UpdateStrategy != kube.StrategyPatch {
			p.Invalid = append(p.Invalid, fmt.Sprintf("updateStrategy: unsupported value %q in %s: supported values: update, patch", old.UpdateStrategy, APIVersionV1alpha1))
		}
	default:
		p.Invalid = append(p.Invalid, fmt.Sprintf("apiVersion: must be %q or %q, not %q", APIVersionV1alpha2, APIVersionV1alpha1, head.APIVersion))
		return nil, p
	}
	if err != nil {
		p.Invalid = append(p.Invalid, strings.TrimPrefix(err.Error(), "json: "))
		return nil, p
	}
	for _, e := range strict {
		field := strings.TrimPrefix(strings.TrimPrefix(e.Error(), "json: "), "unknown field ")
		if f, err := strconv.Unquote(field); err == nil {
			field = f
		}
		p.Unknown = append(p.Unknown, field)
	}
	if cfg.Kubeconfig != nil {
		p.Invalid = append(p.Invalid, "kubeconfig: no longer part of the configuration; the item's target names the cluster")
	}
	p.Invalid = append(p.Invalid, kube.ValidateUpdateStrategy("updateStrategy", cfg.UpdateStrategy)...)
	p.Invalid = append(p.Invalid, kube.ValidateManifests("manifests", cfg.Manifests)...)
	p.Invalid = append(p.Invalid, kube.ValidateReadinessChecks("readinessChecks", cfg.ReadinessChecks)...)
	p.Invalid = append(p.Invalid, kube.ValidateExports("exports", cfg.Exports)...)
	p.Invalid = append(p.Invalid, kube.ValidateDeletionGroups("deletionGroups", cfg.DeletionGroups)...)
	p.Invalid = append(p.Invalid, kube.ValidateDeletionGroups("deletionGroupsDuringUpdate", cfg.DeletionGroupsDuringUpdate)...)
	if cfg.UpdateStrategy == "" {
		cfg.UpdateStrategy = kube.StrategyUpdate
	}
	for i := range cfg.Manifests {
		if cfg.Manifests[i].Policy == "" {
			cfg.Manifests[i].Policy = kube.PolicyManage
		}
	}
	return cfg, p
}

// Deployer is the kubernetes-manifest deployer. It keeps no state of its
// own: cluster clients are shared through internal/target.
type Deployer struct{}

var (
	_ deployer.Deployer     = (*Deployer)(nil)
	_ deployer.TargetUser   = (*Deployer)(nil)
	_ deployer.DriftChecker = (*Deployer)(nil)
)

// New returns the deployer.
func New() *Deployer { return &Deployer{} }

// TargetTypes says the deployer acts on kubernetes-cluster targets.
func (d *Deployer) TargetTypes() []string { return []string{target.KubernetesClusterType} }

// Validate checks a config without side effects.
func (d *Deployer) Validate(config json.RawMessage) error {
	_, p := Decode(config)
	return p.Err()
}

func (d *Deployer) prepare(req deployer.Request) (*kube.Spec, *target.Cluster, kube.State, error) {
	cfg, p := Decode(req.Config)
	// Unknown fields do not stop anything: Landscaper ignores them.
	usable := cfg != nil && len(p.Invalid) == 0
	if err := p.Err(); err != nil && !usable {
		return nil, nil, kube.State{}, err
	}
	st, err := kube.DecodeState(req.State)
	if err != nil {
		return nil, nil, st, err
	}
	if req.Target == nil {
		return nil, nil, st, core.ConfigurationProblem("a kubernetes-manifest deploy item needs a target of type %s", target.KubernetesClusterType)
	}
	if req.Target.Type != target.KubernetesClusterType {
		return nil, nil, st, core.ConfigurationProblem("target %q is of type %s, not %s", req.Target.Name, req.Target.Type, target.KubernetesClusterType)
	}
	cl, err := target.ClusterFor(req.Target.Config)
	if err != nil {
		return nil, nil, st, core.Terminal(kube.ReasonTarget, fmt.Sprintf("target %q: %v", req.Target.Name, err), core.CodeConfigurationProblem)
	}
	if req.Adopt != nil {
		st = kube.Adopted(st, req.Adopt)
	}
	spec := &kube.Spec{
		Manifests:                  cfg.Manifests,
		UpdateStrategy:             cfg.UpdateStrategy,
		ReadinessChecks:            cfg.ReadinessChecks,
		Exports:                    cfg.Exports,
		DeletionGroups:             cfg.DeletionGroups,
		DeletionGroupsDuringUpdate: cfg.DeletionGroupsDuringUpdate,
		ManagedLabel:               kube.ManifestManagedLabel,
		Owner:                      kube.OwnerFor(req.Execution, req.Item),
	}
	if a := req.Adopt; a != nil {
		// Landscaper's manifest deployer labels with the same key, its
		// value being the DeployItem's name. Objects of a resource moved
		// from another provider carry no such label: the ones its state
		// recorded are adopted by name.
		spec.AdoptFrom = a.DeployItem
		if a.Source != "" {
			spec.AdoptObjects = a.Objects
		}
	}
	return spec, cl, st, nil
}

// Reconcile applies the manifests and reports the managed objects as the
// provider status. While objects are not ready or exports cannot be read
// yet, it asks the engine to call again.
func (d *Deployer) Reconcile(ctx context.Context, req deployer.Request) (deployer.Result, error) {
	spec, cl, st, err := d.prepare(req)
	if err != nil {
		return deployer.Result{State: req.State}, err
	}
	out, err := kube.Reconcile(ctx, cl, spec, req.JobID, st)
	return result(req, out, err)
}

// Delete deletes the managed objects in the configured deletion groups and
// asks the engine to call again until they are gone.
func (d *Deployer) Delete(ctx context.Context, req deployer.Request) (deployer.Result, error) {
	spec, cl, st, err := d.prepare(req)
	if err != nil {
		return deployer.Result{State: req.State}, err
	}
	out, err := kube.Delete(ctx, cl, spec, st)
	return result(req, out, err)
}

// Seal keeps what Delete needs of an item's state (see kube.SealState):
// Delete removes the managed objects the state names, whatever the
// manifests' values were.
func (d *Deployer) Seal(state []byte) []byte { return kube.SealState(state) }

// Drift reports managed objects that were deleted, or whose applied fields
// were changed, since the last successful run. See internal/deployer/kube
// for how changes are detected.
func (d *Deployer) Drift(ctx context.Context, req deployer.Request, last deployer.Result) (string, error) {
	r := req
	r.State = last.State
	spec, cl, st, err := d.prepare(r)
	if err != nil {
		return "", err
	}
	return kube.Drift(ctx, cl, spec, st)
}

// Preview dry-runs what Reconcile would write (see kube.Preview).
func (d *Deployer) Preview(ctx context.Context, req deployer.Request) ([]deployer.ObjectChange, error) {
	spec, cl, st, err := d.prepare(req)
	if err != nil {
		return nil, err
	}
	changes, err := kube.Preview(ctx, cl, spec, st)
	return kube.ObjectChanges(changes), err
}

func result(req deployer.Request, out kube.Outcome, err error) (deployer.Result, error) {
	res := deployer.Result{
		State:          out.State.Encode(),
		ProviderStatus: kube.NewProviderStatus(APIVersionV1alpha2, out.State.Managed),
		RequeueAfter:   out.RequeueAfter,
		Waiting:        out.Waiting,
		TimeoutCodes:   out.TimeoutCodes,
	}
	if out.RequeueAfter > 0 && out.Waiting != "" && req.Log != nil {
		req.Log("waiting for " + out.Waiting)
	}
	if err != nil {
		var ce *core.Error
		if !errors.As(err, &ce) {
			err = kube.Classify(err, kube.ReasonApply, "")
		}
		return res, err
	}
	if out.Export != nil {
		b, merr := json.Marshal(out.Export)
		if merr != nil {
			return res, core.Terminal(kube.ReasonExport, merr.Error(), core.CodeInternalProblem)
		}
		res.Export = b
	}
	return res, nil
}

var _ deployer.HealthChecker = (*Deployer)(nil)

// Health reports the pods of the workloads the item manages, for a
// rollout's bake: their highest restart count and readiness.
func (d *Deployer) Health(ctx context.Context, req deployer.Request) (deployer.Health, error) {
	_, cl, st, err := d.prepare(req)
	if err != nil {
		return deployer.Health{}, err
	}
	h, err := kube.Health(ctx, cl, st)
	return deployer.Health{Restarts: h.Restarts, Ready: h.Ready, Message: h.Message}, err
}
