package provider

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/installation"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/lscluster"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/render"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/target"
)

// isLandscaperID tells an ID naming an Installation of a Landscaper
// cluster (<provider target>/<namespace>/<installation>) from the name of
// an installation, which holds no "/".
func isLandscaperID(id string) bool { return strings.Contains(id, "/") }

// importLandscaper takes over an Installation of a Landscaper resource
// cluster: its inputs become the resource's attributes (so that
// -generate-config-out writes a configuration that plans as it stands),
// its export DataObjects the exports, and private state the status the
// first apply adopts from (installation.Adopting): every deploy item that
// can takes Landscaper's objects and releases over in place. Nothing in
// the Landscaper cluster is written.
func (x *installations) importLandscaper(ctx context.Context, raw string) (tftypes.Value, []byte, problems) {
	var ps problems
	fail := func(summary, detail string) (tftypes.Value, []byte, problems) {
		ps.add(nil, summary, detail)
		return tftypes.Value{}, nil, ps
	}
	id, err := lscluster.ParseID(raw)
	if err != nil {
		return fail("Invalid import ID", err.Error())
	}
	r, rps := x.landscaperReader(id.Target, fmt.Sprintf("import ID %q", raw))
	if rps.errors() {
		return tftypes.Value{}, nil, rps
	}
	inst, err := r.Read(ctx, id.Namespace, id.Installation)
	if err != nil {
		return fail("Cannot read the Landscaper installation", fmt.Sprintf("reading Installation %s/%s from the cluster of provider target %q: %v",
			id.Namespace, id.Installation, id.Target, err))
	}
	for _, w := range inst.Warnings {
		ps.warn(nil, "Taken over from Landscaper with a change", w)
	}

	f := make(map[string]tftypes.Value, len(x.t.AttributeTypes))
	for n, at := range x.t.AttributeTypes {
		f[n] = tftypes.NewValue(at, nil)
	}
	f["name"] = stringValue(inst.Name)
	f["id"] = f["name"]
	f["blueprint"] = x.importedBlueprint(inst.Blueprint)
	f["component"] = x.importedComponent(inst.Component)
	if inst.Verification != "" {
		vt := as[tftypes.Object](x.t.AttributeTypes["verification"])
		f["verification"] = tftypes.NewValue(vt, map[string]tftypes.Value{"signature_name": stringValue(inst.Verification)})
	}

	// Only what the blueprint declares is an import of the resource:
	// Landscaper's Installation also holds the inputs of its
	// importDataMappings, already evaluated into the imports they make.
	src, _ := sourceOf(f)
	bp, err := x.load(ctx, src)
	if err != nil {
		return fail("Cannot load the installation's blueprint", fmt.Sprintf("Installation %s/%s: %v", id.Namespace, id.Installation, err))
	}
	decls, _ := render.Declarations(bp)
	declared := map[string]bool{}
	for _, d := range decls {
		declared[d.Name] = true
	}
	plain, secret := map[string]any{}, map[string]any{}
	for _, n := range slices.Sorted(maps.Keys(inst.Imports)) {
		imp := inst.Imports[n]
		switch {
		case !declared[n]:
		case imp.Sensitive:
			secret[n] = imp.Value
		default:
			plain[n] = imp.Value
		}
	}
	if f["imports"], err = importsValue(plain); err != nil {
		return fail("Import cannot be represented", err.Error())
	}
	if f[attrSensitiveImports], err = importsValue(secret); err != nil {
		return fail("Import cannot be represented", err.Error())
	}
	if len(secret) > 0 {
		ps.warn(attrPath(attrSensitiveImports), "Set sensitive_imports in the configuration", sensitiveImportsHint(inst))
	}
	ps = append(ps, x.importedTargets(f, inst.Targets, x.targets())...)
	if ps.errors() {
		return tftypes.Value{}, nil, ps
	}

	exports := map[string]any{}
	for n, e := range inst.Exports {
		if e.Known {
			exports[n] = e.Value
		}
	}
	st := installation.Adopting(inst.Adoptions())
	st.Exports.Data = exports
	if len(secret) > 0 {
		// Which exports a secret influenced is known once the tree has
		// rendered here; until then any might carry one, so all are held
		// as sensitive, as the first apply's derivation may still find.
		st.SensitiveExports = slices.Sorted(maps.Keys(exports))
	}
	if f["exports"], f[attrSensitiveExports], _, err = x.exportValues(st); err != nil {
		return fail("Export cannot be represented", err.Error())
	}
	priv, err := encodeInstallationPrivate(st)
	if err != nil {
		return fail("Cannot store the installation's status", err.Error())
	}
	return tftypes.NewValue(x.t, f), priv, ps
}

