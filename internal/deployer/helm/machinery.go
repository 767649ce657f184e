package helm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"k8s.io/client-go/rest"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/kube"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/target"
)

// Machinery is the Kube the provider uses: the kubernetes-manifest
// deployer's machinery (internal/deployer/kube) on the shared, cached
// cluster clients of internal/target, so helm and manifest items on one
// target share one client.
type Machinery struct {
	// clusters maps the rest.Config of a target (SharedRESTConfig hands
	// out one per target) to its cluster.
	clusters sync.Map
}

var _ Kube = (*Machinery)(nil)

// SharedRESTConfig is the RESTConfig option that goes with Machinery: the
// cached cluster client's config of the target.
func SharedRESTConfig(t *deployer.Target) (*rest.Config, error) {
	cl, err := target.ClusterFor(t.Config)
	if err != nil {
		return nil, err
	}
	return cl.Config, nil
}

func (m *Machinery) cluster(cfg *rest.Config) (*target.Cluster, error) {
	if cl, ok := m.clusters.Load(cfg); ok {
		if c, ok := cl.(*target.Cluster); ok {
			return c, nil
		}
	}
	cl, err := target.NewClusterForConfig(cfg)
	if err != nil {
		return nil, core.Transient("ClusterClient", err.Error())
	}
	m.clusters.Store(cfg, cl)
	return cl, nil
}

// convert re-decodes a value into the kube package's type of the same
// JSON shape; Landscaper's formats are the contract both sides share.
func convert[T any](v any) (T, error) {
	var out T
	raw, err := json.Marshal(v)
	if err != nil {
		return out, err
	}
	if len(raw) == 0 || string(raw) == "null" {
		return out, nil
	}
	return out, json.Unmarshal(raw, &out)
}

func decodeRaw[T any](raw json.RawMessage) (T, error) {
	var out T
	if len(raw) == 0 || string(raw) == "null" {
		return out, nil
	}
	return out, json.Unmarshal(raw, &out)
}

func objectExports(exports []Export) (*kube.Exports, error) {
	ks, err := convert[[]kube.Export](exports)
	if err != nil {
		return nil, err
	}
	return &kube.Exports{Exports: ks}, nil
}

// Validate checks readinessChecks, deletion groups and exports as the
// manifest deployer checks them.
func (m *Machinery) Validate(readinessChecks, deletionGroups, deletionGroupsDuringUpdate json.RawMessage, exports []Export) error {
	var problems []string
	rc, err := decodeRaw[kube.ReadinessCheckConfiguration](readinessChecks)
	if err != nil {
		problems = append(problems, "readinessChecks: "+err.Error())
	} else {
		problems = append(problems, kube.ValidateReadinessChecks("readinessChecks", rc)...)
	}
	for name, raw := range map[string]json.RawMessage{"deletionGroups": deletionGroups, "deletionGroupsDuringUpdate": deletionGroupsDuringUpdate} {
		groups, err := decodeRaw[[]kube.DeletionGroupDefinition](raw)
		if err != nil {
			problems = append(problems, name+": "+err.Error())
			continue
		}
		problems = append(problems, kube.ValidateDeletionGroups(name, groups)...)
	}
	var fromObjects []Export
	for _, e := range exports {
		if len(e.FromResource) > 0 {
			fromObjects = append(fromObjects, e)
		}
	}
	if ex, err := objectExports(fromObjects); err != nil {
		problems = append(problems, "exports: "+err.Error())
	} else if len(fromObjects) > 0 {
		problems = append(problems, kube.ValidateExports("exports", ex)...)
	}
	if len(problems) > 0 {
		return core.ConfigurationProblem("%s", strings.Join(problems, "; "))
	}
	return nil
}

