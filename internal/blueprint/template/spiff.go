package template

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mandelsoft/spiff/dynaml"
	"github.com/mandelsoft/spiff/spiffing"
	spiffyaml "github.com/mandelsoft/spiff/yaml"
	"github.com/mandelsoft/vfs/pkg/vfs"
)

// spiffTemplateNode parses a Spiff execution's template. A string is YAML
// text; a structured value is used as is, except that a structured value
// which is itself a string is parsed again, as Landscaper does.
func spiffTemplateNode(name string, tmpl any, files vfs.FileSystem, file string) (spiffyaml.Node, error) {
	if tmpl != nil {
		if s, ok := tmpl.(string); ok {
			return spiffyaml.Unmarshal(name, []byte(s))
		}
		data, err := json.Marshal(tmpl)
		if err != nil {
			return nil, err
		}
		node, err := spiffyaml.Unmarshal(name, data)
		if err != nil {
			return nil, err
		}
		if s, ok := node.Value().(string); ok {
			return spiffyaml.Unmarshal(name, []byte(s))
		}
		return node, nil
	}
	if file != "" {
		data, err := vfs.ReadFile(files, "/"+cleanPath(file))
		if err != nil {
			return nil, err
		}
		return spiffyaml.Unmarshal(file, data)
	}
	return nil, errors.New("no template found")
}

// newSpiff sets spiff up as Landscaper does for executions: file functions
// work on the blueprint's files, OS functions (exec, pipe) are off, no
// feature flags, and Landscaper's functions are registered.
func newSpiff(files vfs.FileSystem, values map[string]any, fns spiffing.Functions) (spiffing.Spiff, error) {
	s := spiffing.Plain().WithFileSystem(files).WithMode(spiffing.MODE_FILE_ACCESS)
	if fns != nil {
		s = s.WithFunctions(fns)
	}
	return s.WithValues(values)
}

// spiffFuncs registers the functions Landscaper adds to Spiff. Unlike the
// GoTemplate set it has no getResources or getRepositoryContext.
func spiffFuncs(c *componentFuncs, cluster Cluster) spiffing.Functions {
	fns := spiffing.NewFunctions()
	fns.RegisterFunction("getResource", spiffFunc(func(args []any) (any, error) {
		res, err := c.resources("getResource", args)
		if err != nil {
			return nil, err
		}
		return res[0], nil
	}))
	fns.RegisterFunction("getResourceKey", spiffFunc(func(args []any) (any, error) {
		ref, err := refArgString("getResourceKey", args)
		if err != nil {
			return nil, err
		}
		return c.resourceKey(ref)
	}))
	fns.RegisterFunction("getResourceContent", spiffFunc(func(args []any) (any, error) {
		ref, err := refArgString("getResourceContent", args)
		if err != nil {
			return nil, err
		}
		content, err := c.resourceContent(ref)
		if err != nil {
			return nil, err
		}
		// Landscaper hands the content to spiff as a parsed YAML document.
		node, err := spiffyaml.Unmarshal("data", []byte(content))
		if err != nil {
			return nil, errors.New("unable to marshal resource into spiff node")
		}
		return spiffyaml.Normalize(node)
	}))
	fns.RegisterFunction("getComponent", spiffFunc(func(args []any) (any, error) {
		return c.component("getComponent", args)
	}))
	fns.RegisterFunction("parseOCIRef", spiffFunc(func(args []any) (any, error) {
		ref, err := oneStringArg("parseOCIRef", args)
		if err != nil {
			return nil, err
		}
		r, err := parseOCIRef(ref)
		return []any{r[0], r[1]}, err
	}))
	fns.RegisterFunction("ociRefRepo", spiffFunc(func(args []any) (any, error) {
		ref, err := oneStringArg("ociRefRepo", args)
		if err != nil {
			return nil, err
		}
		r, err := parseOCIRef(ref)
		return r[0], err
	}))
	fns.RegisterFunction("ociRefVersion", spiffFunc(func(args []any) (any, error) {
		ref, err := oneStringArg("ociRefVersion", args)
		if err != nil {
			return nil, err
		}
		r, err := parseOCIRef(ref)
		return r[1], err
	}))
	for _, fn := range []string{"getShootAdminKubeconfig", "getServiceAccountKubeconfig"} {
		fns.RegisterFunction(fn, spiffFunc(func(args []any) (any, error) {
			kcfg, _, err := clusterKubeconfig(cluster, fn, args)
			return kcfg, err
		}))
		withTS := fn + "WithExpirationTimestamp"
		fns.RegisterFunction(withTS, spiffFunc(func(args []any) (any, error) {
			return withExpiration(clusterKubeconfig(cluster, withTS, args))
		}))
	}
	fns.RegisterFunction("getOidcKubeconfig", spiffFunc(func(args []any) (any, error) {
		return oidcKubeconfig(cluster, args)
	}))
	return fns
}

func oneStringArg(fn string, args []any) (string, error) {
	if len(args) != 1 {
		return "", fmt.Errorf("%s: expected 1 reference argument, got %d", fn, len(args))
	}
	s, ok := args[0].(string)
	if !ok {
		return "", fmt.Errorf("%s: invalid argument: string expected", fn)
	}
	return s, nil
}

// spiffFunc adapts a function on plain values to spiff's calling convention:
// arguments arrive as spiff nodes and are normalized to plain values, results
// are turned back into nodes, errors become evaluation errors and panics are
// caught.
func spiffFunc(f func(args []any) (any, error)) dynaml.Function {
	return func(arguments []any, _ dynaml.Binding) (result any, info dynaml.EvaluationInfo, ok bool) {
		info = dynaml.DefaultInfo()
		defer func() {
			if r := recover(); r != nil {
				result, info, ok = info.Error("%v", r)
			}
		}()
		plain := make([]any, len(arguments))
		for i, a := range arguments {
			v, err := spiffyaml.Normalize(spiffyaml.NewNode(a, ""))
			if err != nil {
				return info.Error(err.Error())
			}
			plain[i] = v
		}
		out, err := f(plain)
		if err != nil {
			return info.Error(err.Error())
		}
		node, err := spiffyaml.Sanitize("", jsonNormalize(out))
		if err != nil {
			return info.Error(err.Error())
		}
		return node.Value(), info, true
	}
}

// jsonNormalize turns typed Go values ([]map[string]any, map[string]string,
// [2]string) into the plain shapes spiff accepts.
func jsonNormalize(v any) any {
	switch v.(type) {
	case nil, string, bool, int64, float64, []any, map[string]any:
		return v
	}
	data, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		return v
	}
	return out
}

// stateNode loads a persisted Spiff state document; no state is an empty map.
func stateNode(data []byte) (spiffyaml.Node, error) {
	if len(data) == 0 {
		return spiffyaml.NewNode(map[string]spiffyaml.Node{}, "state"), nil
	}
	node, err := spiffyaml.Unmarshal("state", data)
	if err != nil {
		return nil, fmt.Errorf("unable to load state: %w", err)
	}
	if node == nil || node.Value() == nil {
		return spiffyaml.NewNode(map[string]spiffyaml.Node{}, "state"), nil
	}
	return node, nil
}