// landscaperReader reads the Landscaper resource cluster of the provider
// target name, which what (an import ID, say) names.
func (x *installations) landscaperReader(name, what string) (*lscluster.Reader, problems) {
	var ps problems
	fail := func(summary, detail string) (*lscluster.Reader, problems) {
		ps.add(nil, summary, detail)
		return nil, ps
	}
	pt := x.targets()
	if pt == nil || !pt.known || pt.pending[name] {
		return fail("Provider targets not known", fmt.Sprintf("%s reads the Landscaper cluster of the provider target %q: "+
			"the provider's targets must be configured with known values for it", what, name))
	}
	t, ok := pt.lookup(name)
	if !ok {
		return fail("Provider target not defined", fmt.Sprintf("%s names the provider target %q for the Landscaper "+
			"resource cluster, which the provider does not define; it defines: %s", what, name, pt.names()))
	}
	if t.Type != target.KubernetesClusterType {
		return fail("Not a Landscaper cluster target", fmt.Sprintf("provider target %q, named by %s for the Landscaper "+
			"resource cluster, is of type %s, not %s", name, what, t.Type, target.KubernetesClusterType))
	}
	rc, err := target.RESTConfig(t.Config)
	if err != nil {
		return fail("Invalid Landscaper cluster target", fmt.Sprintf("provider target %q: %v", name, err))
	}
	r, err := lscluster.New(rc)
	if err != nil {
		return fail("Cannot read the Landscaper cluster", fmt.Sprintf("provider target %q: %v", name, err))
	}
	return r, ps
}

// sensitiveImportsHint tells what to write instead of the
// `sensitive_imports = null` Terraform generates: the attribute is
// sensitive as a whole, so Terraform writes no value of it into a file,
// and the configuration does not plan until it is set. It names each
// import with where its value came from, and gives the line to put in,
// one variable per import (the values never leave the state and the
// Secret).
func sensitiveImportsHint(inst *lscluster.Installation) string {
	var from, entries, vars []string
	for _, n := range slices.Sorted(maps.Keys(inst.Imports)) {
		imp := inst.Imports[n]
		if !imp.Sensitive {
			continue
		}
		source := fmt.Sprintf("%s %s", imp.Source, imp.Object)
		if imp.Source == lscluster.SourceMapping {
			source = "spec.importDataMappings, which carries a Secret's or a Target config's value"
		}
		v := hclIdentifier(inst.Name + "_" + n)
		from = append(from, fmt.Sprintf("  - %s: %s", n, source))
		entries = append(entries, fmt.Sprintf("%s = var.%s", hclKey(n), v))
		vars = append(vars, fmt.Sprintf("  variable %q {\n    sensitive = true\n  }", v))
	}
	return fmt.Sprintf("These imports of Installation %s/%s hold Secrets' values; the values are in the state:\n\n%s\n\n"+
		"Terraform writes sensitive_imports, which is sensitive as a whole, as null into the configuration it generates, "+
		"so that configuration does not plan as it stands. Replace that line with:\n\n  sensitive_imports = { %s }\n\n"+
		"and declare the variables, set from the Secrets or your secret store (TF_VAR_<name>):\n\n%s",
		inst.Namespace, inst.Name, strings.Join(from, "\n"), strings.Join(entries, ", "), strings.Join(vars, "\n"))
}

