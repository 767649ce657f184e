// Package render turns Landscaper blueprints into installation nodes: it
// loads a blueprint (from a directory, inline files, or a resource of a
// component), validates imports against the blueprint's declarations,
// renders deploy items and sub-installations with Landscaper's template
// executors, and computes and validates exports.
package render

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/blueprint"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/blueprint/component"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/installation"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm"
)

// Component names the component a blueprint belongs to, and the OCM
// component-constructor files that hold it and every component it
// references.
type Component struct {
	Name         string
	Version      string
	Constructors []string
	// RepositoryContext is where the component and its references are
	// looked up when no constructor holds them (Landscaper's
	// repositoryContext); nil uses Options.OCM's default.
	RepositoryContext map[string]any
	// Verify says the component's signature SignatureName is verified
	// before anything is rendered; an empty name is then an error, never
	// a way to verify nothing.
	Verify        bool
	SignatureName string
}

// Source says where the root blueprint comes from: exactly one of Path (a
// directory holding blueprint.yaml), Filesystem (file name to content) or
// Ref (the name of a resource of Component).
type Source struct {
	Path       string
	Filesystem map[string]string
	Ref        string
	Component  *Component
}

// Options are what rendering needs besides the blueprint.
type Options struct {
	// Deployers checks the deploy items a blueprint renders, at plan time.
	Deployers *deployer.Registry
	// OCM reaches component repositories; nil allows constructors only.
	OCM *ocm.Context
	// Verifier returns the verifier of a signature name.
	Verifier func(signatureName string) (component.Verifier, error)
}

// Load loads the root blueprint of an installation, and its component.
// Every file is read once per call: one Load serves one RPC.
func Load(ctx context.Context, src Source, opts Options) (installation.Blueprint, error) {
	l := &loader{cache: blueprint.NewCache(), opts: opts}
	var comp *component.Component
	if c := src.Component; c != nil {
		set, err := loadComponents(ctx, c, opts)
		if err != nil {
			return nil, err
		}
		comp, err = set.Component(c.Name, c.Version)
		if err != nil {
			return nil, &SourceError{Field: "component", Err: err}
		}
		l.set = set
	}
	var bp *blueprint.Blueprint
	var err error
	switch {
	case src.Path != "":
		bp, err = l.cache.Dir(src.Path)
		if err != nil {
			return nil, &SourceError{Field: "path", Err: err}
		}
	case src.Filesystem != nil:
		files := make(map[string][]byte, len(src.Filesystem))
		for k, v := range src.Filesystem {
			files[k] = []byte(v)
		}
		bp, err = blueprint.LoadFiles("(inline)", files)
		if err != nil {
			return nil, &SourceError{Field: "filesystem", Err: err}
		}
	case src.Ref != "":
		if l.set == nil {
			return nil, &SourceError{Field: "ref", Err: errors.New("a blueprint ref needs a component")}
		}
		bp, err = l.cache.Resource(l.set, comp, src.Ref)
		if err != nil {
			var ve *component.VerificationError
			if errors.As(err, &ve) {
				return nil, &SourceError{Field: "verification", Err: err}
			}
			return nil, &SourceError{Field: "ref", Err: err}
		}
	default:
		return nil, &SourceError{Field: "path", Err: errors.New("no blueprint given: set path, filesystem or ref")}
	}
	return l.node(bp, comp, blueprintDef(src)), nil
}

// loadComponents loads the components of an installation: from its
// constructor files and, where it has one, from its repository.
func loadComponents(ctx context.Context, c *Component, opts Options) (*component.Set, error) {
	if opts.OCM == nil && c.RepositoryContext == nil && !c.Verify {
		set, err := component.LoadFiles(c.Constructors...)
		return set, constructorError(c.Constructors, err)
	}
	o := component.ResolveOptions{Constructors: c.Constructors, Root: component.ID{Name: c.Name, Version: c.Version},
		RepositoryContext: c.RepositoryContext}
	var octx ocm.Context
	if opts.OCM != nil {
		octx = *opts.OCM
	}
	o.Resolver = ocm.NewResolver(octx)
	if c.Verify {
		if c.SignatureName == "" {
			return nil, &SourceError{Field: "verification", Err: errors.New("signature_name is empty: name the signature to verify")}
		}
		if opts.Verifier == nil {
			return nil, &SourceError{Field: "verification", Err: errors.New("signature verification is not available")}
		}
		v, err := opts.Verifier(c.SignatureName)
		if err != nil {
			return nil, &SourceError{Field: "verification", Err: err}
		}
		o.Verifier = v
	}
	set, err := component.Resolve(ctx, o)
	if err == nil {
		return set, nil
	}
	var ve *component.VerificationError
	if errors.As(err, &ve) {
		return nil, &SourceError{Field: "verification", Err: err}
	}
	var ue *component.UnknownVersionError
	if errors.As(err, &ue) && err == error(ue) {
		// The installation's own component version (a reference's is
		// its constructor file's), with the versions there are.
		return nil, &SourceError{Field: "component", Err: err}
	}
	if strings.Contains(err.Error(), "constructor ") {
		return nil, constructorError(c.Constructors, err)
	}
	return nil, &SourceError{Field: "component", Err: err}
}

