package helm

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	helmkube "helm.sh/helm/v3/pkg/kube"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/kube"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/target"
)

// restGetter gives helm a cluster from a rest.Config instead of a
// kubeconfig file, with the release namespace as the default namespace.
type restGetter struct {
	cfg       *rest.Config
	namespace string
	disc      discovery.CachedDiscoveryInterface
}

var _ genericclioptions.RESTClientGetter = (*restGetter)(nil)

func newRESTGetter(cfg *rest.Config, namespace string) (*restGetter, error) {
	c := rest.CopyConfig(cfg)
	// helm talks a lot to the API server while it waits; client-go's
	// default of 5 QPS slows every install down.
	if c.QPS == 0 {
		c.QPS, c.Burst = 50, 100
	}
	dc, err := discovery.NewDiscoveryClientForConfig(c)
	if err != nil {
		return nil, err
	}
	return &restGetter{cfg: c, namespace: namespace, disc: memory.NewMemCacheClient(dc)}, nil
}

func (g *restGetter) ToRESTConfig() (*rest.Config, error) { return rest.CopyConfig(g.cfg), nil }

func (g *restGetter) ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error) {
	return g.disc, nil
}

func (g *restGetter) ToRESTMapper() (meta.RESTMapper, error) {
	m := restmapper.NewDeferredDiscoveryRESTMapper(g.disc)
	return restmapper.NewShortcutExpander(m, g.disc, nil), nil
}

func (g *restGetter) ToRawKubeConfigLoader() clientcmd.ClientConfig {
	return clientcmd.NewDefaultClientConfig(*clientcmdapi.NewConfig(),
		&clientcmd.ConfigOverrides{Context: clientcmdapi.Context{Namespace: g.namespace}})
}

// helmLog routes helm's debug output to the logger at DEBUG. helm's log
// lines name objects and operations, never values or secrets' contents.
func helmLog(l hclog.Logger, release string) func(string, ...any) {
	l = l.With("release", release)
	return func(format string, v ...any) { l.Debug(fmt.Sprintf(format, v...)) }
}

// actionConfig builds helm's configuration for one release namespace, with
// releases stored in Secrets as helm does by default.
func (d *Deployer) actionConfig(cfg *rest.Config, namespace, name string) (*action.Configuration, error) {
	getter, err := newRESTGetter(cfg, namespace)
	if err != nil {
		return nil, err
	}
	l := d.opts.Logger
	if l == nil {
		l = target.Logger()
	}
	logf := helmLog(l, name)
	kc := helmkube.New(getter)
	kc.Log = logf
	kc.Namespace = namespace
	cs, err := kubernetes.NewForConfig(getter.cfg)
	if err != nil {
		return nil, err
	}
	sd := driver.NewSecrets(cs.CoreV1().Secrets(namespace))
	sd.Log = logf
	return &action.Configuration{
		RESTClientGetter: getter,
		Releases:         storage.Init(sd),
		KubeClient:       kc,
		Log:              logf,
	}, nil
}

// currentRelease returns the last release of that name, or nil when there
// is none. A release of that name in another namespace is not ours.
func currentRelease(ac *action.Configuration, name string) (*release.Release, error) {
	rel, err := ac.Releases.Last(name)
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return nil, nil
	}
	return rel, err
}

