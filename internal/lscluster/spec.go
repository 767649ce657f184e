package lscluster

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"sigs.k8s.io/yaml"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm"
)

// Spec is what a remote installation hands a Landscaper resource cluster:
// one root Installation and everything it stands on, written into
// Namespace. Objects turns it into Landscaper's objects; nothing here
// contacts a cluster.
type Spec struct {
	Namespace string
	// Name is the Installation's name; every other object's name starts
	// with it, so installations sharing a namespace never share an object.
	Name string

	// Blueprint is Files (inline, by slash-separated path) or Ref (a
	// resource of Component).
	Blueprint Blueprint
	Files     map[string][]byte
	Component *ComponentRef
	// Overwrites become a ComponentVersionOverwrites the Context names.
	Overwrites []ocm.Overwrite
	// PullSecrets are registry credentials by host ("host:port"; see
	// PullSecretsFor); they become one Secret of type
	// kubernetes.io/dockerconfigjson (RegistrySecret) the Context names in
	// registryPullSecrets.
	PullSecrets map[string]RegistryAuth

	// Data are the data imports written as DataObjects; SecretData those
	// written as Secrets.
	Data       map[string]any
	SecretData map[string]any
	// Targets, TargetLists and TargetMaps are the target imports; each
	// becomes a Target whose config sits in a Secret.
	Targets     map[string]Target
	TargetLists map[string][]Target
	TargetMaps  map[string]map[string]Target

	// DataExports and TargetExports are the export names the blueprint
	// declares: each gets a DataObject or Target Landscaper writes.
	DataExports   []string
	TargetExports []string

	// AutomaticReconcile, when not zero, is the interval at which
	// Landscaper reconciles the installation on its own, succeeded or
	// failed.
	AutomaticReconcile time.Duration
}

// ComponentRef names a component and the repository it is read from.
type ComponentRef struct {
	Name    string
	Version string
	// RepositoryContext is Landscaper's repositoryContext, verbatim.
	RepositoryContext map[string]any
}

// RegistryAuth is one registry's credentials: a user and password, or a
// token.
type RegistryAuth struct {
	Username, Password, Token string
}

// Target is a target import: its type and config, and the metadata
// templates read. Ref, when set, names the provider's target it came from,
// so a target export that passes it on can be told back.
type Target struct {
	Ref string
	// Location is where the config points, without its credentials (the
	// server of a kubeconfig: deployer.Registry.TargetLocation), "" when
	// unknown. Records keep it: a target pointed elsewhere is told from a
	// rotated credential, which changes only the Secret.
	Location string
	// Pointing is a digest of the config without its credentials
	// (target.KubernetesClusterPointing), "" when the type's credentials
	// are not known: only a change of credentials alone, with the same
	// pointing, is a rotation.
	Pointing    string
	Type        string
	Config      json.RawMessage
	Labels      map[string]string
	Annotations map[string]string
}

// Kinds of the objects a remote installation writes.
const (
	KindInstallation = "Installation"
	KindTarget       = "Target"
	KindDataObject   = "DataObject"
	KindContext      = "Context"
	KindSecret       = "Secret"
	KindOverwrites   = "ComponentVersionOverwrites"
)

// Object is one object of a remote installation, in the form written.
type Object struct {
	Kind string
	Name string
	// Body is the whole object, as the API's JSON.
	Body map[string]any
	// Points, on a Target, is what it points at: not written, but kept
	// in records (see Target.Location).
	Points *TargetPoints `json:",omitempty"`
}

// TargetPoints is what a Target points at, without credentials: the
// provider target it came from and the location of its config.
type TargetPoints struct {
	Ref      string `json:",omitempty"`
	Location string `json:",omitempty"`
	// Pointing is Target.Pointing. Records written before it was kept
	// have none.
	Pointing string `json:",omitempty"`
}

// SamePoints tells whether two records of a Target point at the same, as
// far as both know: a record without a pointing (an earlier build's)
// compares by provider target and location.
func SamePoints(a, b Object) bool {
	var pa, pb TargetPoints
	if a.Points != nil {
		pa = *a.Points
	}
	if b.Points != nil {
		pb = *b.Points
	}
	if pa.Pointing == "" || pb.Pointing == "" {
		pa.Pointing, pb.Pointing = "", ""
	}
	return pa == pb
}

