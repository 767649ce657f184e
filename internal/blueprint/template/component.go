package template

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"path"
	"strings"

	"sigs.k8s.io/yaml"
)

// Component descriptor schema versions Landscaper templates against.
const (
	schemaV2       = "v2"
	schemaV3alpha1 = "ocm.software/v3alpha1"
)

// schemaVersion tells the schema version of a component descriptor map: the
// apiVersion of v3alpha1 or meta.schemaVersion of v2.
func schemaVersion(cd map[string]any) (string, error) {
	if v, ok := cd["apiVersion"].(string); ok {
		return v, nil
	}
	if meta, ok := cd["meta"].(map[string]any); ok {
		if v, ok := meta["schemaVersion"].(string); ok {
			return v, nil
		}
	}
	return "", errors.New("unable to determine component descriptor schema version")
}

// compView reads the parts of a component descriptor map that the template
// functions need, hiding where v2 and v3alpha1 keep them.
type compView struct {
	raw        map[string]any
	name       string
	version    string
	resources  []map[string]any
	references []map[string]any
	repoCtxs   []any
}

func viewComponent(cd map[string]any) (*compView, error) {
	sv, err := schemaVersion(cd)
	if err != nil {
		return nil, err
	}
	v := &compView{raw: cd}
	switch sv {
	case schemaV2:
		comp, _ := cd["component"].(map[string]any)
		v.name, _ = comp["name"].(string)
		v.version, _ = comp["version"].(string)
		v.resources = mapList(comp["resources"])
		v.references = mapList(comp["componentReferences"])
		v.repoCtxs, _ = comp["repositoryContexts"].([]any)
	case schemaV3alpha1:
		meta, _ := cd["metadata"].(map[string]any)
		spec, _ := cd["spec"].(map[string]any)
		v.name, _ = meta["name"].(string)
		v.version, _ = meta["version"].(string)
		v.resources = mapList(spec["resources"])
		v.references = mapList(spec["references"])
		v.repoCtxs, _ = cd["repositoryContexts"].([]any)
	default:
		return nil, fmt.Errorf("unknown schema version %q", sv)
	}
	return v, nil
}

func mapList(v any) []map[string]any {
	var out []map[string]any
	switch l := v.(type) {
	case []any:
		for _, e := range l {
			if m, ok := e.(map[string]any); ok {
				out = append(out, m)
			}
		}
	case []map[string]any:
		out = l
	}
	return out
}

// identity is an element's identity as Landscaper's legacy component model
// computes it for selectors: the extra identity plus the name.
func identity(elem map[string]any) map[string]string {
	id := map[string]string{}
	if extra, ok := elem["extraIdentity"].(map[string]any); ok {
		for k, v := range extra {
			if s, ok := v.(string); ok {
				id[k] = s
			}
		}
	}
	name, _ := elem["name"].(string)
	id["name"] = name
	return id
}

// ocmIdentity is the identity OCM uses for references and resource keys: like
// identity, but with the version added when another element shares name and
// extra identity. i indexes the element in all.
func ocmIdentity(all []map[string]any, i int) map[string]string {
	id := identity(all[i])
	for j, other := range all {
		if j != i && maps.Equal(identity(other), id) {
			if v, ok := all[i]["version"].(string); ok {
				id["version"] = v
			}
			break
		}
	}
	return id
}

// selector is a set of identity key/value pairs as given to getResource and
// getComponent, following the first optional component descriptor argument.
type selector map[string]string

