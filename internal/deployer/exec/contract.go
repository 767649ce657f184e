package exec

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
)

// resolvedTarget is the file behind TARGET_PATH: Landscaper's
// ResolvedTarget as its container deployer marshals it, the Target object
// plus its config as a JSON string in "content".
type resolvedTarget struct {
	Target  targetObject `json:"target"`
	Content string       `json:"content"`
}

type targetObject struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Metadata   targetMetadata `json:"metadata"`
	Spec       targetSpec     `json:"spec"`
}

type targetMetadata struct {
	Name string `json:"name"`
	// CreationTimestamp is always null in Landscaper's file for an object
	// that was never stored; it is kept for byte-compatible readers.
	CreationTimestamp *string `json:"creationTimestamp"`
}

type targetSpec struct {
	Type   string          `json:"type"`
	Config json.RawMessage `json:"config,omitempty"`
}

// targetFile renders t as Landscaper writes it for a container.
func targetFile(t *deployer.Target) ([]byte, error) {
	cfg := t.Config
	if len(cfg) == 0 {
		cfg = json.RawMessage("{}")
	}
	return json.Marshal(resolvedTarget{
		Target: targetObject{
			APIVersion: "landscaper.gardener.cloud/v1alpha1",
			Kind:       "Target",
			Metadata:   targetMetadata{Name: t.Name},
			Spec:       targetSpec{Type: t.Type, Config: cfg},
		},
		Content: string(cfg),
	})
}

// writeContract writes the parts of the container contract the request
// carries into dir and returns their variables: TARGET_PATH (the target),
// COMPONENT_DESCRIPTOR_PATH (the resolved component descriptor) and
// CONTENT_PATH (the blueprint's files). Parts the request lacks are left
// out, so a command can test for the variable.
func writeContract(dir string, req deployer.Request) ([]string, error) {
	var env []string
	if req.Target != nil {
		data, err := targetFile(req.Target)
		if err != nil {
			return nil, internalProblem("cannot render the target file: %v", err)
		}
		p := filepath.Join(dir, "targets", "target.json")
		if err := writeFile(p, data); err != nil {
			return nil, internalProblem("cannot write the target file: %v", err)
		}
		env = append(env, "TARGET_PATH="+p)
	}
	if req.ComponentDescriptor != nil {
		p := filepath.Join(dir, "component_descriptor.json")
		if err := writeFile(p, req.ComponentDescriptor); err != nil {
			return nil, internalProblem("cannot write the component descriptor: %v", err)
		}
		env = append(env, "COMPONENT_DESCRIPTOR_PATH="+p)
	}
	if req.Content != nil {
		p := filepath.Join(dir, "content")
		if err := os.CopyFS(p, req.Content); err != nil {
			return nil, internalProblem("cannot copy the blueprint's files: %v", err)
		}
		env = append(env, "CONTENT_PATH="+p)
	}
	return env, nil
}

func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}
