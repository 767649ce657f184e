// Package installation runs Landscaper's installation tree in-process: an
// installation renders its blueprint into deploy items (its execution) and
// sub-installations, runs the execution through the engine while its
// sub-installations run in the order their data flow dictates, and
// collects its exports once everything under it succeeded.
//
// The tree is ignorant of blueprint formats: a Blueprint renders a node
// and computes its exports (blueprint.go adapts Landscaper's blueprints),
// so the tree's semantics are testable with fake blueprints. It knows
// nothing about Terraform.
package installation

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"slices"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
)

// Imports are what an installation imports, by import name.
type Imports struct {
	Data        map[string]any                         `json:"data,omitempty"`
	Targets     map[string]*deployer.Target            `json:"targets,omitempty"`
	TargetLists map[string][]*deployer.Target          `json:"targetLists,omitempty"`
	TargetMaps  map[string]map[string]*deployer.Target `json:"targetMaps,omitempty"`
	// Sealed names the data imports whose values are secrets kept nowhere
	// (or were derived from such secrets), each with what stands for its
	// value wherever the tree keeps something of its imports: a hash of
	// the imports covers the stand-in, not the value, so a stored hash
	// says nothing about the secret. The stand-in changes when the user
	// says the secret did (a version). Sub-installations inherit the mark
	// for what they import of sealed values (Exports.Sealed).
	Sealed map[string]string `json:"-"`
}

