// Package moved turns the state of another Terraform provider's resource,
// as a `moved` block hands it to landscaper_execution (Terraform's
// MoveResourceState), into the one deploy item that takes over what the
// resource deployed: helm_release (hashicorp/helm 2.x and 3.x) into a helm
// item, kubernetes_manifest (hashicorp/kubernetes 2.x) and kubectl_manifest
// (alekc/kubectl, gavinbunney/kubectl) into a kubernetes-manifest item.
//
// Nothing is dropped silently: an attribute whose value cannot be carried
// over refuses the move, naming it; one that is carried over but needs the
// user's attention (credentials, values that were sensitive) warns.
// Attributes that only shaped how the source provider planned or talked to
// the cluster, not what is deployed, are left behind (see the guide
// "Moving from the kubernetes, helm and kubectl providers").
package moved

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
)

// Item is what one moved resource becomes: the execution's name, its one
// deploy item, and what that item's first run adopts.
type Item struct {
	// Execution is the name the execution gets: the release's or the
	// object's, when it is a valid one.
	Execution string
	// Name is the deploy item's key: ItemRelease or ItemManifest.
	Name string
	// Type is the deployer type, by its short alias.
	Type string
	// Config is the deployer's configuration, as JSON with sorted keys.
	Config json.RawMessage
	// Adopt is what the first run takes over.
	Adopt *deployer.Adoption
	// Warnings concern attributes carried over that need attention.
	Warnings []Problem
}

// The deploy item keys of moved resources.
const (
	ItemRelease  = "release"
	ItemManifest = "manifest"
)

// Problem is about one attribute of the moved resource's state.
type Problem struct {
	// Attribute is its path in the source's schema, as a user writes it
	// (postrender, wait_for.field).
	Attribute string
	Detail    string
}

// Refused is the error of a state that cannot be moved: every attribute
// that cannot be carried over.
type Refused struct {
	Source   string
	Problems []Problem
}

func (r *Refused) Error() string {
	var parts []string
	for _, p := range r.Problems {
		parts = append(parts, p.Attribute+": "+p.Detail)
	}
	return fmt.Sprintf("%s cannot be moved: %s", r.Source, strings.Join(parts, "; "))
}

// source is a resource type a move can come from.
type source struct {
	// providers are the provider source addresses (namespace/type) that
	// define the type; any registry host.
	providers []string
	typeName  string
	// maxVersion is the newest schema version this package reads.
	maxVersion int64
	convert    func(s *state) *Item
}

var sources = []source{
	{providers: []string{"hashicorp/helm"}, typeName: "helm_release", maxVersion: 2, convert: helmRelease},
	{providers: []string{"hashicorp/kubernetes"}, typeName: "kubernetes_manifest", maxVersion: 1, convert: kubernetesManifest},
	{providers: []string{"alekc/kubectl", "gavinbunney/kubectl"}, typeName: "kubectl_manifest", maxVersion: 1, convert: kubectlManifest},
}

// Sources lists what a move can come from, as "type (provider, ...)".
func Sources() string {
	var out []string
	for _, s := range sources {
		out = append(out, fmt.Sprintf("%s (%s)", s.typeName, strings.Join(s.providers, ", ")))
	}
	return strings.Join(out, ", ")
}

// Convert reads the state of a resource of type typeName of the provider
// providerAddress (registry.terraform.io/hashicorp/helm), as Terraform
// stores it (JSON of schema version version). A state that cannot be moved
// is a *Refused error; a source this package does not know, another error.
func Convert(providerAddress, typeName string, version int64, stateJSON []byte) (*Item, error) {
	provider := providerAddress
	if parts := strings.Split(providerAddress, "/"); len(parts) >= 2 {
		provider = strings.Join(parts[len(parts)-2:], "/")
	}
	for _, src := range sources {
		if src.typeName != typeName || !slices.Contains(src.providers, provider) {
			continue
		}
		if version > src.maxVersion || version < 0 {
			return nil, fmt.Errorf("the state of %s has schema version %d; this provider reads versions up to %d of %s",
				typeName, version, src.maxVersion, provider)
		}
		s, err := parseState(typeName, stateJSON)
		if err != nil {
			return nil, err
		}
		it := src.convert(s)
		if len(s.refused) > 0 {
			return nil, &Refused{Source: typeName, Problems: s.refused}
		}
		it.Warnings = s.warnings
		if core.ValidName(it.Execution) != nil {
			it.Execution = "moved"
		}
		return it, nil
	}
	return nil, fmt.Errorf("landscaper_execution can be moved to from %s; not from %s of %s", Sources(), typeName, providerAddress)
}

