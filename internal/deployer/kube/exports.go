package kube

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/target"
)

// ExportError says an export could not be read yet: its object or field
// does not exist, or a referenced object is missing. Landscaper retries
// exports until the deploy item's timeout, so callers check again later.
type ExportError struct {
	Key    string
	Reason string
}

func (e *ExportError) Error() string { return fmt.Sprintf("export %q: %s", e.Key, e.Reason) }

// ReadExports reads every export that names a fromResource from the
// cluster and merges them into one object, each under its key. Exports
// without fromResource are skipped (the helm deployer reads them from its
// values). An export that cannot be read yet is an *ExportError; API
// errors other than not-found are returned as they are.
func ReadExports(ctx context.Context, cl *target.Cluster, exports *Exports) (map[string]any, error) {
	if exports == nil {
		return nil, nil
	}
	var result map[string]any
	for _, e := range exports.Exports {
		if e.FromResource == nil {
			continue
		}
		v, err := readExport(ctx, cl, e)
		if err != nil {
			return nil, err
		}
		c, err := Construct(e.Key, v)
		if err != nil {
			return nil, configError("export %q: %v", e.Key, err)
		}
		result = MergeMaps(result, c)
	}
	return result, nil
}

func readExport(ctx context.Context, cl *target.Cluster, e Export) (any, error) {
	ref := e.FromResource
	obj, err := cl.Get(ctx, ref.GroupVersionKind(), ref.Namespace, ref.Name)
	if err != nil {
		if isNotFound(err) {
			return nil, &ExportError{Key: e.Key, Reason: fmt.Sprintf("%s does not exist", ref)}
		}
		return nil, err
	}
	v, err := GetValue(e.JSONPath, obj.Object)
	if err != nil {
		return nil, &ExportError{Key: e.Key, Reason: fmt.Sprintf("jsonPath %s in %s: %v", e.JSONPath, ref, err)}
	}
	if e.FromObjectReference == nil {
		return v, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, &ExportError{Key: e.Key, Reason: fmt.Sprintf("jsonPath %s in %s selects %T, not an object reference with name and namespace", e.JSONPath, ref, v)}
	}
	name, ok := m["name"].(string)
	if !ok {
		return nil, &ExportError{Key: e.Key, Reason: fmt.Sprintf("jsonPath %s in %s selects a reference without a string name", e.JSONPath, ref)}
	}
	ns := ref.Namespace
	if n, present := m["namespace"]; present {
		if ns, ok = n.(string); !ok {
			return nil, &ExportError{Key: e.Key, Reason: fmt.Sprintf("jsonPath %s in %s selects a reference whose namespace is not a string", e.JSONPath, ref)}
		}
	}
	fo := e.FromObjectReference
	refd := TypedObjectReference{APIVersion: fo.APIVersion, Kind: fo.Kind, Name: name, Namespace: ns}
	obj2, err := cl.Get(ctx, schema.FromAPIVersionAndKind(fo.APIVersion, fo.Kind), ns, name)
	if err != nil {
		if isNotFound(err) {
			return nil, &ExportError{Key: e.Key, Reason: fmt.Sprintf("referenced %s does not exist", refd)}
		}
		return nil, err
	}
	v2, err := GetValue(fo.JSONPath, obj2.Object)
	if err != nil {
		return nil, &ExportError{Key: e.Key, Reason: fmt.Sprintf("jsonPath %s in %s: %v", fo.JSONPath, refd, err)}
	}
	return v2, nil
}

func isNotFound(err error) bool { return apierrors.IsNotFound(err) }
