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
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/kube"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/ociregistry"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/target"
)

// ManagedDeployItemLabel marks objects applied for helmDeployment: false
// as owned by the deploy item, as Landscaper labels them.
const ManagedDeployItemLabel = "helm.deployer.landscaper.gardener.cloud/deployitem"

// DefaultPollInterval is how long to wait before looking again at the
// objects of a helm release that are not ready or exports that are not
// there yet. (helmDeployment: false waits as the manifest machinery does.)
const DefaultPollInterval = 2 * time.Second

// Options configure the deployer.
type Options struct {
	// Logger receives helm's own output at DEBUG. Default: the logger of
	// internal/target (target.SetLogger), where client-go logs too.
	Logger hclog.Logger
	// Registry returns the client charts are pulled with from OCI
	// registries (chart.ref), chart repositories (helmChartRepo) and
	// URLs (chart.archive.remote.url): the
	// provider's one registry client, with its credentials, TLS and
	// plain-HTTP rules, timeouts and cache. It is asked on every pull, so
	// a provider can hand it over once configured. Nil, or a nil result,
	// is a client with the Docker config's credentials and no cache.
	Registry func() *ociregistry.Client
	// WorkingDir resolves relative chart paths.
	WorkingDir string
	// PollInterval overrides DefaultPollInterval.
	PollInterval time.Duration
}

// Deployer is the helm deployer.
type Deployer struct {
	opts Options

	// rendered keeps the manifests of manifest-mode runs that wait for
	// readiness, so a requeued call neither fetches nor renders the chart
	// again. Entries go when their run ends.
	mu       sync.Mutex
	rendered map[string]*renderedChart

	defaultRegistryOnce sync.Once
	defaultRegistry     *ociregistry.Client
}

// renderedChart is a chart rendered for helmDeployment: false.
type renderedChart struct {
	manifests    []kube.Manifest
	valueExports map[string]any
}

// maxRendered bounds the rendered charts kept for waiting runs; runs that
// were abandoned (Terraform stopped) leave entries behind.
const maxRendered = 64

var (
	_ deployer.Deployer        = (*Deployer)(nil)
	_ deployer.TargetUser      = (*Deployer)(nil)
	_ deployer.DriftChecker    = (*Deployer)(nil)
	_ deployer.AdoptionChecker = (*Deployer)(nil)
)

// New returns a helm deployer.
func New(opts Options) *Deployer {
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	return &Deployer{opts: opts, rendered: map[string]*renderedChart{}}
}

// TargetTypes says the deployer acts on a Kubernetes cluster.
func (d *Deployer) TargetTypes() []string { return []string{target.KubernetesClusterType} }

// Validate checks a config at plan time, without side effects.
func (d *Deployer) Validate(config json.RawMessage) error {
	_, err := parseConfig(config)
	return err
}

// state is what the deployer keeps between runs of an item.
type state struct {
	// Hash identifies the config and target of the last apply.
	Hash string `json:"hash"`
	// Pending is set after a helm install or upgrade whose readiness
	// checks or exports did not pass yet: the next run only looks again.
	Pending        bool   `json:"pending,omitempty"`
	HelmDeployment bool   `json:"helmDeployment"`
	Name           string `json:"name"`
	Namespace      string `json:"namespace"`
	Revision       int    `json:"revision,omitempty"`
	// Managed are the objects of the helm release.
	Managed kube.ManagedResourceStatusList `json:"managedResources,omitempty"`
	// Fingerprints hash the fields the release's manifest sets on each of
	// its objects as they were after the last install or upgrade, so a
	// refresh sees them changed (see kube.Drift).
	Fingerprints map[string]string `json:"fingerprints,omitempty"`
	// Kube is the manifest machinery's state of helmDeployment: false.
	Kube         *kube.State    `json:"kube,omitempty"`
	ValueExports map[string]any `json:"valueExports,omitempty"`
}