// state is a source's attributes being read, and what reading them found.
type state struct {
	typeName string
	attrs    map[string]json.RawMessage
	refused  []Problem
	warnings []Problem
}

func parseState(typeName string, raw []byte) (*state, error) {
	s := &state{typeName: typeName}
	if err := json.Unmarshal(raw, &s.attrs); err != nil || s.attrs == nil {
		return nil, fmt.Errorf("the state of %s is not a JSON object: %v", typeName, err)
	}
	return s, nil
}

func (s *state) refuse(attr, format string, args ...any) {
	s.refused = append(s.refused, Problem{Attribute: attr, Detail: fmt.Sprintf(format, args...)})
}

func (s *state) warn(attr, format string, args ...any) {
	s.warnings = append(s.warnings, Problem{Attribute: attr, Detail: fmt.Sprintf(format, args...)})
}

// str reads a string attribute; null and missing are "".
func (s *state) str(name string) string {
	var v string
	if raw, ok := s.attrs[name]; ok {
		if err := json.Unmarshal(raw, &v); err != nil {
			s.refuse(name, "not a string in the state")
		}
	}
	return v
}

// boolean reads a bool attribute; null and missing are def.
func (s *state) boolean(name string, def bool) bool {
	var v *bool
	if raw, ok := s.attrs[name]; ok {
		if err := json.Unmarshal(raw, &v); err != nil {
			s.refuse(name, "not a bool in the state")
		}
	}
	if v == nil {
		return def
	}
	return *v
}

// number reads a number attribute; null and missing are def.
func (s *state) number(name string, def int64) int64 {
	var v *int64
	if raw, ok := s.attrs[name]; ok {
		if err := json.Unmarshal(raw, &v); err != nil {
			s.refuse(name, "not a whole number in the state")
		}
	}
	if v == nil {
		return def
	}
	return *v
}

// strings reads a list of strings; null and missing are nil.
func (s *state) strings(name string) []string {
	var v []string
	if raw, ok := s.attrs[name]; ok {
		if err := json.Unmarshal(raw, &v); err != nil {
			s.refuse(name, "not a list of strings in the state")
		}
	}
	return v
}

// objects reads a list or set of objects (SDKv2 blocks, framework list
// attributes) or a single object (framework single nested attributes) as
// a list; null and missing are nil.
func (s *state) objects(name string) []map[string]json.RawMessage {
	raw, ok := s.attrs[name]
	if !ok || string(raw) == "null" {
		return nil
	}
	var list []map[string]json.RawMessage
	if json.Unmarshal(raw, &list) == nil {
		return list
	}
	var one map[string]json.RawMessage
	if err := json.Unmarshal(raw, &one); err != nil {
		s.refuse(name, "not an object or a list of objects in the state")
		return nil
	}
	return []map[string]json.RawMessage{one}
}

// refuseSet refuses attributes whose value differs from the default the
// source provider gives them: what they did cannot be carried over.
func (s *state) refuseSet(why map[string]string) {
	for _, name := range slices.Sorted(maps.Keys(why)) {
		raw, ok := s.attrs[name]
		if !ok || isDefault(raw) {
			continue
		}
		s.refuse(name, "%s", why[name])
	}
}

// isDefault reports whether a value is null, false, 0, "" or empty.
func isDefault(raw json.RawMessage) bool {
	switch strings.TrimSpace(string(raw)) {
	case "null", "false", "0", `""`, "[]", "{}":
		return true
	}
	return false
}

// marshal writes a config as JSON with sorted keys, as jsonencode does.
func marshal(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only maps, slices and JSON values
	}
	return b
}