func (s selector) matches(id map[string]string) bool {
	for k, v := range s {
		if got, ok := id[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// splitSelectorArgs separates the optional leading component descriptor from
// the key/value pairs, as Landscaper's getResource and getComponent do.
func splitSelectorArgs(fn string, def map[string]any, args []any) (map[string]any, selector, error) {
	if len(args) < 2 {
		return nil, nil, fmt.Errorf("%s: at least 2 arguments are expected", fn)
	}
	cd := def
	if m, ok := args[0].(map[string]any); ok {
		cd = m
		args = args[1:]
	}
	if len(args)%2 != 0 {
		return nil, nil, fmt.Errorf("%s: odd number of key value pairs", fn)
	}
	sel := selector{}
	for i := 0; i < len(args); i += 2 {
		k, ok := args[i].(string)
		if !ok {
			return nil, nil, fmt.Errorf("%s: expect argument %d to be a string", fn, i)
		}
		v, ok := args[i+1].(string)
		if !ok {
			return nil, nil, fmt.Errorf("%s: expect argument %d to be a string", fn, i+1)
		}
		sel[k] = v
	}
	if cd == nil {
		return nil, nil, fmt.Errorf("%s: no component descriptor is defined", fn)
	}
	return cd, sel, nil
}

// componentFuncs implements the component descriptor functions shared by both
// engines.
type componentFuncs struct {
	cd       map[string]any
	list     []map[string]any
	resolver Components
}

func (c *componentFuncs) resources(fn string, args []any) ([]map[string]any, error) {
	cd, sel, err := splitSelectorArgs(fn, c.cd, args)
	if err != nil {
		return nil, err
	}
	v, err := viewComponent(cd)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", fn, err)
	}
	var out []map[string]any
	for _, r := range v.resources {
		if sel.matches(identity(r)) {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no resource matches %v in component %s:%s", fn, map[string]string(sel), v.name, v.version)
	}
	return out, nil
}

func (c *componentFuncs) component(fn string, args []any) (map[string]any, error) {
	cd, sel, err := splitSelectorArgs(fn, c.cd, args)
	if err != nil {
		return nil, err
	}
	v, err := viewComponent(cd)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", fn, err)
	}
	for _, ref := range v.references {
		if !sel.matches(identity(ref)) {
			continue
		}
		name, _ := ref["componentName"].(string)
		version, _ := ref["version"].(string)
		found, err := c.lookup(name, version)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", fn, err)
		}
		return found, nil
	}
	return nil, fmt.Errorf("%s: no component reference matches %v in component %s:%s", fn, map[string]string(sel), v.name, v.version)
}

func (c *componentFuncs) lookup(name, version string) (map[string]any, error) {
	for _, cd := range c.list {
		v, err := viewComponent(cd)
		if err != nil {
			continue
		}
		if v.name == name && v.version == version {
			return cd, nil
		}
	}
	return nil, fmt.Errorf("unable to resolve component %s:%s", name, version)
}

// repositoryContext returns the effective (last) repository context.
func repositoryContext(arg any) (map[string]any, error) {
	cd, ok := arg.(map[string]any)
	if !ok {
		return nil, errors.New("getRepositoryContext: invalid component descriptor")
	}
	v, err := viewComponent(cd)
	if err != nil {
		// Landscaper yields nothing rather than failing on an unreadable descriptor.
		return nil, nil //nolint:nilerr // keeps Landscaper's behaviour
	}
	if len(v.repoCtxs) == 0 {
		return map[string]any{}, nil
	}
	last, _ := v.repoCtxs[len(v.repoCtxs)-1].(map[string]any)
	if last == nil {
		return map[string]any{}, nil
	}
	return last, nil
}

// resourceRef is OCM's relative resource reference.
type resourceRef struct {
	Resource      map[string]string   `json:"resource"`
	ReferencePath []map[string]string `json:"referencePath,omitempty"`
}

// parseResourceRef reads a reference either as cd:// path
// (cd://componentReferences/<name>/.../resources/<name>) or as YAML/JSON of
// a relative resource reference.
func parseResourceRef(ref string) (*resourceRef, error) {
	if strings.HasPrefix(ref, "cd://") {
		return parseCDURI(ref)
	}
	out := &resourceRef{}
	if err := yaml.UnmarshalStrict([]byte(ref), out); err != nil {
		return nil, fmt.Errorf("failed to unmarshal argument into a relative resource reference: %w", err)
	}
	if len(out.Resource) == 0 {
		return nil, errors.New("relative resource reference has no resource identity")
	}
	return out, nil
}

const maxURILength = 2083

func parseCDURI(raw string) (*resourceRef, error) {
	if len(raw) > maxURILength {
		return nil, fmt.Errorf("too long uri, got %d but expected max %d", len(raw), maxURILength)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("failed to parse argument into URI: %w", err)
	}
	parts := strings.Split(path.Join(u.Host, u.Path), "/")
	if len(parts)%2 != 0 {
		return nil, errors.New("failed to parse argument into URI: even number of path arguments expected")
	}
	out := &resourceRef{}
	for i := 0; i < len(parts); i += 2 {
		last := i+2 == len(parts)
		switch parts[i] {
		case "componentReferences":
			if last {
				return nil, errors.New("the selector seems to target a component but a resource is requested")
			}
			out.ReferencePath = append(out.ReferencePath, map[string]string{"name": parts[i+1]})
		case "resources":
			if !last {
				return nil, errors.New("the selector seems to contain more path segments after a resource")
			}
			out.Resource = map[string]string{"name": parts[i+1]}
			return out, nil
		default:
			return nil, fmt.Errorf("unknown keyword %s", parts[i])
		}
	}
	return nil, fmt.Errorf("unable to find resource %q", raw)
}

// resolveRef follows a reference from the root component to the resource.
// It returns the component holding the resource and the resource's index.
func (c *componentFuncs) resolveRef(ref *resourceRef) (*compView, int, error) {
	if c.cd == nil {
		return nil, 0, errors.New("no component descriptor is defined")
	}
	comp, err := viewComponent(c.cd)
	if err != nil {
		return nil, 0, err
	}
	for _, step := range ref.ReferencePath {
		var next *compView
		for i, r := range comp.references {
			if !maps.Equal(ocmIdentity(comp.references, i), step) {
				continue
			}
			name, _ := r["componentName"].(string)
			version, _ := r["version"].(string)
			cd, err := c.lookup(name, version)
			if err != nil {
				return nil, 0, err
			}
			if next, err = viewComponent(cd); err != nil {
				return nil, 0, err
			}
			break
		}
		if next == nil {
			return nil, 0, fmt.Errorf("component reference %v not found in component %s:%s", step, comp.name, comp.version)
		}
		comp = next
	}
	for i := range comp.resources {
		if maps.Equal(ocmIdentity(comp.resources, i), ref.Resource) {
			return comp, i, nil
		}
	}
	return nil, 0, fmt.Errorf("resource %v not found in component %s:%s", ref.Resource, comp.name, comp.version)
}

// resourceKey is the base64 encoded YAML of the resource's global identity,
// the key Landscaper's deployers fetch resource content with.
func (c *componentFuncs) resourceKey(ref string) (string, error) {
	r, err := parseResourceRef(ref)
	if err != nil {
		return "", err
	}
	comp, idx, err := c.resolveRef(r)
	if err != nil {
		return "", fmt.Errorf("unable to resolve relative resource reference: %w", err)
	}
	global := map[string]any{
		"component": map[string]any{"name": comp.name, "version": comp.version},
		"resource":  ocmIdentity(comp.resources, idx),
	}
	data, err := yaml.Marshal(global)
	if err != nil {
		return "", fmt.Errorf("unable to marshal global resource identity: %w", err)
	}
	return base64.StdEncoding.EncodeToString(data), nil
}

// ParseResourceKey reads a key made by getResourceKey back into the
// component (name and version) and the resource's name it identifies.
func ParseResourceKey(key string) (componentName, version, resourceName string, err error) {
	data, err := base64.StdEncoding.DecodeString(strings.TrimSpace(key))
	if err != nil {
		return "", "", "", errors.New("the resource key is not base64")
	}
	var global struct {
		Component struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"component"`
		Resource map[string]string `json:"resource"`
	}
	if err := yaml.Unmarshal(data, &global); err != nil {
		return "", "", "", errors.New("the resource key is not a global resource identity")
	}
	if global.Component.Name == "" || global.Resource["name"] == "" {
		return "", "", "", errors.New("the resource key names no component or no resource")
	}
	return global.Component.Name, global.Component.Version, global.Resource["name"], nil
}

const mediaTypeOctet = "application/octet-stream"

// resourceContent fetches a referenced resource through the resolver; binary
// content comes back base64 encoded.
func (c *componentFuncs) resourceContent(ref string) (string, error) {
	r, err := parseResourceRef(ref)
	if err != nil {
		return "", err
	}
	comp, idx, err := c.resolveRef(r)
	if err != nil {
		return "", fmt.Errorf("unable to resolve relative resource reference: %w", err)
	}
	res := comp.resources[idx]
	if c.resolver == nil {
		return "", errors.New("no access to resource content is configured")
	}
	data, mediaType, err := c.resolver.ResourceContent(comp.raw, res)
	if err != nil {
		return "", fmt.Errorf("unable to read resource content: %w", err)
	}
	if mediaType == mediaTypeOctet {
		return base64.StdEncoding.EncodeToString(data), nil
	}
	return string(data), nil
}

// refArgString accepts a reference as string or, as Landscaper's Spiff
// functions do, as a structured value that is turned into JSON.
func refArgString(fn string, args []any) (string, error) {
	if len(args) == 0 {
		return "", fmt.Errorf("%s: unable to provide key for empty relative artifact reference", fn)
	}
	if len(args) > 1 {
		return "", fmt.Errorf("%s: this function requires 1 argument, but %d were provided", fn, len(args))
	}
	if s, ok := args[0].(string); ok {
		return s, nil
	}
	data, err := json.Marshal(args[0])
	if err != nil {
		return "", fmt.Errorf("%s: unable to parse input", fn)
	}
	return string(data), nil
}
