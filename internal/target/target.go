// Package target knows Landscaper's target types: what their configs hold
// and how they are checked before anything runs.
package target

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"sigs.k8s.io/yaml"
)

// KubernetesClusterType is Landscaper's target type of a Kubernetes cluster.
const KubernetesClusterType = "landscaper.gardener.cloud/kubernetes-cluster"

// KubernetesClusterConfig is the config of a kubernetes-cluster target, in
// Landscaper's format: the kubeconfig as YAML text.
type KubernetesClusterConfig struct {
	Kubeconfig string `json:"kubeconfig"`
}

// kubeconfigShape is as much of a kubeconfig as a plan-time check needs.
type kubeconfigShape struct {
	Clusters []struct {
		Name string `json:"name"`
	} `json:"clusters"`
	Contexts []struct {
		Name string `json:"name"`
	} `json:"contexts"`
}

// CheckKubernetesCluster validates a kubernetes-cluster target's config at
// plan time. Errors never quote the config: it holds credentials.
func CheckKubernetesCluster(config json.RawMessage) error {
	var c KubernetesClusterConfig
	dec := json.NewDecoder(bytes.NewReader(config))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) && ute.Field != "" {
			return fmt.Errorf("%s must be a string holding the kubeconfig as YAML text", ute.Field)
		}
		return errors.New(`the config must be an object with one field, "kubeconfig" (the kubeconfig as YAML text)`)
	}
	if c.Kubeconfig == "" {
		return errors.New(`the config has no "kubeconfig"`)
	}
	var kc kubeconfigShape
	if err := yaml.Unmarshal([]byte(c.Kubeconfig), &kc); err != nil {
		return errors.New("kubeconfig is not YAML")
	}
	if len(kc.Clusters) == 0 {
		return errors.New("kubeconfig names no cluster")
	}
	return nil
}
