package template

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	gotmpl "text/template"
	"time"

	"github.com/Masterminds/sprig/v3"
	"sigs.k8s.io/yaml"
)

// noValue is what text/template prints for a missing map key under
// missingkey=zero; Landscaper rejects rendered deploy, export and
// subinstallation templates containing it.
const noValue = "<no value>"

// sprigFuncMap is built once: text/template copies the entries it is given,
// so sharing the map between renders is safe.
var sprigFuncMap = sprigFuncs()

// sprigFuncs is sprig's function map without the functions that read the
// process environment, as in Landscaper.
func sprigFuncs() gotmpl.FuncMap {
	fm := sprig.TxtFuncMap()
	delete(fm, "env")
	delete(fm, "expandenv")
	// Bounded variants of the functions that allocate in proportion to a
	// number argument, so one template cannot claim gigabytes.
	fm["repeat"] = func(count int, str string) (string, error) {
		if count > 0 && len(str) > 0 && count > maxOutputBytes/len(str) {
			return "", fmt.Errorf("repeat: result would exceed %d bytes", maxOutputBytes)
		}
		return strings.Repeat(str, max(count, 0)), nil
	}
	fm["untilStep"] = boundedUntilStep
	fm["until"] = func(count int) ([]int, error) {
		if count < 0 {
			return boundedUntilStep(0, count, -1)
		}
		return boundedUntilStep(0, count, 1)
	}
	return fm
}

// maxListLen bounds the lists until and untilStep build.
const maxListLen = 1 << 20

// boundedUntilStep is sprig's untilStep with a length limit.
func boundedUntilStep(start, stop, step int) ([]int, error) {
	if step != 0 && (stop-start)/step > maxListLen {
		return nil, fmt.Errorf("untilStep: more than %d elements", maxListLen)
	}
	v := []int{}
	switch {
	case stop < start && step < 0:
		for i := start; i > stop; i += step {
			v = append(v, i)
		}
	case stop >= start && step > 0:
		for i := start; i < stop; i += step {
			v = append(v, i)
		}
	}
	return v, nil
}

// goTemplater renders GoTemplate executions. One value serves one execution
// so that the include recursion counters start fresh.
type goTemplater struct {
	files    fs.FS
	comps    *componentFuncs
	cluster  Cluster
	funcs    gotmpl.FuncMap
	included map[string]int
	name     string
}

func newGoTemplater(name string, in *Input, comps *componentFuncs) *goTemplater {
	t := &goTemplater{files: in.Files, comps: comps, cluster: in.Cluster, included: map[string]int{}, name: name}
	t.funcs = t.landscaperFuncs()
	return t
}

func (t *goTemplater) execute(name, text string, binding any) (string, error) {
	tmpl, err := gotmpl.New(name).
		Funcs(sprigFuncMap).Funcs(t.funcs).
		Option("missingkey=zero").
		Parse(text)
	if err != nil {
		return "", err
	}
	var buf limitedBuffer
	if err := tmpl.Execute(&buf, binding); err != nil {
		return "", err
	}
	return buf.String(), nil
}

func (t *goTemplater) include(name string, binding any) (string, error) {
	if t.included[name] >= maxIncludes {
		return "", fmt.Errorf("unable to execute template: rendering template has a nested reference name: %s", name)
	}
	t.included[name]++
	defer func() { t.included[name]-- }()
	data, err := readFile(t.files, name)
	if err != nil {
		return "", fmt.Errorf("unable to read include file %q: %w", name, err)
	}
	return t.execute(name, string(data), binding)
}

