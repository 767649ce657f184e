// Package movedtest holds the states of other providers' resources that a
// `moved` block brings into landscaper_execution, as the real providers
// wrote them (testdata/README.md says where each comes from), for the
// tests of the conversion, of the protocol and of the CLI.
package movedtest

import (
	"embed"
	"encoding/json"
	"fmt"
	"testing"
)

//go:embed testdata/*.tfstate
var states embed.FS

// The recorded states, one resource each (the file names say which
// provider and version wrote them).
const (
	Helm2       = "helm-2.17.0.tfstate"
	Helm3       = "helm-3.1.2.tfstate"
	Kubernetes  = "kubernetes-2.38.0.tfstate"
	Alekc       = "alekc-kubectl-2.4.1.tfstate"
	Gavinbunney = "gavinbunney-kubectl-1.19.0.tfstate"
)

// All lists every recorded state.
var All = []string{Helm2, Helm3, Kubernetes, Alekc, Gavinbunney}

// Recorded is the one managed resource of a recorded state.
type Recorded struct {
	// Provider is the provider's address as the state names it
	// (registry.terraform.io/hashicorp/helm).
	Provider string
	Type     string
	Name     string
	// SchemaVersion and Attributes are the instance's, as Terraform
	// stores them and hands them to MoveResourceState.
	SchemaVersion int64
	Attributes    map[string]json.RawMessage
	// SensitiveAttributes are as the state records them.
	SensitiveAttributes json.RawMessage
}

// Load reads a recorded state.
func Load(tb testing.TB, file string) Recorded {
	tb.Helper()
	raw, err := states.ReadFile("testdata/" + file)
	if err != nil {
		tb.Fatal(err)
	}
	var st struct {
		Resources []struct {
			Mode, Type, Name, Provider string
			Instances                  []struct {
				SchemaVersion       int64                      `json:"schema_version"`
				Attributes          map[string]json.RawMessage `json:"attributes"`
				SensitiveAttributes json.RawMessage            `json:"sensitive_attributes"`
			}
		}
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		tb.Fatal(err)
	}
	for _, r := range st.Resources {
		if r.Mode != "managed" || len(r.Instances) != 1 {
			continue
		}
		// provider["registry.terraform.io/hashicorp/helm"]
		var addr string
		if _, err := fmt.Sscanf(r.Provider, "provider[%q]", &addr); err != nil {
			tb.Fatalf("%s: provider %s: %v", file, r.Provider, err)
		}
		in := r.Instances[0]
		return Recorded{Provider: addr, Type: r.Type, Name: r.Name, SchemaVersion: in.SchemaVersion,
			Attributes: in.Attributes, SensitiveAttributes: in.SensitiveAttributes}
	}
	tb.Fatalf("%s holds no managed resource", file)
	return Recorded{}
}

// JSON is the attributes as Terraform hands them to MoveResourceState.
func (r Recorded) JSON(tb testing.TB) []byte {
	tb.Helper()
	b, err := json.Marshal(r.Attributes)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// With returns a copy with the attribute name set to value (any JSON
// value), to derive the states a test needs.
func (r Recorded) With(tb testing.TB, name string, value any) Recorded {
	tb.Helper()
	b, err := json.Marshal(value)
	if err != nil {
		tb.Fatal(err)
	}
	out := r
	out.Attributes = make(map[string]json.RawMessage, len(r.Attributes))
	for k, v := range r.Attributes {
		out.Attributes[k] = v
	}
	out.Attributes[name] = b
	return out
}

// StateFile is a Terraform state (format 4) holding only this resource,
// at the address <Type>.<Name>, to start a workspace from.
func (r Recorded) StateFile(tb testing.TB) []byte {
	tb.Helper()
	b, err := json.MarshalIndent(map[string]any{
		"version": 4, "terraform_version": "1.11.4", "serial": 1,
		"lineage": "5f1b3e0a-6d1c-4e8e-9a4b-4d1f2c3b5a60", "outputs": map[string]any{},
		"resources": []any{map[string]any{
			"mode": "managed", "type": r.Type, "name": r.Name,
			"provider": fmt.Sprintf("provider[%q]", r.Provider),
			"instances": []any{map[string]any{
				"schema_version": r.SchemaVersion, "attributes": r.Attributes,
				"sensitive_attributes": r.SensitiveAttributes,
			}},
		}},
		"check_results": nil,
	}, "", "  ")
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
