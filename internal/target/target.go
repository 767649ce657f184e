// Package target knows Landscaper's target types: what their configs hold,
// how they are checked before anything runs, and, for kubernetes-cluster
// targets, how a config becomes a client shared by every deploy item that
// acts on the same cluster.
package target

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sync/atomic"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// KubernetesClusterType is Landscaper's target type of a Kubernetes cluster.
const KubernetesClusterType = "landscaper.gardener.cloud/kubernetes-cluster"

// RateLimit is a client-side limit of the requests to one cluster, shared
// by all items on one target. The zero value is no limit, the default:
// the API server protects itself with priority and fairness (answered
// with 429 and Retry-After, which client-go waits for and retries), so a
// client-side token bucket only slows applies down. controller-runtime
// disables it by default for the same reason. client-go's own default
// (5/10) would throttle a single item of a few dozen manifests.
type RateLimit struct {
	// QPS is the sustained rate in requests per second; 0 is no limit.
	QPS float32
	// Burst is how many requests may go at once above QPS.
	Burst int
}

var rateLimit atomic.Pointer[RateLimit]

// SetRateLimit sets the limit of the cluster clients made from now on
// (the zero value: none). Like the logger, it is the process's: the
// provider sets it from its configuration, and a Terraform provider
// process serves one configuration. Clients are cached by config and
// limit, so a change makes new ones.
func SetRateLimit(l RateLimit) {
	if l.QPS > 0 && l.Burst < 1 {
		l.Burst = 1
	}
	rateLimit.Store(&l)
}

func currentRateLimit() RateLimit {
	if l := rateLimit.Load(); l != nil {
		return *l
	}
	return RateLimit{}
}

// KubernetesClusterConfig is the config of a kubernetes-cluster target, in
// Landscaper's format: the kubeconfig as YAML text.
type KubernetesClusterConfig struct {
	Kubeconfig string `json:"kubeconfig"`
}

// ErrSelfTarget is the error of a config with Landscaper's selfConfig.
var ErrSelfTarget = errors.New(`"selfConfig" is a Landscaper self target: Landscaper gives it a token of a ServiceAccount ` +
	`in its resource cluster (the cluster that holds its Installations and Targets), and this provider has no resource cluster. ` +
	`Use a "kubeconfig" instead, for example one that holds a token of that ServiceAccount ` +
	`(kubectl create token <serviceaccount> --namespace <namespace>) with the cluster's server and CA`)

// ParseKubernetesCluster decodes a kubernetes-cluster target's config and
// its kubeconfig. Errors never quote the config: it holds credentials.
func ParseKubernetesCluster(config json.RawMessage) (*clientcmdapi.Config, error) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(config, &fields) == nil {
		if _, ok := fields["selfConfig"]; ok {
			return nil, ErrSelfTarget
		}
	}
	var c KubernetesClusterConfig
	dec := json.NewDecoder(bytes.NewReader(config))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) && ute.Field != "" {
			return nil, fmt.Errorf("%s must be a string holding the kubeconfig as YAML text", ute.Field)
		}
		return nil, errors.New(`the config must be an object with one field, "kubeconfig" (the kubeconfig as YAML text)`)
	}
	if c.Kubeconfig == "" {
		return nil, errors.New(`the config has no "kubeconfig"`)
	}
	kc, err := clientcmd.Load([]byte(c.Kubeconfig))
	if err != nil {
		// clientcmd's message may quote the offending text, so it is not
		// passed on.
		return nil, errors.New("kubeconfig is not a valid kubeconfig (YAML or JSON)")
	}
	if len(kc.Clusters) == 0 {
		return nil, errors.New("kubeconfig names no cluster")
	}
	if err := clientcmd.Validate(*kc); err != nil {
		return nil, fmt.Errorf("kubeconfig is invalid: %s", redactedValidation(err))
	}
	return kc, nil
}

// redactedValidation keeps clientcmd's validation messages, which name
// contexts, clusters and files but never credentials; anything unexpected
// is replaced by a generic text.
func redactedValidation(err error) string {
	var agg interface{ Errors() []error }
	if !errors.As(err, &agg) {
		return "it names no usable cluster, user and context"
	}
	msg := ""
	for i, e := range agg.Errors() {
		if i > 0 {
			msg += "; "
		}
		msg += e.Error()
	}
	return msg
}

// CheckKubernetesCluster validates a kubernetes-cluster target's config at
// plan time. Errors never quote the config: it holds credentials.
func CheckKubernetesCluster(config json.RawMessage) error {
	kc, err := ParseKubernetesCluster(config)
	if err != nil {
		return err
	}
	if _, err := restConfig(kc); err != nil {
		return err
	}
	return nil
}