// Rotated tells whether a Target whose config Secret changed from record a
// to object b had only its credentials changed: both know where the config
// points without its credentials, and that is the same. Any other change
// of the config (a target type whose credentials are not known, a record
// of an earlier build) may point it elsewhere, which Landscaper's next job
// must deploy to.
func Rotated(a, b Object) bool {
	return a.Points != nil && b.Points != nil && a.Points.Pointing != "" && SamePoints(a, b) &&
		a.Points.Pointing == b.Points.Pointing
}

// Key names the object as landscaper_objects does: "<kind>/<name>".
func (o Object) Key() string { return o.Kind + "/" + o.Name }

// Ref names the object.
func (o Object) Ref() ObjectRef {
	api, _ := o.Body["apiVersion"].(string)
	ns, _ := o.Body["metadata"].(map[string]any)["namespace"].(string)
	return ObjectRef{APIVersion: api, Kind: o.Kind, Namespace: ns, Name: o.Name}
}

// Masked is the object as YAML, every value of a Secret's data "***": what
// a plan may show of it.
func (o Object) Masked() string {
	body := o.Body
	if o.Kind == KindSecret {
		body = maps.Clone(body)
		if data, ok := body["data"].(map[string]any); ok {
			masked := make(map[string]any, len(data))
			for k := range data {
				masked[k] = MaskedValue
			}
			body["data"] = masked
		}
	}
	out, err := yaml.Marshal(body)
	if err != nil {
		return err.Error()
	}
	return string(out)
}

// MaskedValue stands for a secret in Masked.
const MaskedValue = "***"

// Names of what the objects refer to each other by.
const (
	targetConfigKey = "config"
	secretValueKey  = "value"
	// OperationAnnotation with ReconcileOperation starts a job.
	OperationAnnotation = group + "/operation"
	ReconcileOperation  = "reconcile"
	// deleteWithoutUninstall makes Landscaper remove an Installation's
	// tree and leave what its deploy items installed in place.
	deleteWithoutUninstall = group + "/delete-without-uninstall"
)

// Objects are the objects of the installation, in the order they are
// written: what the Installation refers to first, the Installation last.
func (s Spec) Objects() ([]Object, error) {
	if !dnsSubdomain.MatchString(s.Name) || len(s.Name) > 63 {
		return nil, fmt.Errorf("%q cannot name an Installation: a Landscaper installation's name is a lower-case DNS label "+
			"(at most 63 letters, digits, '-' and '.', starting and ending with a letter or digit)", s.Name)
	}
	if s.Namespace == "" {
		return nil, errors.New("no namespace given")
	}
	b := &builder{spec: s}
	inst, err := b.installation()
	if err != nil {
		return nil, err
	}
	out := append(b.objs, inst)
	// Two parts may come to one name ("x.0": a target import, or element
	// 0 of the target list x): one would overwrite the other.
	seen := map[string]bool{}
	for _, o := range out {
		if seen[o.Key()] {
			return nil, fmt.Errorf("two of the installation's objects would be %s: rename an import so that "+
				"target imports, list elements and map keys do not meet", o.Key())
		}
		seen[o.Key()] = true
	}
	slices.SortStableFunc(out[:len(out)-1], func(a, c Object) int { return kindOrder(a.Kind) - kindOrder(c.Kind) })
	return out, nil
}

// TargetSecrets are the names of the Secrets that hold the configs of the
// Targets among objs (a Target's Secret has its name).
func TargetSecrets(objs []Object) map[string]bool {
	out := map[string]bool{}
	for _, o := range objs {
		if o.Kind == KindTarget {
			out[o.Name] = true
		}
	}
	return out
}

func kindOrder(kind string) int {
	return slices.Index([]string{KindSecret, KindDataObject, KindTarget, KindOverwrites, KindContext}, kind)
}

type builder struct {
	spec Spec
	objs []Object
}

func (b *builder) meta(name string) map[string]any {
	return map[string]any{"name": name, "namespace": b.spec.Namespace}
}

func (b *builder) add(kind, apiVersion, name string, body map[string]any) {
	body["apiVersion"], body["kind"] = apiVersion, kind
	if m, ok := body["metadata"].(map[string]any); ok {
		m["name"], m["namespace"] = name, b.spec.Namespace
	} else {
		body["metadata"] = b.meta(name)
	}
	b.objs = append(b.objs, Object{Kind: kind, Name: name, Body: body})
}