// Hash identifies the imports. JSON encoding sorts map keys, so equal
// imports hash equally. A sealed value counts by its stand-in.
func (i Imports) Hash() string {
	if len(i.Sealed) > 0 {
		data := maps.Clone(i.Data)
		for n, standin := range i.Sealed {
			if _, ok := data[n]; ok {
				data[n] = map[string]string{"sealed": standin}
			}
		}
		i.Data = data
	}
	b, _ := json.Marshal(i)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Blueprint is a loaded blueprint, as the tree needs it.
type Blueprint interface {
	// Digest identifies the blueprint's content (its files, and the
	// component content it reads), so an edit makes the node run again.
	Digest() string
	// Render validates the imports and renders the node: import
	// executions, deploy executions and sub-installation templates.
	Render(ctx context.Context, in Input) (*Rendered, error)
	// Exports runs the export executions over what the node's execution
	// and sub-installations exported, and validates the result.
	Exports(ctx context.Context, in Input, values ExportValues) (Exports, error)
}

// Input is what a node is rendered from.
type Input struct {
	// Path names the node in the tree: "" for the root, "a/b" below.
	Path    string
	Imports Imports
	// State is the template state the node's executions left last time,
	// by execution kind and name.
	State map[string][]byte
	// SkipItems asks to render no deploy execution (Rendered.Items stays
	// empty): a masking shadow that needs only the node's
	// sub-installations and exports. A Blueprint may render them anyway.
	SkipItems bool
}

// Rendered is a rendered node.
type Rendered struct {
	// Items are the deploy items of the node's execution.
	Items map[string]engine.ItemSpec
	// Subs are the sub-installations, in the blueprint's order.
	Subs []Sub
	// State is the template state to keep for the next run.
	State map[string][]byte
	// Warnings are plan-time warnings (deployer config fields nobody
	// knows, say); they do not stop anything.
	Warnings []string
	// Resources serves the node's component resources to its deploy
	// items (a helm chart given as resourceRef), or is nil.
	Resources deployer.ResourceResolver
	// Defaults are the data imports that were not given and took their
	// declared default. Landscaper writes them into the installation's
	// context as it writes given ones, so sub-installations import them by
	// dataRef and export executions see them in .values.dataobjects.
	Defaults map[string]any
}

// Sub is a sub-installation as its parent's blueprint declares it: which
// blueprint it runs, and how its imports and exports map to data objects
// and targets in the parent's context (the parent's imports and the
// exports of its siblings).
type Sub struct {
	Name      string
	Blueprint Blueprint
	// DataImports maps the sub's import names to data object names.
	DataImports map[string]string
	// TargetImports maps the sub's import names to target names. A target
	// name is a target the parent imports or a sibling exports, or, as in
	// Landscaper, an element of a target list or map the parent imports:
	// "list[0]", "map[key]".
	TargetImports map[string]string
	// TargetListImports maps the sub's import names to lists of target
	// names, or (TargetListRefs) to a target list import of the parent.
	TargetListImports map[string][]string
	TargetListRefs    map[string]string
	// TargetMapRefs maps the sub's import names to target map imports of
	// the parent; TargetMapImports composes target maps, key to target
	// name.
	TargetMapRefs    map[string]string
	TargetMapImports map[string]map[string]string
	// MapImports evaluates the template's importDataMappings over what
	// the sub imports otherwise; its results are data imports, replacing
	// any of the same name. Nil when there are none.
	MapImports func(imports Imports) (map[string]any, error)
	// MappingsSealed, when set, marks every value MapImports returns as
	// derived from a sealed value, standing for it (see Imports.Sealed):
	// the mappings themselves were rendered from one.
	MappingsSealed string
	// Template and ImportMappings are the sub's template as the parent
	// rendered it (JSON), without its importDataMappings and those alone,
	// so that a rendering of the parent from stand-ins tells what a
	// secret decided of the sub (package atrest). Nil when the sub was
	// not rendered from a template.
	Template, ImportMappings []byte
	// DataExports maps the sub's export names to data object names in
	// the parent's context; TargetExports does so for targets.
	DataExports   map[string]string
	TargetExports map[string]string
	// MapExports evaluates exportDataMappings over the sub's exports.
	MapExports func(exports map[string]any) (map[string]any, error)
}

// ExportValues is what export executions see of the node's children.
type ExportValues struct {
	// DeployItems holds the exports of the node's deploy items by name.
	DeployItems map[string]any
	// DataObjects and Targets hold every data object and target in the
	// node's context, by name: its imports and what its sub-installations
	// exported.
	DataObjects map[string]any
	Targets     map[string]*deployer.Target
	// Sealed marks the data objects whose values are sealed (see
	// Imports.Sealed), with their stand-ins.
	Sealed map[string]string
}

// Exports are a node's exports by export name.
type Exports struct {
	Data    map[string]any              `json:"data,omitempty"`
	Targets map[string]*deployer.Target `json:"targets,omitempty"`
	// Sealed names the data exports derived from sealed values (see
	// Imports.Sealed), with their stand-ins: who imports them imports
	// sealed values. Set by a Blueprint that tells; names only.
	Sealed map[string]string `json:"sealed,omitempty"`
}

// Status is what is known about one installation of the tree. Only the
// tree's runner writes it; the engine writes the execution's part.
type Status struct {
	Phase         core.Phase  `json:"phase,omitempty"`
	JobID         string      `json:"jobID,omitempty"`
	JobIDFinished string      `json:"jobIDFinished,omitempty"`
	LastError     *core.Error `json:"lastError,omitempty"`
	// InputHash covers the imports and the blueprint digest of the last
	// run that succeeded; a change makes the node run again.
	InputHash string `json:"inputHash,omitempty"`
	// ReconcileTrigger is the trigger of the last run that succeeded.
	ReconcileTrigger string `json:"reconcileTrigger,omitempty"`
	// ImportsHash is the hash of the imports of the last run.
	ImportsHash string  `json:"importsHash,omitempty"`
	Exports     Exports `json:"exports"`
	// SensitiveExports names the data exports a secret influenced (see
	// RenderShadow); they are shown only where secrets may be.
	SensitiveExports []string           `json:"sensitiveExports,omitempty"`
	State            map[string][]byte  `json:"state,omitempty"`
	Execution        engine.Status      `json:"execution"`
	Subs             map[string]*Status `json:"subs,omitempty"`
	// DependsOn lists the siblings this sub-installation imports from,
	// so deletion can run in reverse order without the blueprint.
	DependsOn []string `json:"dependsOn,omitempty"`
	// Rollouts are the rollouts of the node's sub-installation groups
	// (see decideSubs), by group name.
	Rollouts map[string]*SubRollout `json:"rollouts,omitempty"`
	// FailedIn says, for a node whose LastError is what its blueprint
	// said and not a summary of its items' and sub-installations'
	// errors, in which step it failed. A template's message may quote
	// what it made of a secret: masking compares it with the shadows'.
	// Set by the job that failed; not stored.
	FailedIn FailedIn `json:"-"`
}

// FailedIn names a step of a node's own work.
type FailedIn string

// Steps a node's blueprint can fail in.
const (
	FailedInRender  FailedIn = "render"
	FailedInImports FailedIn = "imports"
	FailedInExports FailedIn = "exports"
)

// Succeeded reports whether the node's last job ran to its end with success.
func (s *Status) Succeeded() bool {
	return s != nil && s.Phase == core.PhaseSucceeded && s.JobID == s.JobIDFinished
}

// Clone returns a deep enough copy for a run to mutate.
func (s *Status) Clone() *Status {
	if s == nil {
		return nil
	}
	c := *s
	c.Execution = s.Execution.Clone()
	c.State = maps.Clone(s.State)
	c.DependsOn = slices.Clone(s.DependsOn)
	c.SensitiveExports = slices.Clone(s.SensitiveExports)
	c.Subs = make(map[string]*Status, len(s.Subs))
	for n, sub := range s.Subs {
		c.Subs[n] = sub.Clone()
	}
	if s.Rollouts != nil {
		c.Rollouts = make(map[string]*SubRollout, len(s.Rollouts))
		for n, r := range s.Rollouts {
			c.Rollouts[n] = r.clone()
		}
	}
	return &c
}

// Walk calls f for the node and every node below it, parents first, with
// each node's path.
func (s *Status) Walk(f func(path string, st *Status)) {
	s.walk("", f)
}

func (s *Status) walk(path string, f func(string, *Status)) {
	if s == nil {
		return
	}
	f(path, s)
	for _, n := range slices.Sorted(maps.Keys(s.Subs)) {
		s.Subs[n].walk(Join(path, n), f)
	}
}

// ItemSpecs are the specs of the items of the node and every node below
// it, by "<path>/<item>".
func (s *Status) ItemSpecs() map[string]engine.ItemSpec {
	specs := map[string]engine.ItemSpec{}
	s.Walk(func(p string, n *Status) {
		for name, is := range n.Execution.Items {
			specs[Join(p, name)] = is.Spec
		}
	})
	return specs
}

// ByPath indexes the node and every node below it by path; empty for nil.
func (s *Status) ByPath() map[string]*Status {
	out := map[string]*Status{}
	s.Walk(func(path string, n *Status) { out[path] = n })
	return out
}

// Join appends a child's name to a node path.
func Join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "/" + name
}