// RESTConfig builds the client configuration of a kubernetes-cluster
// target: the kubeconfig's current context (or its only context), with
// this provider's rate limits and logging.
func RESTConfig(config json.RawMessage) (*rest.Config, error) {
	kc, err := ParseKubernetesCluster(config)
	if err != nil {
		return nil, err
	}
	return restConfig(kc)
}

func restConfig(kc *clientcmdapi.Config) (*rest.Config, error) {
	if kc.CurrentContext == "" && len(kc.Contexts) == 1 {
		for name := range kc.Contexts {
			kc.CurrentContext = name
		}
	}
	// A kubeconfig of one cluster and at most one user needs no context
	// to be unambiguous; kubectl would insist, targets need not.
	if kc.CurrentContext == "" && len(kc.Contexts) == 0 && len(kc.Clusters) == 1 && len(kc.AuthInfos) <= 1 {
		ctx := clientcmdapi.NewContext()
		for name := range kc.Clusters {
			ctx.Cluster = name
		}
		for name := range kc.AuthInfos {
			ctx.AuthInfo = name
		}
		kc.Contexts = map[string]*clientcmdapi.Context{"default": ctx}
		kc.CurrentContext = "default"
	}
	rc, err := clientcmd.NewDefaultClientConfig(*kc, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig cannot be used: %s", redactedValidation(err))
	}
	// client-go reads a QPS of 0 as its default of 5, and a negative one as
	// no limit.
	if l := currentRateLimit(); l.QPS > 0 {
		rc.QPS, rc.Burst = l.QPS, l.Burst
	} else {
		rc.QPS, rc.Burst = -1, 0
	}
	rc.UserAgent = "terraform-provider-landscaper"
	rc.WarningHandler = warningHandler{}
	return rc, nil
}

// DefaultNamespace is the namespace of the kubeconfig's current context,
// or "default": where a namespaced object without a namespace goes, as
// kubectl does it.
func DefaultNamespace(config json.RawMessage) string {
	kc, err := ParseKubernetesCluster(config)
	if err != nil {
		return "default"
	}
	ns, _, err := clientcmd.NewDefaultClientConfig(*kc, &clientcmd.ConfigOverrides{}).Namespace()
	if err != nil || ns == "" {
		return "default"
	}
	return ns
}

// KubernetesClusterLocation is where a kubernetes-cluster target points:
// the server of the kubeconfig's current context and, when the context
// names one, its namespace. It holds no credential, so it may be kept in
// state: a new token for the same cluster leaves it as it is. "" when the
// config cannot be used.
func KubernetesClusterLocation(config json.RawMessage) string {
	kc, err := ParseKubernetesCluster(config)
	if err != nil {
		return ""
	}
	rc, err := restConfig(kc)
	if err != nil {
		return ""
	}
	loc := rc.Host
	if c := kc.Contexts[kc.CurrentContext]; c != nil && c.Namespace != "" {
		loc += "#namespace=" + c.Namespace
	}
	return loc
}

// KubernetesClusterPointing is a digest of everything a kubernetes-cluster
// target's config says but its credentials: the kubeconfig with each
// user's token, token file, client certificate and key, user name and
// password, exec and auth-provider plugin, and the user info of the
// server's and the proxy's URL, taken out. Two configs with the same pointing differ in a credential
// only (a rotation); a server, CA, TLS server name, proxy, namespace,
// impersonation or any other field changes it. It holds no credential.
// "" when the config cannot be read.
func KubernetesClusterPointing(config json.RawMessage) string {
	kc, err := ParseKubernetesCluster(config)
	if err != nil {
		return ""
	}
	for _, u := range kc.AuthInfos {
		u.Token, u.TokenFile, u.Username, u.Password = "", "", "", ""
		u.ClientCertificate, u.ClientCertificateData, u.ClientKey, u.ClientKeyData = "", nil, "", nil
		u.Exec, u.AuthProvider = nil, nil
	}
	withoutUser := func(u string) string {
		if p, err := url.Parse(u); err == nil && p.User != nil {
			p.User = nil
			return p.String()
		}
		return u
	}
	for _, c := range kc.Clusters {
		c.Server, c.ProxyURL = withoutUser(c.Server), withoutUser(c.ProxyURL)
	}
	// clientcmd writes the named lists sorted by name.
	out, err := clientcmd.Write(*kc)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(out)
	return "sha256:" + hex.EncodeToString(sum[:])
}