func (t *goTemplater) landscaperFuncs() gotmpl.FuncMap {
	c := t.comps
	return gotmpl.FuncMap{
		"include": t.include,
		"readFile": func(p string) ([]byte, error) {
			return readFile(t.files, p)
		},
		"readDir": func(p string) ([]fs.FileInfo, error) {
			if t.files == nil {
				return nil, fmt.Errorf("open %s: blueprint has no files", p)
			}
			entries, err := fs.ReadDir(t.files, cleanPath(p))
			if err != nil {
				return nil, err
			}
			out := make([]fs.FileInfo, 0, len(entries))
			for _, e := range entries {
				info, err := e.Info()
				if err != nil {
					return nil, err
				}
				out = append(out, info)
			}
			return out, nil
		},
		"toYaml":   toYAML,
		"fromYaml": fromYAML,
		"parseOCIRef": func(ref string) ([2]string, error) {
			return parseOCIRef(ref)
		},
		"ociRefRepo": func(ref string) (string, error) {
			r, err := parseOCIRef(ref)
			return r[0], err
		},
		"ociRefVersion": func(ref string) (string, error) {
			r, err := parseOCIRef(ref)
			return r[1], err
		},
		"getResourceKey": func(args ...any) (string, error) {
			ref, err := refArgString("getResourceKey", args)
			if err != nil {
				return "", err
			}
			return c.resourceKey(ref)
		},
		"getResourceContent": func(args ...any) (string, error) {
			ref, err := refArgString("getResourceContent", args)
			if err != nil {
				return "", err
			}
			return c.resourceContent(ref)
		},
		"getResource": func(args ...any) (map[string]any, error) {
			res, err := c.resources("getResource", args)
			if err != nil {
				return nil, err
			}
			return res[0], nil
		},
		"getResources": func(args ...any) ([]map[string]any, error) {
			return c.resources("getResources", args)
		},
		"getComponent": func(args ...any) (map[string]any, error) {
			return c.component("getComponent", args)
		},
		"getRepositoryContext": func(arg any) (map[string]any, error) {
			if arg == nil {
				return nil, errors.New("getRepositoryContext: no component descriptor is defined")
			}
			return repositoryContext(arg)
		},
		"getShootAdminKubeconfig": func(args ...any) (string, error) {
			kcfg, _, err := t.kubeconfig("getShootAdminKubeconfig", args)
			return kcfg, err
		},
		"getShootAdminKubeconfigWithExpirationTimestamp": func(args ...any) (map[string]any, error) {
			return withExpiration(t.kubeconfig("getShootAdminKubeconfigWithExpirationTimestamp", args))
		},
		"getServiceAccountKubeconfig": func(args ...any) (string, error) {
			kcfg, _, err := t.kubeconfig("getServiceAccountKubeconfig", args)
			return kcfg, err
		},
		"getServiceAccountKubeconfigWithExpirationTimestamp": func(args ...any) (map[string]any, error) {
			return withExpiration(t.kubeconfig("getServiceAccountKubeconfigWithExpirationTimestamp", args))
		},
		"getOidcKubeconfig": func(args ...any) (string, error) {
			return oidcKubeconfig(t.cluster, args)
		},
	}
}

func (t *goTemplater) kubeconfig(fn string, args []any) (string, time.Time, error) {
	return clusterKubeconfig(t.cluster, fn, args)
}

// clusterKubeconfig checks the arguments of the shoot and service account
// kubeconfig functions and calls the cluster access.
func clusterKubeconfig(cluster Cluster, fn string, args []any) (string, time.Time, error) {
	shoot := strings.HasPrefix(fn, "getShoot")
	what := "service account"
	if shoot {
		what = "shoot"
	}
	if len(args) != 4 {
		return "", time.Time{}, fmt.Errorf("templating function %s expects 4 arguments: %s name, %s namespace, expiration seconds, and target", fn, what, what)
	}
	name, ok := args[0].(string)
	if !ok {
		return "", time.Time{}, fmt.Errorf("templating function %s expects a string as 1st argument, namely the %s name", fn, what)
	}
	namespace, ok := args[1].(string)
	if !ok {
		return "", time.Time{}, fmt.Errorf("templating function %s expects a string as 2nd argument, namely the %s namespace", fn, what)
	}
	seconds, err := toInt64(args[2])
	if err != nil {
		return "", time.Time{}, fmt.Errorf("templating function %s expects an integer as 3rd argument, namely the expiration seconds: %w", fn, err)
	}
	target, ok := args[3].(map[string]any)
	if !ok {
		return "", time.Time{}, fmt.Errorf("templating function %s expects a target object as 4th argument", fn)
	}
	if cluster == nil {
		return "", time.Time{}, fmt.Errorf("templating function %s is not available: it needs cluster access, which is not configured", fn)
	}
	if shoot {
		return cluster.ShootAdminKubeconfig(name, namespace, seconds, target)
	}
	return cluster.ServiceAccountKubeconfig(name, namespace, seconds, target)
}

