// Package lstest writes Landscaper objects into a test API server as
// Landscaper's controllers leave them, for the reader's tests
// (internal/lscluster) and the take-over tests through Terraform
// (internal/e2e): the CRDs, objects with their status, and an
// installation's Execution with its DeployItems. No Landscaper controller
// runs in those tests; these are the objects it would have written.
package lstest

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"
)

const group = "landscaper.gardener.cloud"

// GVRs are the resources of the kinds the tests write.
var GVRs = map[string]schema.GroupVersionResource{
	"Namespace":                  {Version: "v1", Resource: "namespaces"},
	"Secret":                     {Version: "v1", Resource: "secrets"},
	"ConfigMap":                  {Version: "v1", Resource: "configmaps"},
	"Installation":               {Group: group, Version: "v1alpha1", Resource: "installations"},
	"Target":                     {Group: group, Version: "v1alpha1", Resource: "targets"},
	"DataObject":                 {Group: group, Version: "v1alpha1", Resource: "dataobjects"},
	"Context":                    {Group: group, Version: "v1alpha1", Resource: "contexts"},
	"Execution":                  {Group: group, Version: "v1alpha1", Resource: "executions"},
	"DeployItem":                 {Group: group, Version: "v1alpha1", Resource: "deployitems"},
	"ComponentVersionOverwrites": {Group: group, Version: "v1alpha1", Resource: "componentversionoverwrites"},
}

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// crdDir holds Landscaper's CRDs, with their origin and licence: the
// reader's testdata.
func crdDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata", "crds")
}