// Apply applies the rendered objects with the manifest deployer's order,
// strategies and policies, and deletes what the previous apply had and
// this one has not.
func (m *Machinery) Apply(ctx context.Context, cfg *rest.Config, req ApplyRequest) ([]ManagedResource, error) {
	cl, err := m.cluster(cfg)
	if err != nil {
		return nil, err
	}
	manifests := make([]kube.Manifest, len(req.Objects))
	for i, o := range req.Objects {
		raw, err := json.Marshal(o.Object)
		if err != nil {
			return nil, core.ConfigurationProblem("rendered object %s: %v", o.GetName(), err)
		}
		manifests[i] = kube.Manifest{Policy: kube.Policy(req.Policies[i]), Manifest: raw}
	}
	previous, err := convert[kube.ManagedResourceStatusList](req.Previous)
	if err != nil {
		return nil, core.ConfigurationProblem("previous objects: %v", err)
	}
	groups, err := decodeRaw[[]kube.DeletionGroupDefinition](req.DeletionGroupsDuringUpdate)
	if err != nil {
		return nil, core.ConfigurationProblem("deletionGroupsDuringUpdate: %v", err)
	}
	applied, err := kube.Apply(ctx, cl, kube.ApplyOptions{
		ManagedLabel: ManagedDeployItemLabel, Owner: req.Labels[ManagedDeployItemLabel],
		UpdateStrategy: kube.UpdateStrategy(req.UpdateStrategy), DefaultNamespace: req.DefaultNamespace,
		DeletionGroupsDuringUpdate: groups,
	}, manifests, previous)
	if applied == nil {
		return nil, err
	}
	managed, cerr := convert[[]ManagedResource](applied.Managed)
	if cerr != nil && err == nil {
		err = core.Terminal("InternalProblem", "the applied objects cannot be recorded: "+cerr.Error(), core.CodeInternalProblem)
	}
	return managed, err
}

// Ready runs the default and custom readiness checks once; what is not
// ready yet is a pending text, not an error.
func (m *Machinery) Ready(ctx context.Context, cfg *rest.Config, readinessChecks json.RawMessage, managed []ManagedResource, failOnMissing bool) (string, error) {
	cl, err := m.cluster(cfg)
	if err != nil {
		return "", err
	}
	rc, err := decodeRaw[kube.ReadinessCheckConfiguration](readinessChecks)
	if err != nil {
		return "", core.ConfigurationProblem("readinessChecks: %v", err)
	}
	list, err := convert[kube.ManagedResourceStatusList](managed)
	if err != nil {
		return "", core.ConfigurationProblem("managed objects: %v", err)
	}
	err = kube.CheckReadiness(ctx, cl, rc, list, failOnMissing)
	var nr *kube.NotReadyError
	if errors.As(err, &nr) {
		return nr.Error(), nil
	}
	return "", err
}

// Export reads the exports that name an object; one not readable yet is
// a pending text, not an error.
func (m *Machinery) Export(ctx context.Context, cfg *rest.Config, exports []Export) (map[string]any, string, error) {
	cl, err := m.cluster(cfg)
	if err != nil {
		return nil, "", err
	}
	ex, err := objectExports(exports)
	if err != nil {
		return nil, "", core.ConfigurationProblem("exports: %v", err)
	}
	vals, err := kube.ReadExports(ctx, cl, ex)
	var ee *kube.ExportError
	if errors.As(err, &ee) {
		return nil, ee.Error(), nil
	}
	return vals, "", err
}

// Delete deletes the objects in deletionGroups' order; while some remain,
// the answer is a pending text.
func (m *Machinery) Delete(ctx context.Context, cfg *rest.Config, managed []ManagedResource, deletionGroups json.RawMessage) (string, error) {
	cl, err := m.cluster(cfg)
	if err != nil {
		return "", err
	}
	groups, err := decodeRaw[[]kube.DeletionGroupDefinition](deletionGroups)
	if err != nil {
		return "", core.ConfigurationProblem("deletionGroups: %v", err)
	}
	list, err := convert[kube.ManagedResourceStatusList](managed)
	if err != nil {
		return "", core.ConfigurationProblem("managed objects: %v", err)
	}
	remaining, err := kube.DeleteManaged(ctx, cl, kube.DeleteOptions{ManagedLabel: ManagedDeployItemLabel, Groups: groups}, list)
	if err != nil {
		return "", err
	}
	if len(remaining) > 0 {
		r := remaining[0].Resource
		return fmt.Sprintf("%d objects are still being deleted, %s %s/%s among them", len(remaining), r.Kind, r.Namespace, r.Name), nil
	}
	return "", nil
}
