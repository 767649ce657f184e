package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/installation"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/lscluster"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/render"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/target"
)

// memCluster is a small in-memory API server: objects by URL path, GET,
// POST (create), PATCH (server-side apply: deep-merged over what is there,
// keeping other managers' fields; merge patch: RFC 7386), DELETE. It
// remembers the merge patches it got.
type memCluster struct {
	mu      sync.Mutex
	objs    map[string]map[string]any
	patches []string
	n       int
	// posts creates succeed before every later one fails; with
	// failDelete, deletes fail (a connection lost mid-apply).
	posts      int
	failPosts  bool
	failDelete bool
	// failReconcile fails the patch that starts Landscaper's job.
	failReconcile bool
}

func mergeInto(dst, patch map[string]any, nullDeletes bool) {
	for k, v := range patch {
		if v == nil && nullDeletes {
			delete(dst, k)
			continue
		}
		if pm, ok := v.(map[string]any); ok {
			dm, ok := dst[k].(map[string]any)
			if !ok {
				dm = map[string]any{}
			}
			mergeInto(dm, pm, nullDeletes)
			dst[k] = dm
			continue
		}
		dst[k] = v
	}
}

func (c *memCluster) serve(t *testing.T) string {
	gv := lscluster.GroupVersion.String()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		defer c.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		notFound := func() {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`)
		}
		p := r.URL.Path
		switch p {
		case "/apis/" + gv:
			var res []string
			for _, n := range []string{"installations", "targets", "dataobjects", "contexts", "executions", "deployitems", "componentversionoverwrites"} {
				res = append(res, fmt.Sprintf(`{"name":%q,"namespaced":true,"kind":"X","verbs":["get","list"]}`, n))
			}
			fmt.Fprintf(w, `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":%q,"resources":[%s]}`, gv, strings.Join(res, ","))
			return
		case "/api/v1/namespaces/ls":
			fmt.Fprint(w, `{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"ls","uid":"uid-1"}}`)
			return
		}
		body, _ := io.ReadAll(r.Body)
		serverError := func() {
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"InternalError","message":"connection lost","code":500}`)
		}
		if (r.Method == http.MethodPost && c.failPosts && c.posts <= 0) || (r.Method == http.MethodDelete && c.failDelete) {
			serverError()
			return
		}
		if r.Method == http.MethodPost {
			c.posts--
		}
		if r.Method == http.MethodPatch && c.failReconcile && strings.Contains(string(body), lscluster.OperationAnnotation) {
			serverError()
			return
		}
		cur, exists := c.objs[p]
		switch r.Method {
		case http.MethodGet:
			if !exists {
				if rest, ok := strings.CutPrefix(p, "/apis/"+gv+"/namespaces/ls/"); ok && !strings.Contains(rest, "/") {
					fmt.Fprintf(w, `{"kind":"List","apiVersion":%q,"metadata":{},"items":[]}`, gv)
					return
				}
				notFound()
				return
			}
		case http.MethodPatch:
			var patch map[string]any
			_ = json.Unmarshal(body, &patch)
			if strings.Contains(r.Header.Get("Content-Type"), "apply-patch") {
				if !exists {
					cur = map[string]any{}
				}
				if m, _ := patch["metadata"].(map[string]any); m != nil {
					delete(m, "resourceVersion")
				}
				mergeInto(cur, patch, false)
			} else {
				if !exists {
					notFound()
					return
				}
				c.patches = append(c.patches, string(body))
				if m, _ := patch["metadata"].(map[string]any); m != nil {
					delete(m, "resourceVersion")
					delete(m, "uid")
				}
				mergeInto(cur, patch, true)
			}
		case http.MethodPost:
			_ = json.Unmarshal(body, &cur)
			name, _ := cur["metadata"].(map[string]any)["name"].(string)
			p += "/" + name
		case http.MethodDelete:
			delete(c.objs, p)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Success"}`)
			return
		}
		c.n++
		meta, _ := cur["metadata"].(map[string]any)
		if meta["uid"] == nil {
			meta["uid"] = "uid-" + strconv.Itoa(c.n)
		}
		meta["resourceVersion"] = strconv.Itoa(c.n)
		c.objs[p] = cur
		_ = json.NewEncoder(w).Encode(cur)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// objPath is the URL path of o on the API server.
func objPath(o lscluster.Object) string {
	ref := o.Ref()
	plural := strings.ToLower(o.Kind) + "s"
	if o.Kind == lscluster.KindSecret {
		return "/api/v1/namespaces/" + ref.Namespace + "/secrets/" + o.Name
	}
	return "/apis/" + lscluster.GroupVersion.String() + "/namespaces/" + ref.Namespace + "/" + plural + "/" + o.Name
}

// memInstallations is the installations of a provider whose provider
// target "landscaper" points at mem, loading every blueprint from
// blueprintYAML.
func memInstallations(t *testing.T, mem *memCluster, blueprintYAML string) (*installations, string) {
	t.Helper()
	server := mem.serve(t)
	x, _ := installationsAt(t, server, blueprintYAML)
	return x, server
}

// installationsAt is the installations of a provider whose provider
// target "landscaper" points at the API server at server, loading every
// blueprint as bp from blueprintYAML.
func installationsAt(t *testing.T, server, blueprintYAML string) (x *installations, bp installation.Blueprint) {
	t.Helper()
	kubeconfig := "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: c\n  cluster:\n    server: " + server +
		"\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\nusers:\n- name: u\n  user: {token: t0k3n-abcdef}\n"
	p := newProvider("test")
	x = p.installations
	pt := &providerTargets{known: true, byName: map[string]*deployer.Target{"landscaper": {Type: target.KubernetesClusterType,
		Config: []byte(`{"kubeconfig":` + strconv.Quote(kubeconfig) + `}`)}}}
	x.targets = func() *providerTargets { return pt }
	bp, err := render.Load(t.Context(), render.Source{Filesystem: map[string]string{"blueprint.yaml": blueprintYAML}},
		render.Options{Deployers: p.deployers})
	if err != nil {
		t.Fatal(err)
	}
	x.load = func(context.Context, render.Source) (installation.Blueprint, error) { return bp, nil }
	return x, bp
}

// put stores objs on mem as owner wrote them for the installation app.
func (c *memCluster) put(objs []lscluster.Object, owner string, edit func(o lscluster.Object, body map[string]any)) {
	for _, o := range objs {
		body := map[string]any{}
		b, _ := json.Marshal(o.Body)
		_ = json.Unmarshal(b, &body)
		meta, _ := body["metadata"].(map[string]any)
		meta["annotations"] = map[string]any{lscluster.OwnerAnnotation: owner, lscluster.InstallationAnnotation: "app"}
		meta["uid"] = "uid-" + o.Name
		if edit != nil {
			edit(o, body)
		}
		c.objs[objPath(o)] = body
	}
}