// installOrUpgrade installs the release, or upgrades it when it exists,
// with the options of helmDeploymentConfig. It returns the new release.
func (d *Deployer) installOrUpgrade(ctx context.Context, ac *action.Configuration, c *Config, ch *chart.Chart, values map[string]any) (*release.Release, error) {
	cur, err := currentRelease(ac, c.Name)
	if err != nil {
		return nil, kubeError("GetRelease", err)
	}
	var hc HelmDeploymentConfig
	if c.HelmDeploymentConfig != nil {
		hc = *c.HelmDeploymentConfig
	}
	if cur == nil {
		o := options(hc.Install)
		in := action.NewInstall(ac)
		in.ReleaseName, in.Namespace, in.CreateNamespace = c.Name, c.Namespace, c.CreateNamespace
		in.Atomic, in.Force, in.SkipSchemaValidation = o.Atomic, o.Force, o.SkipSchemaValidation
		in.TakeOwnership, in.Wait, in.Timeout = o.TakeOwnership, o.Wait, time.Duration(o.Timeout)
		rel, err := in.RunWithContext(ctx, ch, values)
		if err != nil {
			unblockPending(ac, c.Name)
			return nil, helmError("Install", "unable to install helm chart release", err)
		}
		return rel, nil
	}
	// A release stuck in a pending state (an earlier run was stopped) blocks
	// every further upgrade; Landscaper clears such records, so do we.
	if cur.Info != nil && cur.Info.Status.IsPending() {
		unblockPending(ac, c.Name)
		if cur, err = currentRelease(ac, c.Name); err != nil {
			return nil, kubeError("GetRelease", err)
		}
	}
	if cur == nil {
		return d.installOrUpgrade(ctx, ac, c, ch, values)
	}
	o := options(hc.Upgrade)
	up := action.NewUpgrade(ac)
	up.Namespace, up.MaxHistory = c.Namespace, 10
	up.Atomic, up.Force, up.SkipSchemaValidation = o.Atomic, o.Force, o.SkipSchemaValidation
	up.TakeOwnership, up.Wait, up.Timeout = o.TakeOwnership, o.Wait, time.Duration(o.Timeout)
	rel, err := up.RunWithContext(ctx, c.Name, ch, values)
	if err != nil {
		unblockPending(ac, c.Name)
		return nil, helmError("Upgrade", "unable to upgrade helm chart release", err)
	}
	return rel, nil
}

// unblockPending deletes release records left pending by a failed or
// stopped operation, so the next attempt is not refused.
func unblockPending(ac *action.Configuration, name string) {
	hist, err := ac.Releases.History(name)
	if err != nil {
		return
	}
	for _, r := range hist {
		if r.Info != nil && r.Info.Status.IsPending() {
			if _, err := ac.Releases.Delete(r.Name, r.Version); err != nil {
				ac.Log("unable to delete pending release record %s.v%d: %v", r.Name, r.Version, err)
			}
		}
	}
}

// uninstall removes the release; a release that is not there is gone.
func (d *Deployer) uninstall(ac *action.Configuration, c *Config) error {
	cur, err := currentRelease(ac, c.Name)
	if err != nil {
		return kubeError("GetRelease", err)
	}
	if cur == nil {
		return nil
	}
	var o opOptions
	if c.HelmDeploymentConfig != nil {
		o = options(c.HelmDeploymentConfig.Uninstall)
	} else {
		o = options(nil)
	}
	un := action.NewUninstall(ac)
	un.Wait, un.Timeout = o.Wait, time.Duration(o.Timeout)
	if _, err := un.Run(c.Name); err != nil {
		if errors.Is(err, driver.ErrReleaseNotFound) {
			return nil
		}
		return helmError("Uninstall", "unable to delete helm chart release", err)
	}
	return nil
}

// renderErrorMarkers are the texts of helm errors that come from the chart
// and its values, not from the cluster: running again cannot help.
var renderErrorMarkers = []string{
	"template: ", "parse error", "execution error at", "YAML parse error",
	"values don't meet the specifications", "chart requires kubeVersion", "error converting YAML to JSON",
	"unable to build kubernetes objects from release manifest", "rendered manifests contain a resource that already exists",
	"invalid ownership metadata", "cannot be handled as a", "is invalid:",
}

