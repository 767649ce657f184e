// Package helm holds Landscaper's helm deployer (landscaper.gardener.cloud/helm),
// run in-process: it loads a chart (inline archive, URL or path, chart
// repository, OCI registry or a component's resource), and installs it as
// a helm release with history or, with helmDeployment: false, renders it
// and applies the objects through the shared Kubernetes machinery, which
// also runs its readiness checks, exports from objects and deletion groups.
package helm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/hashicorp/go-hclog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/kube"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/target"
)

// ManagedDeployItemLabel marks objects applied for helmDeployment: false
// with the deploy item's name, as Landscaper labels them.
const ManagedDeployItemLabel = "helm.deployer.landscaper.gardener.cloud/deployitem"

// DefaultPollInterval is how long to wait before looking again at objects
// that are not ready or exports that are not there yet.
const DefaultPollInterval = 2 * time.Second

// Options configure the deployer.
type Options struct {
	// Kube is the shared Kubernetes machinery. Without it, helmDeployment:
	// false, custom readiness checks and exports from objects are
	// configuration problems, and helm releases skip the default check.
	Kube Kube
	// Resources resolves charts given as a component's resource.
	Resources ResourceResolver
	// RESTConfig turns a target into a client config; by default the
	// target's kubeconfig is read.
	RESTConfig func(t *deployer.Target) (*rest.Config, error)
	// Logger receives helm's own output at DEBUG. Default: discarded.
	Logger hclog.Logger
	// HTTPClient fetches charts from URLs, repositories and registries.
	HTTPClient *http.Client
	// RegistryCredentialsFile is a docker-style config.json with registry
	// credentials; by default helm's and docker's usual files are read.
	RegistryCredentialsFile string
	// WorkingDir resolves relative chart paths.
	WorkingDir string
	// PollInterval overrides DefaultPollInterval.
	PollInterval time.Duration
}

// Deployer is the helm deployer.
type Deployer struct {
	opts Options
}

var (
	_ deployer.Deployer     = (*Deployer)(nil)
	_ deployer.TargetUser   = (*Deployer)(nil)
	_ deployer.DriftChecker = (*Deployer)(nil)
)

// New returns a helm deployer.
func New(opts Options) *Deployer {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if opts.RESTConfig == nil {
		opts.RESTConfig = kubeconfigRESTConfig
	}
	return &Deployer{opts: opts}
}

// TargetTypes says the deployer acts on a Kubernetes cluster.
func (d *Deployer) TargetTypes() []string { return []string{target.KubernetesClusterType} }

// Validate checks a config at plan time, without side effects.
func (d *Deployer) Validate(config json.RawMessage) error {
	c, warning := parseConfig(config)
	if warning != nil && !deployer.IsWarning(warning) {
		return warning
	}
	if d.opts.Kube != nil {
		if err := d.opts.Kube.Validate(c.ReadinessChecks, c.DeletionGroups, c.DeletionGroupsDuringUpdate, c.allExports()); err != nil {
			return err
		}
	}
	return warning
}

// state is what the deployer keeps between runs of an item.
type state struct {
	// Hash identifies the config and target of the last apply.
	Hash string `json:"hash"`
	// Pending is set after an apply whose readiness checks or exports did
	// not pass yet: the next run only looks again, it does not apply again.
	Pending        bool              `json:"pending,omitempty"`
	HelmDeployment bool              `json:"helmDeployment"`
	Name           string            `json:"name"`
	Namespace      string            `json:"namespace"`
	Revision       int               `json:"revision,omitempty"`
	Managed        []ManagedResource `json:"managedResources,omitempty"`
	ValueExports   map[string]any    `json:"valueExports,omitempty"`
}

// ProviderStatus is Landscaper's helm provider status.
type ProviderStatus struct {
	APIVersion       string            `json:"apiVersion"`
	Kind             string            `json:"kind"`
	ManagedResources []ManagedResource `json:"managedResources,omitempty"`
	// Release names the helm release and its revision (helmDeployment only).
	Release *ReleaseStatus `json:"release,omitempty"`
}

// ReleaseStatus describes a helm release.
type ReleaseStatus struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	Revision  int    `json:"revision"`
	Status    string `json:"status,omitempty"`
	Chart     string `json:"chart,omitempty"`
}

func loadState(raw []byte) state {
	var s state
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &s)
	}
	return s
}

func (s *state) bytes() []byte {
	b, _ := json.Marshal(s)
	return b
}

func (s *state) providerStatus() json.RawMessage {
	ps := ProviderStatus{APIVersion: APIVersion, Kind: "ProviderStatus", ManagedResources: s.Managed}
	if s.HelmDeployment && s.Revision > 0 {
		ps.Release = &ReleaseStatus{Name: s.Name, Namespace: s.Namespace, Revision: s.Revision}
	}
	b, _ := json.Marshal(ps)
	return b
}