func oidcKubeconfig(cluster Cluster, args []any) (string, error) {
	const fn = "getOidcKubeconfig"
	if len(args) != 3 {
		return "", fmt.Errorf("templating function %s expects 3 arguments: issuer url, client id, and target", fn)
	}
	issuer, ok := args[0].(string)
	if !ok {
		return "", fmt.Errorf("templating function %s expects a string as 1st argument, namely the issuer url", fn)
	}
	client, ok := args[1].(string)
	if !ok {
		return "", fmt.Errorf("templating function %s expects a string as 2nd argument, namely the client id", fn)
	}
	target, ok := args[2].(map[string]any)
	if !ok {
		return "", fmt.Errorf("templating function %s expects a target object as 3rd argument", fn)
	}
	if cluster == nil {
		return "", fmt.Errorf("templating function %s is not available: it needs cluster access, which is not configured", fn)
	}
	return cluster.OIDCKubeconfig(issuer, client, target)
}

func withExpiration(kcfg string, expires time.Time, err error) (map[string]any, error) {
	if err != nil {
		return nil, err
	}
	return map[string]any{
		"kubeconfig":                  kcfg,
		"expirationTimestamp":         expires.Unix(),
		"expirationTimestampReadable": expires.Format(time.RFC3339),
	}, nil
}

func toInt64(v any) (int64, error) {
	switch n := v.(type) {
	case int64:
		return n, nil
	case int32:
		return int64(n), nil
	case int16:
		return int64(n), nil
	case int8:
		return int64(n), nil
	case int:
		return int64(n), nil
	case float64:
		return int64(n), nil
	case float32:
		return int64(n), nil
	default:
		return 0, fmt.Errorf("unsupported type %T", v)
	}
}

// toYAML never fails inside a template; unmarshalable values give "".
func toYAML(v any) string {
	data, err := yaml.Marshal(v)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(string(data), "\n")
}

func fromYAML(s string) (any, error) {
	var out any
	err := yaml.Unmarshal([]byte(s), &out)
	return out, err
}

// noValueError lists the lines of a rendered template that contain
// "<no value>", i.e. read a missing key.
func noValueError(rendered string) error {
	if !strings.Contains(rendered, noValue) {
		return nil
	}
	var lines []string
	for i, l := range strings.Split(rendered, "\n") {
		if col := strings.Index(l, noValue); col >= 0 {
			lines = append(lines, "line "+strconv.Itoa(i+1)+":"+strconv.Itoa(col)+": "+strings.TrimSpace(l))
		}
	}
	return fmt.Errorf("rendered template contains fields with %q (a missing value):\n%s", noValue, strings.Join(lines, "\n"))
}

// withSnippet appends the offending source line to a text/template error about
// the given template, so the error shows the line without the reader opening
// the blueprint.
func withSnippet(err error, name, text string) error {
	msg := err.Error()
	prefix := "template: " + name + ":"
	if !strings.HasPrefix(msg, prefix) {
		return err
	}
	rest := msg[len(prefix):]
	end := strings.IndexAny(rest, ":")
	if end <= 0 {
		return err
	}
	line, convErr := strconv.Atoi(rest[:end])
	if convErr != nil {
		return err
	}
	lines := strings.Split(text, "\n")
	if line < 1 || line > len(lines) {
		return err
	}
	src := lines[line-1]
	if len(src) > 200 {
		src = src[:200] + "..."
	}
	return fmt.Errorf("%w\nline %d: %s", err, line, src)
}