// hclIdentifier turns s into a Terraform identifier of letters, digits
// and underscores, not starting with a digit. (Terraform allows dashes
// too, but var.a-b reads like a subtraction.)
func hclIdentifier(s string) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_':
		default:
			b[i] = '_'
		}
	}
	if len(b) == 0 || b[0] >= '0' && b[0] <= '9' {
		b = append([]byte{'_'}, b...)
	}
	return string(b)
}

// hclKey writes an object key: bare where it is an identifier, quoted
// otherwise.
func hclKey(s string) string {
	if hclIdentifier(s) == s {
		return s
	}
	return fmt.Sprintf("%q", s)
}

func (x *installations) importedBlueprint(b lscluster.Blueprint) tftypes.Value {
	bt := as[tftypes.Object](x.t.AttributeTypes["blueprint"])
	v := map[string]tftypes.Value{}
	for n, at := range bt.AttributeTypes {
		v[n] = tftypes.NewValue(at, nil)
	}
	if b.Ref != "" {
		v["ref"] = stringValue(b.Ref)
	}
	if len(b.Filesystem) > 0 {
		v["filesystem"] = stringMapValue(bt.AttributeTypes["filesystem"], b.Filesystem)
	}
	return tftypes.NewValue(bt, v)
}

func (x *installations) importedComponent(c *lscluster.Component) tftypes.Value {
	ct := as[tftypes.Object](x.t.AttributeTypes["component"])
	if c == nil {
		return tftypes.NewValue(ct, nil)
	}
	v := map[string]tftypes.Value{}
	for n, at := range ct.AttributeTypes {
		v[n] = tftypes.NewValue(at, nil)
	}
	v["name"], v["version"] = stringValue(c.Name), stringValue(c.Version)
	if len(c.RepositoryContext) > 0 {
		rc := map[string]string{}
		for k, val := range c.RepositoryContext {
			rc[k] = fmt.Sprint(val)
		}
		v[attrRepositoryContext] = stringMapValue(ct.AttributeTypes[attrRepositoryContext], rc)
	}
	return tftypes.NewValue(ct, v)
}

// importsValue is a dynamic imports attribute: an object, null when empty.
func importsValue(m map[string]any) (tftypes.Value, error) {
	if len(m) == 0 {
		return dynamicNull, nil
	}
	attrs := map[string]tftypes.Value{}
	typs := map[string]tftypes.Type{}
	for _, n := range slices.Sorted(maps.Keys(m)) {
		v, err := anyToValueJSON(m[n])
		if err != nil {
			return dynamicNull, fmt.Errorf("import %q: %w", n, err)
		}
		attrs[n], typs[n] = v, v.Type()
	}
	return tftypes.NewValue(tftypes.Object{AttributeTypes: typs}, attrs), nil
}

// importedTargets sets targets, target_lists and target_maps to
// references to the provider's targets by the Targets' names. A Target the
// provider does not define is an error naming it and its type: its config
// never leaves the Landscaper cluster, the user defines it.
func (x *installations) importedTargets(f map[string]tftypes.Value, imports map[string]lscluster.TargetImport, pt *providerTargets) problems {
	var ps problems
	tt := as[tftypes.Map](x.t.AttributeTypes[attrTargets])
	elem := as[tftypes.Object](tt.ElementType)
	ref := func(at *tftypes.AttributePath, r lscluster.TargetRef) tftypes.Value {
		if _, ok := pt.lookup(r.Name); !ok {
			ps.add(at, "Provider target not defined", fmt.Sprintf("the Installation imports Target %q (object %s) of type %s; "+
				"define a provider target of that name and type, with its config, and import again; the provider defines: %s",
				r.Name, r.Object, r.Type, pt.names()))
		}
		v := map[string]tftypes.Value{}
		for n, at := range elem.AttributeTypes {
			v[n] = tftypes.NewValue(at, nil)
		}
		v["name"] = stringValue(r.Name)
		return tftypes.NewValue(elem, v)
	}
	single, lists, tmaps := map[string]tftypes.Value{}, map[string]tftypes.Value{}, map[string]tftypes.Value{}
	lt := as[tftypes.Map](x.t.AttributeTypes["target_lists"])
	mt := as[tftypes.Map](x.t.AttributeTypes["target_maps"])
	for _, n := range slices.Sorted(maps.Keys(imports)) {
		ti := imports[n]
		switch {
		case ti.Target != nil:
			single[n] = ref(attrPath(attrTargets).WithElementKeyString(n), *ti.Target)
		case ti.Map != nil:
			m := map[string]tftypes.Value{}
			for _, k := range slices.Sorted(maps.Keys(ti.Map)) {
				m[k] = ref(attrPath("target_maps").WithElementKeyString(n).WithElementKeyString(k), ti.Map[k])
			}
			tmaps[n] = tftypes.NewValue(mt.ElementType, m)
		default:
			l := make([]tftypes.Value, 0, len(ti.List))
			for i, r := range ti.List {
				l = append(l, ref(attrPath("target_lists").WithElementKeyString(n).WithElementKeyInt(i), r))
			}
			lists[n] = tftypes.NewValue(lt.ElementType, l)
		}
	}
	if len(single) > 0 {
		f[attrTargets] = tftypes.NewValue(tt, single)
	}
	if len(lists) > 0 {
		f["target_lists"] = tftypes.NewValue(lt, lists)
	}
	if len(tmaps) > 0 {
		f["target_maps"] = tftypes.NewValue(mt, tmaps)
	}
	return ps
}