// ProviderStatus is Landscaper's helm provider status.
type ProviderStatus struct {
	APIVersion       string                         `json:"apiVersion"`
	Kind             string                         `json:"kind"`
	ManagedResources kube.ManagedResourceStatusList `json:"managedResources,omitempty"`
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

// managed are the objects the item has in the cluster.
func (s *state) managed() kube.ManagedResourceStatusList {
	if s.Kube != nil {
		return s.Kube.Managed
	}
	return s.Managed
}

func (s *state) providerStatus() json.RawMessage {
	ps := ProviderStatus{APIVersion: APIVersion, Kind: "ProviderStatus", ManagedResources: s.managed().ForStatus()}
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
		if req.Target.Ref != "" {
			// A provider's target: where it points, not its credential,
			// which the stored hash must not depend on.
			h.Write([]byte(req.Target.Location))
		} else {
			h.Write(req.Target.Config)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// cluster returns the shared client of the item's target, the one the
// manifest deployer's items on the same target use too.
func (d *Deployer) cluster(req deployer.Request) (*target.Cluster, error) {
	t := req.Target
	if t == nil {
		return nil, core.ConfigurationProblem("a helm deploy item needs a target of type %s", target.KubernetesClusterType)
	}
	if t.Type != target.KubernetesClusterType {
		return nil, core.ConfigurationProblem("target %q is of type %s, not %s", t.Name, t.Type, target.KubernetesClusterType)
	}
	cl, err := target.ClusterFor(t.Config)
	if err != nil {
		return nil, core.Terminal(kube.ReasonTarget, fmt.Sprintf("target %q: %v", t.Name, err), core.CodeConfigurationProblem)
	}
	return cl, nil
}

func asConfigProblem(err error) error {
	var ce *core.Error
	if errors.As(err, &ce) {
		return ce
	}
	return core.ConfigurationProblem("%v", err)
}

// spec is what the manifest machinery runs for helmDeployment: false.
func spec(req deployer.Request, c *Config, manifests []kube.Manifest) *kube.Spec {
	return &kube.Spec{
		Manifests:      manifests,
		UpdateStrategy: c.updateStrategy(),
		// Landscaper checks every object of a rendered chart for
		// existence, not only the workloads it checks for readiness.
		ReadinessChecks:            c.ReadinessChecks,
		Exports:                    c.resourceExports(),
		DeletionGroups:             c.DeletionGroups,
		DeletionGroupsDuringUpdate: c.DeletionGroupsDuringUpdate,
		DefaultNamespace:           c.Namespace,
		ManagedLabel:               ManagedDeployItemLabel,
		Owner:                      kube.OwnerFor(req.Execution, req.Item),
		// Landscaper's helm deployer labels rendered objects with the
		// same key, its value being the DeployItem's name.
		AdoptFrom: adoptFrom(req),
	}
}

func adoptFrom(req deployer.Request) string {
	if req.Adopt == nil {
		return ""
	}
	return req.Adopt.DeployItem
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
	cl, err := d.cluster(req)
	if err != nil {
		return res, err
	}
	if !c.helmDeployment() {
		return d.reconcileManifests(ctx, req, c, cl, st)
	}
	hash := runHash(req)
	if !st.Pending || st.Hash != hash {
		next, err := d.install(ctx, req, c, cl, st)
		res.State, res.ProviderStatus = next.bytes(), next.providerStatus()
		if err != nil {
			return res, err
		}
		st = next
	}
	res.ProviderStatus = st.providerStatus()

	// helm owns a release's objects, and hooks may delete some: only the
	// workloads among them are checked, as Landscaper does.
	pending, err := waiting(kube.CheckReadiness(ctx, cl, c.ReadinessChecks, st.Managed, false), kube.ReasonReadiness)
	if pending != "" {
		res.TimeoutCodes = kube.ReadinessTimeoutCodes
	}
	if err == nil && pending == "" {
		var export map[string]any
		export, err = kube.ReadExports(ctx, cl, c.resourceExports())
		if pending, err = waiting(err, kube.ReasonExport); err == nil && pending == "" {
			st.Pending = false
			res.State = st.bytes()
			return res, d.export(&res, c, st.ValueExports, export)
		}
	}
	if err != nil {
		return res, err
	}
	d.log(req, "waiting: "+pending)
	res.RequeueAfter, res.Waiting = d.opts.PollInterval, pending
	return res, nil
}

// waiting tells a wait (an object not ready, an export not readable yet)
// from a failure.
func waiting(err error, reason string) (string, error) {
	var nr *kube.NotReadyError
	var ee *kube.ExportError
	switch {
	case err == nil:
		return "", nil
	case errors.As(err, &nr):
		return nr.Error(), nil
	case errors.As(err, &ee):
		return ee.Error(), nil
	}
	return "", kube.Classify(err, reason, "")
}

// export sets the item's export: the value exports merged with those read
// from objects.
func (d *Deployer) export(res *deployer.Result, c *Config, values, fromObjects map[string]any) error {
	if len(c.allExports()) == 0 {
		return nil
	}
	out := kube.MergeMaps(values, fromObjects)
	if out == nil {
		out = map[string]any{}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return core.Terminal(kube.ReasonExport, err.Error(), core.CodeInternalProblem)
	}
	res.Export = b
	return nil
}

func (d *Deployer) log(req deployer.Request, msg string) {
	if req.Log != nil {
		req.Log(msg)
	}
}

// loaded is a chart with the user's values, the values templates see,
// and the exports read from those.
type loaded struct {
	chart        *chart.Chart
	values       map[string]any
	renderValues chartutil.Values
	exports      map[string]any
}

func (d *Deployer) load(ctx context.Context, req deployer.Request, c *Config) (*loaded, error) {
	ch, err := d.loadChart(ctx, &c.Chart, req.Resources)
	if err != nil {
		return nil, err
	}
	l := &loaded{chart: ch}
	if l.values, err = userValues(c); err != nil {
		return nil, err
	}
	if l.renderValues, err = renderValues(c, ch, l.values); err != nil {
		return nil, err
	}
	if l.exports, err = valueExports(c.allExports(), l.renderValues); err != nil {
		return nil, err
	}
	return l, nil
}

// install installs or upgrades the release. The returned state is
// pending; on an error it still records what was installed before.
func (d *Deployer) install(ctx context.Context, req deployer.Request, c *Config, cl *target.Cluster, prev state) (state, error) {
	if prev.Kube != nil && len(prev.Kube.Managed) > 0 {
		return prev, core.ConfigurationProblem("helmDeployment cannot change from false to true while objects are deployed; delete the item first")
	}
	if prev.HelmDeployment && prev.Name != "" && (prev.Name != c.Name || prev.Namespace != c.Namespace) {
		return prev, core.ConfigurationProblem("the release name and namespace cannot change (was %s/%s); delete the item first", prev.Namespace, prev.Name)
	}
	l, err := d.load(ctx, req, c)
	if err != nil {
		return prev, err
	}
	ac, err := d.actionConfig(cl.Config, c.Namespace, c.Name)
	if err != nil {
		return prev, kubeError("HelmClient", err)
	}
	if req.Adopt != nil && prev.Revision == 0 {
		if err := checkAdoptable(ac, c, req.Adopt); err != nil {
			return prev, err
		}
	}
	rel, err := d.installOrUpgrade(ctx, ac, c, l.chart, l.values)
	if err != nil {
		return prev, waitDetail(ctx, ac, cl, c, err)
	}
	st := state{Hash: runHash(req), Pending: true, HelmDeployment: true, Name: c.Name, Namespace: c.Namespace,
		Revision: rel.Version, ValueExports: l.exports}
	if st.Managed, err = releaseObjects(rel.Manifest, c.Namespace); err != nil {
		return st, err
	}
	// Best effort: without fingerprints a refresh still sees deleted
	// objects, only not changed ones.
	if spec, err := releaseSpec(rel.Manifest, c.Namespace); err == nil {
		st.Fingerprints, _ = kube.Fingerprints(ctx, cl, spec)
	}
	return st, nil
}

// helmWaitMarkers are the texts of helm's errors when its wait for the
// release's objects timed out.
var helmWaitMarkers = []string{"context deadline exceeded", "timed out waiting for the condition"}

// waitDetail adds to the error of a helm operation whose wait timed out
// the objects of the release that are not ready, and why: helm only says
// that time ran out.
func waitDetail(ctx context.Context, ac *action.Configuration, cl *target.Cluster, c *Config, err error) error {
	var ce *core.Error
	if !errors.As(err, &ce) || !slices.ContainsFunc(helmWaitMarkers, func(m string) bool { return strings.Contains(ce.Message, m) }) {
		return err
	}
	rel, rerr := currentRelease(ac, c.Name)
	if rerr != nil || rel == nil {
		return err
	}
	objs, rerr := releaseObjects(rel.Manifest, c.Namespace)
	if rerr != nil {
		return err
	}
	// helm waited with its own checks, which the default check stands in
	// for even where the item disables it; the item's custom checks name
	// their failed requirement, as the manifest deployer's timeouts do.
	checks := c.ReadinessChecks
	checks.DisableDefault = false
	var nr *kube.NotReadyError
	if !errors.As(kube.CheckReadiness(ctx, cl, checks, objs, false), &nr) {
		return err
	}
	out := ce.Clone()
	out.Message += "; not ready: " + nr.Error()
	return out
}

// render renders the chart into manifests for helmDeployment: false.
func (d *Deployer) render(ctx context.Context, req deployer.Request, c *Config, cl *target.Cluster) (*renderedChart, error) {
	l, err := d.load(ctx, req, c)
	if err != nil {
		return nil, err
	}
	files, err := render(l.chart, l.renderValues, cl.Config)
	if err != nil {
		return nil, err
	}
	ms, err := manifests(c, l.chart, files)
	if err != nil {
		return nil, err
	}
	return &renderedChart{manifests: ms, valueExports: l.exports}, nil
}

// reconcileManifests is helmDeployment: false: the rendered chart is
// applied, checked, exported and cleaned up by the manifest machinery,
// as Landscaper's helm deployer hands it to its manifest applier.
func (d *Deployer) reconcileManifests(ctx context.Context, req deployer.Request, c *Config, cl *target.Cluster, st state) (deployer.Result, error) {
	res := deployer.Result{State: req.State, ProviderStatus: st.providerStatus()}
	if st.HelmDeployment && st.Revision > 0 {
		return res, core.ConfigurationProblem("helmDeployment cannot change from true to false while the release exists; delete the item first")
	}
	key := req.Execution + "\x00" + req.Item + "\x00" + req.JobID + "\x00" + runHash(req)
	d.mu.Lock()
	r := d.rendered[key]
	d.mu.Unlock()
	if r == nil || st.Kube == nil || st.Kube.Pending == nil {
		var err error
		if r, err = d.render(ctx, req, c, cl); err != nil {
			return res, err
		}
	}
	ks := adoptedState(st, req.Adopt)
	out, err := kube.Reconcile(ctx, cl, spec(req, c, r.manifests), req.JobID, ks)
	st = state{Hash: runHash(req), Name: c.Name, Namespace: c.Namespace, Kube: &out.State, ValueExports: r.valueExports}
	res.State, res.ProviderStatus, res.RequeueAfter, res.Waiting = st.bytes(), st.providerStatus(), out.RequeueAfter, out.Waiting
	res.TimeoutCodes = out.TimeoutCodes

	d.mu.Lock()
	defer d.mu.Unlock()
	if err == nil && out.RequeueAfter > 0 {
		if len(d.rendered) >= maxRendered {
			clear(d.rendered)
		}
		d.rendered[key] = r
		d.log(req, "waiting for "+out.Waiting)
		return res, nil
	}
	delete(d.rendered, key)
	if err != nil {
		return res, kube.Classify(err, kube.ReasonApply, "")
	}
	return res, d.export(&res, c, r.valueExports, out.Export)
}

// Preview tells what Reconcile would change, without changing anything.
// A release is dry-run as `helm upgrade --dry-run=server` would, and each
// object of its manifest is dry-run as a patch over the live one; objects
// of the current release it no longer holds are deletes. With
// helmDeployment: false, the rendered chart is previewed as the manifest
// deployer previews its manifests.
func (d *Deployer) Preview(ctx context.Context, req deployer.Request) ([]deployer.ObjectChange, error) {
	st := loadState(req.State)
	c, err := parseConfig(req.Config)
	if err != nil && !deployer.IsWarning(err) {
		return nil, asConfigProblem(err)
	}
	cl, err := d.cluster(req)
	if err != nil {
		return nil, err
	}
	if !c.helmDeployment() {
		r, err := d.render(ctx, req, c, cl)
		if err != nil {
			return nil, err
		}
		changes, err := kube.Preview(ctx, cl, spec(req, c, r.manifests), adoptedState(st, req.Adopt))
		return kube.ObjectChanges(changes), err
	}
	l, err := d.load(ctx, req, c)
	if err != nil {
		return nil, err
	}
	ac, err := d.actionConfig(cl.Config, c.Namespace, c.Name)
	if err != nil {
		return nil, kubeError("HelmClient", err)
	}
	rel, err := d.dryRunRelease(ctx, ac, c, l.chart, l.values)
	if err != nil {
		return nil, err
	}
	objects, err := splitManifests(map[string]string{"manifest": rel.Manifest})
	if err != nil {
		return nil, err
	}
	changes, err := kube.PreviewObjects(ctx, cl, objects, c.Namespace)
	if err != nil {
		return nil, err
	}
	next, err := releaseObjects(rel.Manifest, c.Namespace)
	if err != nil {
		return nil, err
	}
	for _, gone := range kube.Without(st.Managed, next) {
		r := gone.Resource
		changes = append(changes, kube.Change{Object: kube.RefName(r.APIVersion, r.Kind, r.Namespace, r.Name), Action: kube.ActionDelete})
	}
	return kube.ObjectChanges(changes), nil
}

// Delete uninstalls the release, or deletes the applied objects in their
// deletion groups.
func (d *Deployer) Delete(ctx context.Context, req deployer.Request) (deployer.Result, error) {
	st := loadState(req.State)
	res := deployer.Result{State: req.State}
	c, err := parseConfig(req.Config)
	if err != nil && !deployer.IsWarning(err) {
		if st.Name == "" && len(st.managed()) == 0 {
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
	if !helmMode && st.Kube == nil && req.Adopt != nil {
		// Destroyed before its first run after the import: what the
		// DeployItem applied is the item's to delete.
		ks := adoptedState(st, req.Adopt)
		st.Kube = &ks
	}
	if !helmMode && len(st.managed()) == 0 {
		return res, nil
	}
	cl, err := d.cluster(req)
	if err != nil {
		return res, err
	}
	if helmMode {
		ac, err := d.actionConfig(cl.Config, c.Namespace, c.Name)
		if err != nil {
			return res, kubeError("HelmClient", err)
		}
		return res, d.uninstall(ac, c)
	}
	out, err := kube.Delete(ctx, cl, spec(req, c, nil), *st.Kube)
	st.Kube = &out.State
	res.State, res.ProviderStatus, res.RequeueAfter, res.Waiting = st.bytes(), st.providerStatus(), out.RequeueAfter, out.Waiting
	if err != nil {
		return res, kube.Classify(err, kube.ReasonDelete, "")
	}
	if out.RequeueAfter > 0 {
		d.log(req, "deleting: waiting for "+out.Waiting)
	}
	return res, nil
}

// Seal keeps what Delete needs of an item's state: the release's name and
// namespace, or the objects of helmDeployment: false. The digest of the
// config, the fingerprints and the exports of values go: the next run
// installs or upgrades again.
func (d *Deployer) Seal(raw []byte) []byte {
	st := loadState(raw)
	st.Hash, st.Fingerprints, st.ValueExports = "", nil, nil
	if st.Kube != nil {
		k, err := kube.DecodeState(kube.SealState(st.Kube.Encode()))
		if err != nil {
			k = kube.State{Managed: st.Kube.Managed}
		}
		st.Kube = &k
	}
	return st.bytes()
}

// Drift tells whether what the last run left is still there. For a helm
// release: gone, at another revision, or not deployed is drift. For
// applied objects: deleted objects, or changed fields the chart sets; when
// the chart cannot be rendered now (say, its source is unreachable) only
// the objects' existence is checked.
func (d *Deployer) Drift(ctx context.Context, req deployer.Request, last deployer.Result) (string, error) {
	st := loadState(last.State)
	if st.Kube != nil {
		if len(st.Kube.Managed) == 0 {
			return "", nil
		}
		c, err := parseConfig(req.Config)
		if err != nil && !deployer.IsWarning(err) {
			return "", nil
		}
		cl, err := d.cluster(req)
		if err != nil {
			return "", err
		}
		var ms []kube.Manifest
		if r, err := d.render(ctx, req, c, cl); err == nil {
			ms = r.manifests
		}
		return kube.Drift(ctx, cl, spec(req, c, ms), *st.Kube)
	}
	if !st.HelmDeployment || st.Name == "" {
		return "", nil
	}
	cl, err := d.cluster(req)
	if err != nil {
		return "", err
	}
	ac, err := d.actionConfig(cl.Config, st.Namespace, st.Name)
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
	// The release record is as left; its objects are compared with the
	// cluster as the manifest deployer compares its own. A re-run upgrades
	// the release with the same chart and values, which recreates deleted
	// objects and sets changed fields back.
	spec, err := releaseSpec(rel.Manifest, st.Namespace)
	if err != nil {
		return "", fmt.Errorf("the manifest of helm release %s/%s cannot be read: %w", st.Namespace, st.Name, err)
	}
	drift, err := kube.Drift(ctx, cl, spec, kube.State{Managed: clusterScoped(cl, st.Managed), Fingerprints: st.Fingerprints})
	if drift != "" {
		drift = fmt.Sprintf("helm release %s/%s: %s", st.Namespace, st.Name, drift)
	}
	return drift, err
}

// clusterScoped returns managed with no namespace on objects of
// cluster-scoped kinds. releaseObjects gives every object without one in
// the manifest the release's namespace, cluster-scoped ones too (states
// written so stay as they are), while fingerprints are keyed as the API
// server scopes objects: unmatched, a changed ClusterRole was only checked
// for existence. A kind that cannot be looked up keeps its record.
func clusterScoped(cl *target.Cluster, managed kube.ManagedResourceStatusList) kube.ManagedResourceStatusList {
	out := make(kube.ManagedResourceStatusList, len(managed))
	for i, mr := range managed {
		out[i] = mr
		if mr.Resource.Namespace == "" {
			continue
		}
		m, err := cl.Mapping(schema.FromAPIVersionAndKind(mr.Resource.APIVersion, mr.Resource.Kind))
		if err == nil && m.Scope.Name() != meta.RESTScopeNameNamespace {
			out[i].Resource.Namespace = ""
		}
	}
	return out
}

// releaseSpec is a release's manifest as the manifest machinery sees it,
// for fingerprints and drift: every object managed, nothing added.
func releaseSpec(manifest, namespace string) (*kube.Spec, error) {
	objs, err := splitManifests(map[string]string{"manifest": manifest})
	if err != nil {
		return nil, err
	}
	ms := make([]kube.Manifest, 0, len(objs))
	for _, o := range objs {
		raw, err := o.MarshalJSON()
		if err != nil {
			return nil, err
		}
		ms = append(ms, kube.Manifest{Policy: kube.PolicyManage, Manifest: raw})
	}
	return &kube.Spec{Manifests: ms, DefaultNamespace: namespace, Owner: "helm"}, nil
}

var _ deployer.HealthChecker = (*Deployer)(nil)

// Health reports the pods of the workloads of the release (or of the
// applied chart), for a rollout's bake: their highest restart count and
// readiness.
func (d *Deployer) Health(ctx context.Context, req deployer.Request) (deployer.Health, error) {
	st := loadState(req.State)
	managed := st.Managed
	if st.Kube != nil {
		managed = st.Kube.Managed
	}
	if len(managed) == 0 {
		return deployer.Health{}, nil
	}
	cl, err := d.cluster(req)
	if err != nil {
		return deployer.Health{}, err
	}
	h, err := kube.Health(ctx, cl, kube.State{Managed: managed})
	return deployer.Health{Restarts: h.Restarts, Ready: h.Ready, Message: h.Message}, err
}