func runHash(req deployer.Request) string {
	h := sha256.New()
	h.Write(req.Config)
	if req.Target != nil {
		h.Write([]byte{0})
		h.Write([]byte(req.Target.Type))
		h.Write(req.Target.Config)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func kubeconfigRESTConfig(t *deployer.Target) (*rest.Config, error) {
	var c target.KubernetesClusterConfig
	if err := json.Unmarshal(t.Config, &c); err != nil || c.Kubeconfig == "" {
		return nil, core.ConfigurationProblem("target %q has no kubeconfig", t.Name)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig([]byte(c.Kubeconfig))
	if err != nil {
		// The error may quote the kubeconfig; it is not repeated.
		return nil, core.ConfigurationProblem("the kubeconfig of target %q is not usable", t.Name)
	}
	return cfg, nil
}

func (d *Deployer) restConfig(req deployer.Request) (*rest.Config, error) {
	if req.Target == nil {
		return nil, core.ConfigurationProblem("a helm deploy item needs a target of type %s", target.KubernetesClusterType)
	}
	return d.opts.RESTConfig(req.Target)
}

func asConfigProblem(err error) error {
	if _, ok := err.(*core.Error); ok { //nolint:errorlint // only our own unwrapped errors keep their class
		return err
	}
	return core.ConfigurationProblem("%v", err)
}

// Reconcile installs or upgrades the release (or applies the rendered
// objects), then waits for readiness and exports by asking to be called
// again, without applying again while it waits.
func (d *Deployer) Reconcile(ctx context.Context, req deployer.Request) (deployer.Result, error) {
	st := loadState(req.State)
	res := deployer.Result{State: req.State}
	c, err := parseConfig(req.Config)
	if err != nil && !deployer.IsWarning(err) {
		return res, asConfigProblem(err)
	}
	cfg, err := d.restConfig(req)
	if err != nil {
		return res, err
	}
	hash := runHash(req)
	if !st.Pending || st.Hash != hash {
		next, err := d.apply(ctx, req, c, cfg, st)
		res.State, res.ProviderStatus = next.bytes(), next.providerStatus()
		if err != nil {
			return res, err
		}
		st = next
	}
	res.ProviderStatus = st.providerStatus()

	pending, err := d.ready(ctx, c, cfg, st)
	if err == nil && pending == "" {
		var export map[string]any
		export, pending, err = d.exports(ctx, c, cfg, st)
		if err == nil && pending == "" {
			st.Pending = false
			res.State = st.bytes()
			if len(c.allExports()) > 0 {
				res.Export, err = json.Marshal(export)
			}
			return res, err
		}
	}
	if err != nil {
		return res, err
	}
	d.log(req, "waiting: "+pending)
	res.RequeueAfter = d.opts.PollInterval
	return res, nil
}

func (d *Deployer) log(req deployer.Request, msg string) {
	if req.Log != nil {
		req.Log(msg)
	}
}

// apply loads and installs the chart. The returned state is pending; on an
// error it still records what was applied before the error, so a later
// delete finds it.
func (d *Deployer) apply(ctx context.Context, req deployer.Request, c *Config, cfg *rest.Config, prev state) (state, error) {
	st := prev
	st.Hash, st.Pending = runHash(req), true
	ch, err := d.loadChart(ctx, &c.Chart, req.Components)
	if err != nil {
		return prev, err
	}
	vals, err := userValues(c)
	if err != nil {
		return prev, err
	}
	rv, err := renderValues(c, ch, vals)
	if err != nil {
		return prev, err
	}
	if st.ValueExports, err = valueExports(c.allExports(), rv); err != nil {
		return prev, err
	}
	if c.helmDeployment() {
		if !prev.HelmDeployment && len(prev.Managed) > 0 {
			return prev, core.ConfigurationProblem("helmDeployment cannot change from false to true while objects are deployed; delete the item first")
		}
		ac, err := d.actionConfig(cfg, c.Namespace, c.Name)
		if err != nil {
			return prev, kubeError("HelmClient", err)
		}
		if prev.HelmDeployment && prev.Name != "" && (prev.Name != c.Name || prev.Namespace != c.Namespace) {
			return prev, core.ConfigurationProblem("the release name and namespace cannot change (was %s/%s); delete the item first", prev.Namespace, prev.Name)
		}
		rel, err := d.installOrUpgrade(ctx, ac, c, ch, vals)
		if err != nil {
			return prev, err
		}
		st.HelmDeployment, st.Name, st.Namespace, st.Revision = true, c.Name, c.Namespace, rel.Version
		if st.Managed, err = releaseObjects(rel.Manifest, c.Namespace); err != nil {
			return st, err
		}
		return st, nil
	}
	if prev.HelmDeployment && prev.Revision > 0 {
		return prev, core.ConfigurationProblem("helmDeployment cannot change from true to false while the release exists; delete the item first")
	}
	if d.opts.Kube == nil {
		return prev, core.ConfigurationProblem("helmDeployment: false is not available in this build")
	}
	files, err := render(ch, rv, cfg)
	if err != nil {
		return prev, err
	}
	objs, err := manifestObjects(ch, files)
	if err != nil {
		return prev, err
	}
	policies := make([]string, len(objs))
	for i := range policies {
		policies[i] = "manage"
	}
	if c.CreateNamespace {
		ns := &unstructured.Unstructured{}
		ns.SetAPIVersion("v1")
		ns.SetKind("Namespace")
		ns.SetName(c.Namespace)
		objs, policies = append([]*unstructured.Unstructured{ns}, objs...), append([]string{"keep"}, policies...)
	}
	managed, err := d.opts.Kube.Apply(ctx, cfg, ApplyRequest{
		Objects: objs, Policies: policies, DefaultNamespace: c.Namespace,
		UpdateStrategy: c.UpdateStrategy, Labels: map[string]string{ManagedDeployItemLabel: req.Item},
		Previous: prev.Managed, DeletionGroupsDuringUpdate: c.DeletionGroupsDuringUpdate,
	})
	if managed != nil {
		st.Managed = managed
	}
	st.HelmDeployment, st.Name, st.Namespace, st.Revision = false, c.Name, c.Namespace, 0
	return st, err
}

// needsKube reports whether the readiness config asks for more than the
// default check.
func hasCustomChecks(raw json.RawMessage) bool {
	var rc struct {
		Custom []json.RawMessage `json:"custom"`
	}
	_ = json.Unmarshal(raw, &rc)
	return len(rc.Custom) > 0
}

func (d *Deployer) ready(ctx context.Context, c *Config, cfg *rest.Config, st state) (string, error) {
	if d.opts.Kube == nil {
		if hasCustomChecks(c.ReadinessChecks) {
			return "", core.ConfigurationProblem("custom readinessChecks are not available in this build")
		}
		return "", nil
	}
	return d.opts.Kube.Ready(ctx, cfg, c.ReadinessChecks, st.Managed, !st.HelmDeployment)
}

func (d *Deployer) exports(ctx context.Context, c *Config, cfg *rest.Config, st state) (map[string]any, string, error) {
	var fromObjects []Export
	for _, e := range c.allExports() {
		if len(e.FromResource) > 0 {
			fromObjects = append(fromObjects, e)
		}
	}
	out := st.ValueExports
	if out == nil {
		out = map[string]any{}
	}
	if len(fromObjects) == 0 {
		return out, "", nil
	}
	if d.opts.Kube == nil {
		return nil, "", core.ConfigurationProblem("exports from objects are not available in this build")
	}
	vals, pending, err := d.opts.Kube.Export(ctx, cfg, fromObjects)
	if err != nil || pending != "" {
		return nil, pending, err
	}
	return kube.MergeMaps(out, vals), "", nil
}

// Delete uninstalls the release, or deletes the applied objects in their
// deletion groups.
func (d *Deployer) Delete(ctx context.Context, req deployer.Request) (deployer.Result, error) {
	st := loadState(req.State)
	res := deployer.Result{State: req.State}
	c, err := parseConfig(req.Config)
	if err != nil && !deployer.IsWarning(err) {
		if st.Name == "" {
			return res, asConfigProblem(err)
		}
		// The item's last config is unusable, but the state knows what
		// was installed; remove that.
		c = &Config{Name: st.Name, Namespace: st.Namespace, HelmDeployment: &st.HelmDeployment}
	}
	helmMode := c.helmDeployment()
	if st.Name != "" {
		helmMode = st.HelmDeployment
		c.Name, c.Namespace = st.Name, st.Namespace
	}
	if !helmMode && len(st.Managed) == 0 {
		return res, nil
	}
	cfg, err := d.restConfig(req)
	if err != nil {
		return res, err
	}
	if helmMode {
		ac, err := d.actionConfig(cfg, c.Namespace, c.Name)
		if err != nil {
			return res, kubeError("HelmClient", err)
		}
		return res, d.uninstall(ac, c)
	}
	if d.opts.Kube == nil {
		return res, core.ConfigurationProblem("helmDeployment: false is not available in this build")
	}
	pending, err := d.opts.Kube.Delete(ctx, cfg, st.Managed, c.DeletionGroups)
	if err != nil {
		return res, err
	}
	if pending != "" {
		d.log(req, "deleting: "+pending)
		res.RequeueAfter = d.opts.PollInterval
	}
	return res, nil
}

// Drift tells whether the release is still the one the last run left:
// gone, at another revision, or not deployed is drift.
func (d *Deployer) Drift(ctx context.Context, req deployer.Request, last deployer.Result) (string, error) {
	st := loadState(last.State)
	if !st.HelmDeployment || st.Name == "" {
		return "", nil
	}
	cfg, err := d.restConfig(req)
	if err != nil {
		return "", err
	}
	ac, err := d.actionConfig(cfg, st.Namespace, st.Name)
	if err != nil {
		return "", err
	}
	rel, err := currentRelease(ac, st.Name)
	if err != nil {
		return "", err
	}
	switch {
	case rel == nil:
		return fmt.Sprintf("helm release %s/%s is gone", st.Namespace, st.Name), nil
	case rel.Version != st.Revision:
		return fmt.Sprintf("helm release %s/%s is at revision %d, not %d", st.Namespace, st.Name, rel.Version, st.Revision), nil
	case rel.Info != nil && rel.Info.Status != "deployed":
		return fmt.Sprintf("helm release %s/%s is %s", st.Namespace, st.Name, rel.Info.Status), nil
	}
	return "", nil
}