// importedInputs are the attributes an import reads from the Installation
// that decide what its exports are.
var importedInputs = []string{"name", "blueprint", "component", "verification", "imports", attrSensitiveImports,
	attrTargets, "target_lists", "target_maps"}

// importedExports are the exports an import read from the Landscaper
// cluster's export DataObjects, for the plan of the first apply: what
// reads them then plans with their values in the same plan as the import.
// They hold only while the installation has not run here (st is the
// imported status), its inputs are as imported (so the run computes what
// Landscaper computed from them), no secret is among the inputs (an
// export a secret influenced moves to sensitive_exports) and every data
// export the blueprint declares was read. The apply checks that the run
// agrees (importedExportsDiffer).
func importedExports(prior, config map[string]tftypes.Value, st *installation.Status, bp installation.Blueprint) (tftypes.Value, bool) {
	if prior == nil || st == nil || st.JobID != "" || !config[attrSensitiveImports].IsNull() || !prior[attrSensitiveExports].IsNull() {
		return tftypes.Value{}, false
	}
	for _, a := range importedInputs {
		if !prior[a].Equal(config[a]) {
			return tftypes.Value{}, false
		}
	}
	exports := prior["exports"]
	if !exports.IsFullyKnown() || exports.IsNull() {
		return tftypes.Value{}, false
	}
	var read map[string]tftypes.Value
	if exports.As(&read) != nil {
		return tftypes.Value{}, false
	}
	_, decls := render.Declarations(bp)
	for _, d := range decls {
		if v, ok := read[d.Name]; d.Type == "data" && (!ok || v.IsNull()) {
			return tftypes.Value{}, false
		}
	}
	return exports, true
}

// importedExportsDiffer says which exports the first run after an import
// computed otherwise than the Landscaper cluster's DataObjects held, which
// the plan promised: what read them was planned with values that are no
// longer true, so the apply fails, naming them, instead of leaving
// Terraform to report an inconsistent provider. The state keeps what the
// run computed.
func importedExportsDiffer(promised, got tftypes.Value) problems {
	var ps problems
	if !promised.IsFullyKnown() || promised.IsNull() || promised.Equal(got) {
		return ps
	}
	var was, now map[string]tftypes.Value
	if promised.As(&was) != nil || got.As(&now) != nil {
		return ps
	}
	var names []string
	for _, n := range slices.Sorted(maps.Keys(was)) {
		if v, ok := now[n]; !ok || !v.Equal(was[n]) {
			names = append(names, n)
		}
	}
	ps.add(attrPath("exports"), "Exports differ from Landscaper's", fmt.Sprintf("the first apply after the import from Landscaper "+
		"computed the exports %s otherwise than the Installation's export DataObjects held, which the plan used: what reads them "+
		"was planned with the old values. The installation ran and its state holds the new exports; plan and apply again to "+
		"pass them on.", strings.Join(names, ", ")))
	return ps
}