// constructorError blames the constructor file a problem is in when the
// message names one (resource inputs are read relative to their
// constructor, so most problems are some file's).
func constructorError(paths []string, err error) error {
	if err == nil {
		return nil
	}
	for i, p := range paths {
		if strings.Contains(err.Error(), "constructor "+p+":") {
			return &SourceError{Field: "constructors", Index: i, Err: err}
		}
	}
	return &SourceError{Field: "constructors", Index: -1, Err: err}
}

// blueprintDef is what templates see as blueprintDef: how the installation
// names its blueprint.
func blueprintDef(src Source) map[string]any {
	switch {
	case src.Ref != "":
		return map[string]any{"ref": map[string]any{"resourceName": src.Ref}}
	case src.Filesystem != nil:
		fs := make(map[string]any, len(src.Filesystem))
		for k, v := range src.Filesystem {
			fs[k] = v
		}
		return map[string]any{"inline": map[string]any{"filesystem": fs}}
	}
	return map[string]any{}
}

// ImportKind says which attribute an import comes from.
type ImportKind string

// Import kinds, as blueprints declare them.
const (
	ImportData       ImportKind = "data"
	ImportTarget     ImportKind = "target"
	ImportTargetList ImportKind = "targetList"
	ImportTargetMap  ImportKind = "targetMap"
)

// ImportProblem is something wrong with one import of the root.
type ImportProblem struct {
	Kind ImportKind
	Name string
	// Element is the key or index of the target list or map element the
	// problem is about, or empty; Field is the target's attribute ("type").
	Element string
	Field   string
	Message string
}

// ImportError lists what is wrong with the root's imports. Sub-installations'
// import problems are plain errors: their imports are not the user's input.
type ImportError struct {
	Problems []ImportProblem
}

func (e *ImportError) Error() string {
	msg := "invalid imports:"
	for _, p := range e.Problems {
		msg += fmt.Sprintf(" %s import %q: %s;", p.Kind, p.Name, p.Message)
	}
	return msg
}

// Warnings are what loading a blueprint had to say without failing, such
// as components served from the cache while their repository was down.
func Warnings(bp installation.Blueprint) []string {
	if n, ok := bp.(*node); ok && n.l.set != nil {
		return n.l.set.Warnings()
	}
	return nil
}

// RepositoryContexts are the repositoryContexts the descriptor of bp's
// component lists (the repositories it was transferred to); ok is false
// when bp comes from no component.
func RepositoryContexts(bp installation.Blueprint) (contexts []any, ok bool) {
	n, isNode := bp.(*node)
	if !isNode || n.comp == nil {
		return nil, false
	}
	comp, _ := n.comp.Descriptor()["component"].(map[string]any)
	contexts, _ = comp["repositoryContexts"].([]any)
	return contexts, true
}

// SourceError is a problem with where the blueprint or component comes
// from: Field is "path", "filesystem", "ref", "component", "verification" or "constructors"
// (with Index the constructor's position, -1 when no single file is to blame).
type SourceError struct {
	Field string
	Key   string
	Index int
	Err   error
}

func (e *SourceError) Error() string { return e.Err.Error() }
func (e *SourceError) Unwrap() error { return e.Err }

// Declaration is an import or export a blueprint declares.
type Declaration struct {
	Name string
	// Type is data, target, targetList or targetMap.
	Type string
	// Required is Landscaper's required of an import (true by default);
	// exports are always false.
	Required bool
}

// Declarations lists the imports and exports bp declares, in its order;
// nil for a blueprint Load did not return.
func Declarations(bp installation.Blueprint) (imports, exports []Declaration) {
	n, ok := bp.(*node)
	if !ok {
		return nil, nil
	}
	def := &n.bp.Definition
	for i := range def.Imports {
		d := &def.Imports[i]
		imports = append(imports, Declaration{Name: d.Name, Type: string(d.Type), Required: d.IsRequired()})
	}
	for _, d := range def.Exports {
		exports = append(exports, Declaration{Name: d.Name, Type: string(d.Type)})
	}
	return imports, exports
}

// Files are the files of bp, by slash-separated path, as they were read:
// what a Landscaper cluster is handed inline to render the same blueprint;
// nil for a blueprint Load did not return.
func Files(bp installation.Blueprint) (map[string][]byte, error) {
	n, ok := bp.(*node)
	if !ok {
		return nil, nil
	}
	out := map[string][]byte{}
	for _, name := range n.bp.Files() {
		data, err := n.bp.ReadFile(name)
		if err != nil {
			return nil, err
		}
		out[name] = data
	}
	return out, nil
}