func (b *builder) secret(name, typ string, data map[string][]byte) {
	enc := make(map[string]any, len(data))
	for k, v := range data {
		enc[k] = base64.StdEncoding.EncodeToString(v)
	}
	b.add(KindSecret, "v1", name, map[string]any{"type": typ, "data": enc})
}

// ObjectName is the name of an object of installation inst for one of its
// parts: "<inst>.<part>.<name>", readable and never the name of another
// installation's or another part's object in the namespace. The
// installation's name stands for itself when it is a DNS label without
// "--", and name when it is one of a subdomain without "--"; anything else
// (a dot in an installation's name, an upper-case letter in an import's)
// is escaped: its letters and digits, "--", and a digest of it. An
// escaped form holds "--" and a literal one does not, and the first dot
// ends the installation's part, so two different triples never give one
// name ("app.import" with its registry secret and "app" with an import
// "registry" did).
func ObjectName(inst, part, name string) string {
	n := inst
	if !dnsLabel.MatchString(inst) || strings.Contains(inst, "--") {
		n = escapedName(inst)
	}
	n += "." + part
	if name == "" {
		return n
	}
	if full := n + "." + name; dnsSubdomain.MatchString(full) && !strings.Contains(name, "--") && len(full) <= 253 {
		return full
	}
	return n + "." + escapedName(name)
}

// escapedName is s as a DNS label that holds "--" and names s alone: its
// letters and digits, "--", and a digest of s.
func escapedName(s string) string {
	clean := strings.Trim(unsafeNameChars.ReplaceAllString(strings.ToLower(s), "-"), "-")
	if len(clean) > 40 {
		clean = strings.TrimRight(clean[:40], "-")
	}
	if clean == "" {
		clean = "x"
	}
	h := sha256.Sum256([]byte(s))
	return clean + "--" + lowerBase32.EncodeToString(h[:])[:16]
}

// dnsLabel and dnsSubdomain are Kubernetes' rules for names (RFC 1123):
// every label starts and ends with a letter or digit.
var (
	dnsLabel     = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)
	dnsSubdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
)

var unsafeNameChars = regexp.MustCompile(`[^a-z0-9]+`)

