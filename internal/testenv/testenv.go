//go:build unix

package testenv

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

const (
	adminUser  = "landscaper-testenv-admin"
	adminGroup = "system:masters"

	// serviceCIDR is only a range for ClusterIPs to be allocated from; with
	// no kube-proxy nothing ever routes to it.
	serviceCIDR = "10.0.0.0/24"

	defaultStartTimeout = 2 * time.Minute
	// apiServerGrace bounds kube-apiserver's graceful shutdown, which drains
	// in-flight requests and watches before exiting.
	apiServerGrace = 3 * time.Second
	// otherGrace bounds the shutdown of etcd and the controller manager.
	otherGrace = 10 * time.Second
)

// DefaultControllers are the kube-controller-manager controllers the
// environment runs: namespace deletion, garbage collection by owner
// references, and each namespace's default service account with its token
// handling. Workload controllers are left out: with no scheduler or kubelet
// their objects never become ready anyway.
var DefaultControllers = []string{"namespace", "garbagecollector", "serviceaccount", "serviceaccount-token"}

// Options configure Start. The zero value is ready to use.
type Options struct {
	// BinDir holds etcd, kube-apiserver and kube-controller-manager. Empty
	// means $LANDSCAPER_TESTENV_BIN, else <repo>/bin/testenv kept up to date
	// by scripts/testenv-build.sh.
	BinDir string
	// Controllers replaces DefaultControllers.
	Controllers []string
	// StartTimeout bounds the wait for each process to become ready; zero
	// means two minutes. Building the binaries is bounded by ctx alone.
	StartTimeout time.Duration
	// APIServerArgs are appended to kube-apiserver's flags; a later flag
	// overrides an earlier one.
	APIServerArgs []string
	// Dir is the working directory (logs, etcd data, certificates,
	// kubeconfig); it is created if missing and must hold nothing else.
	// Empty means a new temporary directory.
	Dir string
	// KeepDir keeps the working directory (logs, etcd data, certificates)
	// after Stop, for post-mortems.
	KeepDir bool
}

// Env is a running control plane: etcd, kube-apiserver and
// kube-controller-manager on 127.0.0.1, in a private temporary directory.
type Env struct {
	opts   Options
	dir    string
	binDir string

	etcdURL     string
	etcdPeerURL string
	apiPort     int
	kcmPort     int
	pki         *pki
	token       string
	apiArgs     []string
	kubecfg     string
	kcfgPath    string
	client      *http.Client

	mu        sync.Mutex
	etcd      *process
	apiserver *process
	kcm       *process
	stopped   bool
	// dependents are stopped first by Stop: what runs against the API
	// server (Landscaper's controllers), in reverse order of registration.
	dependents []func() error
}

// Start brings up etcd, kube-apiserver and kube-controller-manager and
// returns once the API server is ready and the default namespace exists. On
// failure everything started so far is stopped again and the error carries
// the tail of the failing process's log.
func Start(ctx context.Context, opts Options) (_ *Env, err error) {
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = defaultStartTimeout
	}
	if len(opts.Controllers) == 0 {
		opts.Controllers = DefaultControllers
	}
	dir := opts.Dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "landscaper-testenv-"); err != nil {
			return nil, err
		}
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	e := &Env{opts: opts, dir: dir}
	defer func() {
		if err != nil {
			_ = e.stopAll()
			if opts.Dir == "" {
				_ = os.RemoveAll(dir)
			}
		}
	}()

	for _, sub := range []string{"logs", "pki", "etcd"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o700); err != nil {
			return nil, err
		}
	}
	if e.binDir, err = controlPlane.binaries(ctx, opts.BinDir, e.logPath("build")); err != nil {
		return nil, fmt.Errorf("testenv binaries: %w", err)
	}
	if err := e.writeFiles(); err != nil {
		return nil, err
	}
	if err := e.startEtcd(ctx); err != nil {
		return nil, err
	}
	if err := e.StartAPIServer(ctx); err != nil {
		return nil, err
	}
	if err := e.startControllerManager(ctx); err != nil {
		return nil, err
	}
	return e, nil
}