// helmError classifies an error of a helm operation as the manifest
// deployer classifies the API server's answers: rejected credentials or
// permissions fail at once (ERR_UNAUTHORIZED), as do errors in the chart,
// its values or conflicts with foreign objects; others (the API server
// away, conflicts, throttling, a timeout of helm's wait) are retried.
func helmError(reason, prefix string, err error) *core.Error {
	msg := prefix + ": " + err.Error()
	if ce := accessError(msg, err); ce != nil {
		return ce
	}
	for _, m := range renderErrorMarkers {
		if strings.Contains(err.Error(), m) {
			return core.Terminal(reason, msg, core.CodeConfigurationProblem)
		}
	}
	return core.TransientCause(reason, msg, err)
}

// forbiddenText is the API server's answer to a request RBAC denies, as
// it reads after helm flattened the error into text.
var forbiddenText = regexp.MustCompile(`is forbidden: User "[^"]*" cannot `)

// unauthorizedText is client-go's text for a 401.
const unauthorizedText = "the server has asked for the client to provide credentials"

// accessError is the terminal error of a request the API server refused
// for its credentials or permissions, or nil. helm wraps some API errors
// and flattens others into text, so both are looked at. The message is the
// API server's own, which names the user, the verb and the object.
func accessError(msg string, err error) *core.Error {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		if ce := kube.Classify(err, "", ""); ce.Reason == kube.ReasonUnauthorized {
			return core.Terminal(kube.ReasonUnauthorized, msg, core.CodeUnauthorized)
		}
		return nil
	}
	if forbiddenText.MatchString(err.Error()) || strings.Contains(err.Error(), unauthorizedText) {
		return core.Terminal(kube.ReasonUnauthorized, msg, core.CodeUnauthorized)
	}
	return nil
}

// kubeError classifies an error of a request helm's storage or client
// made to the API server, as the manifest deployer does (kube.Classify).
func kubeError(reason string, err error) *core.Error {
	if ce := accessError(err.Error(), err); ce != nil {
		return ce
	}
	return kube.Classify(err, reason, "")
}

// releaseObjects lists the objects of a release manifest, for the
// provider status and the readiness checks.
func releaseObjects(manifest, namespace string) (kube.ManagedResourceStatusList, error) {
	docs, err := splitManifests(map[string]string{"manifest": manifest})
	if err != nil {
		return nil, err
	}
	out := make(kube.ManagedResourceStatusList, 0, len(docs))
	for _, o := range docs {
		ns := o.GetNamespace()
		if ns == "" {
			ns = namespace
		}
		out = append(out, kube.ManagedResourceStatus{Policy: kube.PolicyManage, Resource: corev1.ObjectReference{
			APIVersion: o.GetAPIVersion(), Kind: o.GetKind(), Name: o.GetName(), Namespace: ns,
		}})
	}
	return out, nil
}

// dryRunRelease is installOrUpgrade as `helm upgrade --install --dry-run=server`:
// the chart rendered against the cluster (lookups included), nothing stored.
func (d *Deployer) dryRunRelease(ctx context.Context, ac *action.Configuration, c *Config, ch *chart.Chart, values map[string]any) (*release.Release, error) {
	cur, err := currentRelease(ac, c.Name)
	if err != nil {
		return nil, kubeError("GetRelease", err)
	}
	if cur == nil {
		in := action.NewInstall(ac)
		in.ReleaseName, in.Namespace, in.CreateNamespace = c.Name, c.Namespace, c.CreateNamespace
		in.DryRun, in.DryRunOption = true, "server"
		rel, err := in.RunWithContext(ctx, ch, values)
		if err != nil {
			return nil, helmError("Install", "unable to dry-run the install of the helm chart release", err)
		}
		return rel, nil
	}
	up := action.NewUpgrade(ac)
	up.Namespace = c.Namespace
	up.DryRun, up.DryRunOption = true, "server"
	rel, err := up.RunWithContext(ctx, c.Name, ch, values)
	if err != nil {
		return nil, helmError("Upgrade", "unable to dry-run the upgrade of the helm chart release", err)
	}
	return rel, nil
}