func (b *builder) installation() (Object, error) {
	s := b.spec
	spec := map[string]any{"context": ObjectName(s.Name, "context", "")}
	switch {
	case s.Blueprint.Ref != "":
		if s.Component == nil {
			return Object{}, errors.New("a blueprint ref needs a component")
		}
		spec["blueprint"] = map[string]any{"ref": map[string]any{"resourceName": s.Blueprint.Ref}}
	case len(s.Files) > 0:
		fs, err := inlineFilesystem(s.Files)
		if err != nil {
			return Object{}, err
		}
		spec["blueprint"] = map[string]any{"inline": map[string]any{"filesystem": fs}}
	default:
		return Object{}, errors.New("no blueprint: neither files nor a ref")
	}
	if c := s.Component; c != nil {
		spec["componentDescriptor"] = map[string]any{"ref": map[string]any{"componentName": c.Name, "version": c.Version}}
	}
	if err := b.context(); err != nil {
		return Object{}, err
	}
	var data []any
	for _, n := range slices.Sorted(maps.Keys(s.Data)) {
		name := ObjectName(s.Name, "import", n)
		b.add(KindDataObject, GroupVersion.String(), name, map[string]any{"data": s.Data[n]})
		data = append(data, map[string]any{"name": n, "dataRef": name})
	}
	for _, n := range slices.Sorted(maps.Keys(s.SecretData)) {
		if _, dup := s.Data[n]; dup {
			return Object{}, fmt.Errorf("import %q is given as data and as secret data", n)
		}
		raw, err := json.Marshal(s.SecretData[n])
		if err != nil {
			return Object{}, fmt.Errorf("import %q: %w", n, err)
		}
		name := ObjectName(s.Name, "import", n)
		b.secret(name, "Opaque", map[string][]byte{secretValueKey: raw})
		data = append(data, map[string]any{"name": n, "secretRef": map[string]any{"name": name, "key": secretValueKey}})
	}
	slices.SortFunc(data, func(a, c any) int {
		return strings.Compare(entryName(a), entryName(c))
	})
	targets, err := b.targetImports()
	if err != nil {
		return Object{}, err
	}
	imports := map[string]any{}
	if len(data) > 0 {
		imports["data"] = data
	}
	if len(targets) > 0 {
		imports["targets"] = targets
	}
	if len(imports) > 0 {
		spec["imports"] = imports
	}
	exports := map[string]any{}
	var de, te []any
	for _, n := range slices.Sorted(slices.Values(s.DataExports)) {
		de = append(de, map[string]any{"name": n, "dataRef": ObjectName(s.Name, "export", n)})
	}
	for _, n := range slices.Sorted(slices.Values(s.TargetExports)) {
		te = append(te, map[string]any{"name": n, "target": ObjectName(s.Name, "export", n)})
	}
	if len(de) > 0 {
		exports["data"] = de
	}
	if len(te) > 0 {
		exports["targets"] = te
	}
	if len(exports) > 0 {
		spec["exports"] = exports
	}
	// A remote installation imports only objects written for it alone
	// (<name>.import.*, <name>.target.*), never a sibling's export, so it
	// tells Landscaper so: otherwise each of its reconciles lists every
	// Installation of the namespace from the API server to find the
	// siblings it waits for, and its deletion touches every sibling being
	// deleted, which costs in the square of the installations in a
	// namespace (bench/README.md, "200 remote installations").
	// hasNoSiblingExports is not set: an Installation written by hand may
	// import what this one exports.
	spec["optimization"] = map[string]any{"hasNoSiblingImports": true}
	if d := s.AutomaticReconcile; d > 0 {
		interval := map[string]any{"interval": d.String()}
		spec["automaticReconcile"] = map[string]any{"succeededReconcile": interval, "failedReconcile": maps.Clone(interval)}
	}
	body := map[string]any{"apiVersion": GroupVersion.String(), "kind": KindInstallation, "metadata": b.meta(s.Name), "spec": spec}
	return Object{Kind: KindInstallation, Name: s.Name, Body: body}, nil
}

// context writes the Context every remote installation names: where its
// component comes from, the registry pull secrets, the overwrites.
func (b *builder) context() error {
	s := b.spec
	name := ObjectName(s.Name, "context", "")
	body := map[string]any{}
	if c := s.Component; c != nil && c.RepositoryContext != nil {
		body["repositoryContext"] = c.RepositoryContext
	}
	if len(s.PullSecrets) > 0 {
		auths, err := dockerConfig(s.PullSecrets)
		if err != nil {
			return err
		}
		cfg, err := json.Marshal(auths)
		if err != nil {
			return err
		}
		secret := RegistrySecret(s.Name)
		b.secret(secret, dockerConfigType, map[string][]byte{".dockerconfigjson": cfg})
		body["registryPullSecrets"] = []any{map[string]any{"name": secret}}
	}
	if len(s.Overwrites) > 0 {
		ow := ObjectName(s.Name, "overwrites", "")
		list := make([]any, len(s.Overwrites))
		for i, o := range s.Overwrites {
			list[i] = map[string]any{"source": overwriteRef(o.Source), "substitution": overwriteRef(o.Substitution)}
		}
		b.add(KindOverwrites, GroupVersion.String(), ow, map[string]any{"overwrites": list})
		body["componentVersionOverwrites"] = ow
	}
	b.add(KindContext, GroupVersion.String(), name, body)
	return nil
}

func overwriteRef(r ocm.OverwriteRef) map[string]any {
	out := map[string]any{}
	if r.ComponentName != "" {
		out["componentName"] = r.ComponentName
	}
	if r.Version != "" {
		out["version"] = r.Version
	}
	if r.RepositoryContext != nil {
		out["repositoryContext"] = r.RepositoryContext
	}
	return out
}