// Kubeconfig returns a kubeconfig (YAML) for the API server, authenticated
// as an admin in group system:masters by client certificate.
func (e *Env) Kubeconfig() string { return e.kubecfg }

// KubeconfigPath is a file holding Kubeconfig, for tools that want a path.
func (e *Env) KubeconfigPath() string { return e.kcfgPath }

// Host is the API server's base URL, https://127.0.0.1:<port>.
func (e *Env) Host() string { return "https://127.0.0.1:" + strconv.Itoa(e.apiPort) }

// CAData is the PEM-encoded CA that signed the API server's serving
// certificate and the admin client certificate.
func (e *Env) CAData() []byte { return e.pki.caCert }

// Token is a bearer token for the same admin identity as the kubeconfig's
// client certificate.
func (e *Env) Token() string { return e.token }

// HTTPClient returns a client that trusts the CA and authenticates as the
// admin. It speaks to Host; paths are the plain REST API.
func (e *Env) HTTPClient() *http.Client { return e.client }

// Dir is the environment's working directory; logs/ in it holds each
// process's output.
func (e *Env) Dir() string { return e.dir }

// StopAPIServer stops kube-apiserver gracefully (SIGTERM), leaving etcd and
// the controller manager running. Clients then see connection refused until
// StartAPIServer.
func (e *Env) StopAPIServer() error {
	e.mu.Lock()
	p := e.apiserver
	e.apiserver = nil
	e.mu.Unlock()
	if p == nil {
		return nil
	}
	return p.stop(apiServerGrace)
}

// StartAPIServer starts kube-apiserver on the same port with the same etcd
// and waits until it is ready. Calling it while the API server runs is a
// no-op.
func (e *Env) StartAPIServer(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped {
		return errors.New("testenv: environment stopped")
	}
	if e.apiserver != nil && !e.apiserver.exited() {
		return nil
	}
	p, err := startProcess("kube-apiserver", filepath.Join(e.binDir, "kube-apiserver"), e.apiArgs, e.logPath("kube-apiserver"))
	if err != nil {
		return err
	}
	e.apiserver = p
	err = p.waitReady(ctx, e.opts.StartTimeout, e.apiServerReady)
	if err != nil {
		_ = p.stop(otherGrace)
		e.apiserver = nil
	}
	return err
}

// Stop ends all processes (controller manager, API server, etcd, in that
// order) and removes the working directory unless Options.KeepDir is set.
// It is safe to call more than once.
func (e *Env) Stop() error {
	err := e.stopAll()
	if !e.opts.KeepDir {
		err = errors.Join(err, os.RemoveAll(e.dir))
	}
	return err
}

func (e *Env) stopAll() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.stopped = true
	var errs []error
	for i := len(e.dependents) - 1; i >= 0; i-- {
		errs = append(errs, e.dependents[i]())
	}
	e.dependents = nil
	if e.kcm != nil {
		errs = append(errs, e.kcm.stop(otherGrace))
	}
	if e.apiserver != nil {
		errs = append(errs, e.apiserver.stop(apiServerGrace))
	}
	if e.etcd != nil {
		errs = append(errs, e.etcd.stop(otherGrace))
	}
	e.kcm, e.apiserver, e.etcd = nil, nil, nil
	return errors.Join(errs...)
}

// addDependent has Stop call stop before it stops the control plane.
func (e *Env) addDependent(stop func() error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.dependents = append(e.dependents, stop)
}

func (e *Env) logPath(name string) string { return filepath.Join(e.dir, "logs", name+".log") }

func (e *Env) path(elem ...string) string { return filepath.Join(append([]string{e.dir}, elem...)...) }