// InstallCRDs creates Landscaper's CRDs that are not there yet and waits
// until each is established.
func InstallCRDs(ctx context.Context, d dynamic.Interface) error {
	files, err := filepath.Glob(filepath.Join(crdDir(), "*.yaml"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no CRDs in %s: %v", crdDir(), err)
	}
	var names []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		var obj map[string]any
		if err := yaml.Unmarshal(data, &obj); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		u := &unstructured.Unstructured{Object: obj}
		names = append(names, u.GetName())
		if _, err := d.Resource(crdGVR).Get(ctx, u.GetName(), metav1.GetOptions{}); err == nil {
			continue // another test of the same binary installed it
		}
		if _, err := d.Resource(crdGVR).Create(ctx, u, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
	}
	for _, name := range names {
		for !established(ctx, d, name) {
			select {
			case <-ctx.Done():
				return fmt.Errorf("CRD %s not established: %w", name, ctx.Err())
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return nil
}

func established(ctx context.Context, d dynamic.Interface, name string) bool {
	u, err := d.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}

// Cluster writes a test's objects; objects that name no namespace go to
// Namespace.
type Cluster struct {
	T         testing.TB
	D         dynamic.Interface
	Namespace string
}

// Write creates the object the YAML describes, then its status, as
// Landscaper's controllers write status through the status subresource.
// ${namespace} is replaced by the namespace, as in the guided tour's
// templates.
func (c *Cluster) Write(text string) *unstructured.Unstructured {
	c.T.Helper()
	text = strings.ReplaceAll(text, "${namespace}", c.Namespace)
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(text), &obj); err != nil {
		c.T.Fatalf("test object: %v\n%s", err, text)
	}
	return c.WriteObject(obj)
}

// WriteObject is Write for an object already decoded.
func (c *Cluster) WriteObject(obj map[string]any) *unstructured.Unstructured {
	c.T.Helper()
	u := &unstructured.Unstructured{Object: obj}
	gvr, ok := GVRs[u.GetKind()]
	if !ok {
		c.T.Fatalf("test object of unknown kind %q", u.GetKind())
	}
	status, hasStatus := obj["status"]
	delete(obj, "status")
	var ri dynamic.ResourceInterface = c.D.Resource(gvr)
	if u.GetKind() != "Namespace" {
		if u.GetNamespace() == "" {
			u.SetNamespace(c.Namespace)
		}
		ri = c.D.Resource(gvr).Namespace(u.GetNamespace())
	}
	created, err := ri.Create(c.T.Context(), u, metav1.CreateOptions{})
	if err != nil {
		c.T.Fatalf("creating %s %s: %v", u.GetKind(), u.GetName(), err)
	}
	if u.GetKind() == "Namespace" {
		// Landscaper's context controller gives every namespace an empty
		// Context "default", which every Installation names in spec.context.
		c.WriteObject(map[string]any{"apiVersion": group + "/v1alpha1", "kind": "Context",
			"metadata": map[string]any{"name": "default", "namespace": u.GetName()}})
	}
	if hasStatus {
		created.Object["status"] = status
		if created, err = ri.UpdateStatus(c.T.Context(), created, metav1.UpdateOptions{}); err != nil {
			c.T.Fatalf("writing the status of %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
	return created
}

// Execution writes the Execution of the installation inst (owned by it),
// Succeeded, and its DeployItems as Landscaper's execution controller and
// its deployers leave them (observed with Landscaper v1.4.0's real
// controllers, internal/e2e's take-over tests): items are deploy item
// templates in YAML (name, type, target, config, and the providerStatus
// the deployer wrote, if any). The Execution holds them gzipped in
// spec.deployItemsCompressed, keeps the reconcile annotation, and lists
// its DeployItems in the deployItemCache when cache. Each DeployItem is
// named DeployItemName(inst, name), labelled with its Execution and name,
// annotated with its deployer type and target, and carries the job and
// the deployer's identity in its status. Finalizers are left out: no
// controller here would remove them. It returns the DeployItem names by
// item name: the value the deployers' managed labels hold.
func (c *Cluster) Execution(inst string, instUID types.UID, cache bool, items ...string) map[string]string {
	c.T.Helper()
	owner := func(kind, name string, uid types.UID) []any {
		return []any{map[string]any{
			"apiVersion": group + "/v1alpha1", "kind": kind,
			"name": name, "uid": string(uid), "controller": true, "blockOwnerDeletion": true,
		}}
	}
	type item struct {
		name, object   string
		spec           map[string]any
		providerStatus any
	}
	var templates, active []any
	var all []item
	objects := map[string]string{}
	for _, body := range items {
		var spec map[string]any
		if err := yaml.Unmarshal([]byte(strings.ReplaceAll(body, "${namespace}", c.Namespace)), &spec); err != nil {
			c.T.Fatalf("deploy item: %v\n%s", err, body)
		}
		name, _ := spec["name"].(string)
		obj := DeployItemName(inst, name)
		objects[name] = obj
		ps := spec["providerStatus"]
		delete(spec, "providerStatus")
		templates = append(templates, spec)
		active = append(active, map[string]any{"specName": name, "objectName": obj})
		itemSpec := map[string]any{"context": "default"}
		for k, v := range spec {
			if k != "name" {
				itemSpec[k] = v
			}
		}
		all = append(all, item{name, obj, itemSpec, ps})
	}
	compressed, err := gzipJSON(templates)
	if err != nil {
		c.T.Fatal(err)
	}
	status := map[string]any{"observedGeneration": 0, "phase": "Succeeded", "jobID": JobID, "jobIDFinished": JobID}
	if cache {
		status["deployItemCache"] = map[string]any{"activeDIs": active}
	}
	exec := c.WriteObject(map[string]any{
		"apiVersion": group + "/v1alpha1", "kind": "Execution",
		"metadata": map[string]any{"name": inst, "ownerReferences": owner("Installation", inst, instUID),
			"annotations": map[string]any{group + "/operation": "reconcile"}},
		"spec":   map[string]any{"context": "default", "deployItemsCompressed": compressed},
		"status": status,
	})
	for _, it := range all {
		typ, _ := it.spec["type"].(string)
		st := map[string]any{"observedGeneration": 1, "phase": "Succeeded", "jobID": JobID, "jobIDFinished": JobID}
		if d, ok := deployers[typ]; ok {
			st["deployer"] = map[string]any{"identity": d + "-testenv", "name": d + "." + group, "version": "0.0.0-dev"}
		}
		if it.providerStatus != nil {
			st["providerStatus"] = it.providerStatus
		}
		targetName := ".noTargetName"
		if t, ok := it.spec["target"].(map[string]any); ok {
			targetName, _ = t["name"].(string)
		}
		c.WriteObject(map[string]any{
			"apiVersion": group + "/v1alpha1", "kind": "DeployItem",
			"metadata": map[string]any{
				"name":         it.object,
				"generateName": inst + "-" + it.name + "-",
				"labels": map[string]any{
					"execution." + group + "/managed-by": inst,
					"execution." + group + "/name":       it.name,
				},
				"annotations": map[string]any{
					"execution." + group + "/dependsOn": "",
					group + "/deployer-type":            typ,
					group + "/deployer-target-name":     targetName,
				},
				"ownerReferences": owner("Execution", inst, exec.GetUID()),
			},
			"spec":   it.spec,
			"status": st,
		})
	}
	return objects
}

// JobID is the job every object Execution writes finished
// (status.jobIDFinished), as TourManifestInstallation's.
const JobID = "5f0e2a43-3c1d-4e6b-9a57-1f2e3d4c5b6a"

// deployers are the deployers' names (<name>.landscaper.gardener.cloud) by
// the deploy item type they serve.
var deployers = map[string]string{
	group + "/kubernetes-manifest": "manifest.deployer",
	group + "/helm":                "helm.deployer",
	group + "/mock":                "mock.deployer",
}

// DeployItemName is the name Execution gives the DeployItem of item in the
// Execution exec: as Landscaper's generateName "<exec>-<item>-" gives it,
// five characters of Kubernetes' random-name alphabet, here derived from
// the names so that tests can expect them.
func DeployItemName(exec, item string) string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	sum := sha256.Sum256([]byte(exec + "/" + item))
	suffix := make([]byte, 5)
	for i := range suffix {
		suffix[i] = alphabet[int(sum[i])%len(alphabet)]
	}
	return exec + "-" + item + "-" + string(suffix)
}

// gzipJSON is v as JSON, gzipped and base64-encoded: the form of an
// Execution's spec.deployItemsCompressed.
func gzipJSON(v any) (string, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(raw); err != nil {
		return "", err
	}
	if err := zw.Close(); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(b.Bytes()), nil
}

// TourManifestInstallation is the guided tour's basics/manifest-deployer
// Installation as Landscaper leaves it after it succeeded: the reconcile
// annotation removed, spec.context defaulted, and the status it wrote;
// Cluster.Write fills in ${namespace}.
const TourManifestInstallation = `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Installation
metadata:
  name: hello-world
  namespace: ${namespace}
spec:
  context: default
  imports:
    targets:
      - name: cluster
        target: my-cluster
  blueprint:
    inline:
      filesystem:
        blueprint.yaml: |
          apiVersion: landscaper.gardener.cloud/v1alpha1
          kind: Blueprint
          jsonSchema: "https://json-schema.org/draft/2019-09/schema"
          imports:
            - name: cluster
              type: target
              targetType: landscaper.gardener.cloud/kubernetes-cluster
          deployExecutions:
            - name: default
              type: GoTemplate
              template: |
                deployItems:
                  - name: default-deploy-item
                    type: landscaper.gardener.cloud/kubernetes-manifest
                    target:
                      import: cluster
                    config:
                      apiVersion: manifest.deployer.landscaper.gardener.cloud/v1alpha2
                      kind: ProviderConfiguration
                      updateStrategy: update
                      manifests:
                        - policy: manage
                          manifest:
                            apiVersion: v1
                            kind: ConfigMap
                            metadata:
                              name: hello-world
                              namespace: example
                            data:
                              testData: hello
status:
  observedGeneration: 1
  phase: Succeeded
  jobID: 5f0e2a43-3c1d-4e6b-9a57-1f2e3d4c5b6a
  jobIDFinished: 5f0e2a43-3c1d-4e6b-9a57-1f2e3d4c5b6a
  subInstCache: {}
  executionRef:
    name: hello-world
    namespace: ${namespace}
`