// targetImports writes a Target (and the Secret holding its config) per
// target, and returns spec.imports.targets.
func (b *builder) targetImports() ([]any, error) {
	s := b.spec
	var out []any
	for _, n := range slices.Sorted(maps.Keys(s.Targets)) {
		name := ObjectName(s.Name, "target", n)
		if err := b.target(name, s.Targets[n]); err != nil {
			return nil, fmt.Errorf("target %q: %w", n, err)
		}
		out = append(out, map[string]any{"name": n, "target": name})
	}
	for _, n := range slices.Sorted(maps.Keys(s.TargetLists)) {
		names := []any{}
		for i, t := range s.TargetLists[n] {
			name := ObjectName(s.Name, "target", n+"."+strconv.Itoa(i))
			if err := b.target(name, t); err != nil {
				return nil, fmt.Errorf("target list %q[%d]: %w", n, i, err)
			}
			names = append(names, name)
		}
		out = append(out, map[string]any{"name": n, "targets": names})
	}
	for _, n := range slices.Sorted(maps.Keys(s.TargetMaps)) {
		m := map[string]any{}
		for _, k := range slices.Sorted(maps.Keys(s.TargetMaps[n])) {
			name := ObjectName(s.Name, "target", n+"."+k)
			if err := b.target(name, s.TargetMaps[n][k]); err != nil {
				return nil, fmt.Errorf("target map %q[%q]: %w", n, k, err)
			}
			m[k] = name
		}
		out = append(out, map[string]any{"name": n, "targetMap": m})
	}
	slices.SortFunc(out, func(a, c any) int {
		return strings.Compare(entryName(a), entryName(c))
	})
	return out, nil
}

// target writes a Target whose config sits in a Secret of the same name:
// Landscaper's controllers need it at rest, and a Secret is where a
// cluster keeps credentials.
func (b *builder) target(name string, t Target) error {
	if t.Type == "" {
		return errors.New("no type")
	}
	cfg := t.Config
	if len(cfg) == 0 {
		cfg = json.RawMessage("null")
	}
	b.secret(name, "Opaque", map[string][]byte{targetConfigKey: cfg})
	meta := b.meta(name)
	if len(t.Labels) > 0 {
		meta["labels"] = stringsToAny(t.Labels)
	}
	if len(t.Annotations) > 0 {
		meta["annotations"] = stringsToAny(t.Annotations)
	}
	b.add(KindTarget, GroupVersion.String(), name, map[string]any{"metadata": meta,
		"spec": map[string]any{"type": t.Type, "secretRef": map[string]any{"name": name, "key": targetConfigKey}}})
	b.objs[len(b.objs)-1].Points = &TargetPoints{Ref: t.Ref, Location: t.Location, Pointing: t.Pointing}
	return nil
}

// entryName is the name of an entry of spec.imports.
func entryName(e any) string {
	m, _ := e.(map[string]any)
	n, _ := m["name"].(string)
	return n
}

func stringsToAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// inlineFilesystem is Landscaper's YAML file system of the files: a
// directory is an object of its entries, a file its content as a string,
// binary content between Landscaper's binary markers.
func inlineFilesystem(files map[string][]byte) (map[string]any, error) {
	root := map[string]any{}
	for _, p := range slices.Sorted(maps.Keys(files)) {
		parts := strings.Split(strings.Trim(p, "/"), "/")
		dir := root
		for _, d := range parts[:len(parts)-1] {
			sub, ok := dir[d].(map[string]any)
			if !ok {
				if _, isFile := dir[d]; isFile {
					return nil, fmt.Errorf("blueprint file %s: %s is a file", p, d)
				}
				sub = map[string]any{}
				dir[d] = sub
			}
			dir = sub
		}
		leaf := parts[len(parts)-1]
		if _, dup := dir[leaf]; dup {
			return nil, fmt.Errorf("blueprint file %s is also a directory", p)
		}
		dir[leaf] = fileContent(files[p])
	}
	return root, nil
}

// fileContent is a file as Landscaper's YAML file system holds it: text as
// it is, anything else base64 between its markers (yamlfs.ToBinary).
func fileContent(data []byte) string {
	if isText(data) {
		return string(data)
	}
	return "---Start Binary---\n" + base64.StdEncoding.EncodeToString(data) + "\n---End Binary---"
}

func isText(data []byte) bool {
	if !utf8.Valid(data) {
		return false
	}
	s := string(data)
	// yamlfs reads a text whose first and last non-blank lines are the
	// binary markers as binary; such a file goes as binary too.
	return !strings.Contains(s, "---Start Binary---") && !strings.ContainsRune(s, 0)
}