// writeFiles allocates ports and writes certificates, keys, the token file
// and kubeconfigs, then fixes the API server's flags so that a restart
// reuses all of them.
func (e *Env) writeFiles() error {
	ports, err := freePorts(4)
	if err != nil {
		return err
	}
	e.etcdURL = "http://127.0.0.1:" + strconv.Itoa(ports[0])
	e.etcdPeerURL = "http://127.0.0.1:" + strconv.Itoa(ports[1])
	e.apiPort, e.kcmPort = ports[2], ports[3]

	if e.pki, err = newPKI(); err != nil {
		return err
	}
	if e.token, err = randomToken(); err != nil {
		return err
	}
	e.kubecfg = kubeconfig(e.Host(), e.pki.caCert, e.pki.adminCert, e.pki.adminKey)
	e.kcfgPath = e.path("kubeconfig")
	files := map[string][]byte{
		e.path("pki", "ca.crt"):      e.pki.caCert,
		e.path("pki", "serving.crt"): e.pki.servingCert,
		e.path("pki", "serving.key"): e.pki.servingKey,
		e.path("pki", "sa.key"):      e.pki.saKey,
		e.path("pki", "sa.pub"):      e.pki.saPubKey,
		// Columns: token, user name, user UID, groups.
		e.path("pki", "tokens.csv"): fmt.Appendf(nil, "%s,%s,%s,%q\n", e.token, adminUser, adminUser, adminGroup),
		e.kcfgPath:                  []byte(e.kubecfg),
	}
	for name, data := range files {
		if err := os.WriteFile(name, data, 0o600); err != nil {
			return err
		}
	}

	cert, err := tls.X509KeyPair(e.pki.adminCert, e.pki.adminKey)
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(e.pki.caCert)
	e.client = &http.Client{Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
	}}

	e.apiArgs = []string{
		"--etcd-servers=" + e.etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		// The endpoint reconcilers that publish the kubernetes service's
		// endpoints refuse loopback addresses, and nothing here could route
		// to the service anyway.
		"--endpoint-reconciler-type=none",
		"--secure-port=" + strconv.Itoa(e.apiPort),
		"--cert-dir=" + e.path("pki"),
		"--tls-cert-file=" + e.path("pki", "serving.crt"),
		"--tls-private-key-file=" + e.path("pki", "serving.key"),
		"--client-ca-file=" + e.path("pki", "ca.crt"),
		"--token-auth-file=" + e.path("pki", "tokens.csv"),
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + e.path("pki", "sa.pub"),
		"--service-account-signing-key-file=" + e.path("pki", "sa.key"),
		"--service-cluster-ip-range=" + serviceCIDR,
		"--allow-privileged=true",
		"--profiling=false",
		// No admission plugins beyond what object semantics need: the
		// defaults that wait for or mutate pods and nodes only cost time.
		"--disable-admission-plugins=ServiceAccount,TaintNodesByCondition,Priority,DefaultTolerationSeconds," +
			"DefaultStorageClass,StorageObjectInUseProtection,PersistentVolumeClaimResize,RuntimeClass," +
			"CertificateApproval,CertificateSigning,ClusterTrustBundleAttest,CertificateSubjectRestriction," +
			"DefaultIngressClass,PodSecurity,LimitRanger,ResourceQuota",
	}
	e.apiArgs = append(e.apiArgs, e.opts.APIServerArgs...)
	return nil
}

func (e *Env) startEtcd(ctx context.Context) error {
	peerURL := e.etcdPeerURL
	args := []string{
		"--name=testenv",
		"--data-dir=" + e.path("etcd"),
		"--listen-client-urls=" + e.etcdURL,
		"--advertise-client-urls=" + e.etcdURL,
		"--listen-peer-urls=" + peerURL,
		"--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=testenv=" + peerURL,
		// Test data is thrown away; fsync only slows every write.
		"--unsafe-no-fsync=true",
	}
	p, err := startProcess("etcd", filepath.Join(e.binDir, "etcd"), args, e.logPath("etcd"))
	if err != nil {
		return err
	}
	e.etcd = p
	return p.waitReady(ctx, e.opts.StartTimeout, func(ctx context.Context) error {
		body, err := get(ctx, http.DefaultClient, e.etcdURL+"/health")
		if err != nil {
			return err
		}
		if !strings.Contains(body, `"health":"true"`) {
			return fmt.Errorf("etcd /health: %s", body)
		}
		return nil
	})
}

func (e *Env) startControllerManager(ctx context.Context) error {
	args := []string{
		"--kubeconfig=" + e.kcfgPath,
		"--authentication-kubeconfig=" + e.kcfgPath,
		"--authorization-kubeconfig=" + e.kcfgPath,
		"--controllers=" + strings.Join(e.opts.Controllers, ","),
		"--leader-elect=false",
		"--use-service-account-credentials=false",
		"--service-account-private-key-file=" + e.path("pki", "sa.key"),
		"--root-ca-file=" + e.path("pki", "ca.crt"),
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(e.kcmPort),
		"--cert-dir=" + e.path("kcm-certs"),
		"--profiling=false",
	}
	p, err := startProcess("kube-controller-manager", filepath.Join(e.binDir, "kube-controller-manager"), args, e.logPath("kube-controller-manager"))
	if err != nil {
		return err
	}
	e.mu.Lock()
	e.kcm = p
	e.mu.Unlock()
	// The controller manager serves a self-signed certificate of its own;
	// /healthz carries no secrets, so skipping verification is harmless.
	insecure := &http.Client{Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
	}}
	url := "https://127.0.0.1:" + strconv.Itoa(e.kcmPort) + "/healthz"
	return p.waitReady(ctx, e.opts.StartTimeout, func(ctx context.Context) error {
		body, err := get(ctx, insecure, url)
		if err != nil {
			return err
		}
		if strings.TrimSpace(body) != "ok" {
			return fmt.Errorf("controller manager /healthz: %s", body)
		}
		return nil
	})
}

// apiServerReady requires /readyz, which includes RBAC's bootstrap roles,
// and the default namespace, which a controller loop inside the API server
// creates shortly after it starts serving.
func (e *Env) apiServerReady(ctx context.Context) error {
	body, err := get(ctx, e.client, e.Host()+"/readyz")
	if err != nil {
		return err
	}
	if strings.TrimSpace(body) != "ok" {
		return fmt.Errorf("/readyz: %s", body)
	}
	_, err = get(ctx, e.client, e.Host()+"/api/v1/namespaces/default")
	return err
}

// get fetches url and fails on any status but 200.
func get(ctx context.Context, c *http.Client, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s: %s", url, resp.Status, strings.TrimSpace(string(data)))
	}
	return string(data), nil
}

// freePorts asks the kernel for n distinct free ports on 127.0.0.1. Holding
// all listeners until the end keeps the kernel from handing one out twice.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer func() { _ = l.Close() }()
		addr, ok := l.Addr().(*net.TCPAddr)
		if !ok {
			return nil, fmt.Errorf("unexpected listener address %v", l.Addr())
		}
		ports = append(ports, addr.Port)
	}
	return ports, nil
}

// randomToken returns 32 random bytes, hex-encoded.
func randomToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// kubeconfig renders a single-context kubeconfig. All values are base64 or
// plain URLs, so no YAML quoting is needed.
func kubeconfig(server string, ca, cert, key []byte) string {
	b64 := base64.StdEncoding.EncodeToString
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: testenv
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: testenv-admin
  user:
    client-certificate-data: %s
    client-key-data: %s
contexts:
- name: testenv
  context:
    cluster: testenv
    user: testenv-admin
current-context: testenv
`, server, b64(ca), b64(cert), b64(key))
}
