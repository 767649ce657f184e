package atrest_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/atrest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/mock"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/installation"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/render"
)

// treeBlueprint gives the password to an item as part of a basic-auth
// value (with the user), to a sub-installation through a data object, and
// to an export; a Kubernetes Secret literal sits in another item; the
// user alone reaches "plain".
const treeBlueprint = `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: user, schema: {type: string}}
  - {name: password, schema: {type: string}}
exports:
  - {name: who, schema: {type: string}}
  - {name: token, schema: {type: string}}
  - {name: child, schema: {type: string}}
deployExecutions:
  - name: x
    type: GoTemplate
    template: |
      deployItems:
        - name: auth
          type: landscaper.gardener.cloud/mock
          config:
            export: {header: {{ printf "%s:%s" .imports.user .imports.password | b64enc | quote }}}
        - name: plain
          type: landscaper.gardener.cloud/mock
          config:
            export: {user: {{ .imports.user | quote }}}
        - name: literal
          type: landscaper.gardener.cloud/mock
          config:
            providerStatus: {apiVersion: v1, kind: Secret, metadata: {name: s}, stringData: {key: not-from-an-import}}
subinstallations:
  - apiVersion: landscaper.gardener.cloud/v1alpha1
    kind: InstallationTemplate
    name: child
    blueprint: {ref: cd://resources/none}
    imports:
      data:
        - {name: secret, dataRef: password}
    exports:
      data:
        - {name: derived, dataRef: fromChild}
exportExecutions:
  - name: x
    type: GoTemplate
    template: |
      exports:
        who: {{ .imports.user | quote }}
        token: {{ printf "tok-%s" .imports.password | quote }}
        child: {{ .dataobjects.fromChild | quote }}
`

const childBlueprint = `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: secret, schema: {type: string}}
exports:
  - {name: derived, schema: {type: string}}
deployExecutions:
  - name: x
    type: GoTemplate
    template: |
      deployItems:
        - name: echo
          type: landscaper.gardener.cloud/mock
          config:
            export: {upper: {{ .imports.secret | upper | quote }}}
exportExecutions:
  - name: x
    type: GoTemplate
    template: |
      exports:
        derived: {{ .deployitems.echo.upper | quote }}
`

func registry() *deployer.Registry {
	reg := deployer.NewRegistry()
	reg.Register(mock.New(), "landscaper.gardener.cloud/mock", "mock")
	return reg
}

func load(t *testing.T) installation.Blueprint {
	t.Helper()
	root := strings.Replace(treeBlueprint, "blueprint: {ref: cd://resources/none}",
		"blueprint: {filesystem: {blueprint.yaml: "+quote(childBlueprint)+"}}", 1)
	bp, err := render.Load(context.Background(), render.Source{Filesystem: map[string]string{"blueprint.yaml": root}},
		render.Options{Deployers: registry()})
	if err != nil {
		t.Fatal(err)
	}
	return bp
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

func imports(user, password, version string) installation.Imports {
	imp := installation.Imports{Data: map[string]any{"user": user, "password": password}}
	return atrest.Sealed(imp, []string{"password"}, version)
}

// apply runs the tree through seal and returns the status as it ran and
// as it is kept.
func apply(t *testing.T, bp installation.Blueprint, imp installation.Imports, prev *installation.Status) (ran, kept *installation.Status) {
	t.Helper()
	var version string
	for _, v := range imp.Sealed { // one version stands for all
		version = strings.TrimPrefix(v, "sealed:")
	}
	seal := atrest.New(version, nil)
	if prev != nil && atrest.Forced(prev) {
		if p, err := installation.PlanTree(context.Background(), seal.Blueprint(bp), imp, prev, "", nil); err == nil && !p.Noop {
			prev = atrest.Force(prev)
		}
	}
	r := &installation.Runner{Engine: engine.New(registry(), 0), Name: "app"}
	ran = r.Apply(context.Background(), seal.Blueprint(bp), imp, prev)
	if !ran.Succeeded() {
		t.Fatalf("apply: %+v", ran.LastError)
	}
	// The caller masks what the renderings found derived, as the
	// provider's literal masking does.
	mask := func(raw json.RawMessage) json.RawMessage {
		text := string(raw)
		for _, d := range seal.Derived() {
			text = strings.ReplaceAll(text, d, "***")
		}
		return json.RawMessage(text)
	}
	return ran, seal.Status(ran, registry(), mask)
}

func stored(t *testing.T, st *installation.Status) string {
	t.Helper()
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// What is kept of a tree holds no form of the password, in configs, item
// exports, node exports (the sub-installation's too) or hashes; what the
// tree ran with was the real password.
func TestStatusKeepsNoSecret(t *testing.T) {
	const pw = "s3cr3t-pw-0001"
	bp := load(t)
	ran, kept := apply(t, bp, imports("admin", pw, "1"), nil)
	if got := ran.Exports.Data["child"]; got != strings.ToUpper(pw) {
		t.Fatalf("the tree ran with %v, not the password", got)
	}
	text := stored(t, kept)
	for _, form := range []string{pw, strings.ToUpper(pw), base64.StdEncoding.EncodeToString([]byte("admin:" + pw)), "tok-" + pw,
		"not-from-an-import"} {
		if strings.Contains(text, form) {
			t.Errorf("the kept status holds %q:\n%s", form, text)
		}
	}
	// What no secret reached is kept as it is.
	for _, want := range []string{`"user":"admin"`, `"who":"admin"`} {
		if !strings.Contains(text, want) {
			t.Errorf("the kept status lost %s", want)
		}
	}
	auth := kept.Execution.Items["auth"]
	if !auth.Spec.Withheld || !auth.ExportWithheld || kept.Execution.Items["plain"].Spec.Withheld ||
		!kept.Execution.Items["literal"].Spec.Withheld {
		t.Errorf("withheld: auth %v/%v, plain %v, literal %v", auth.Spec.Withheld, auth.ExportWithheld,
			kept.Execution.Items["plain"].Spec.Withheld, kept.Execution.Items["literal"].Spec.Withheld)
	}
	for _, n := range []string{"token", "child"} {
		if _, ok := kept.Exports.Sealed[n]; !ok {
			t.Errorf("export %q is not sealed: %v", n, kept.Exports.Sealed)
		}
	}
	if _, ok := kept.Exports.Sealed["who"]; ok {
		t.Error("an export no secret reached is sealed")
	}
}

// A new password under the same version changes nothing; a new version
// runs exactly the items the password reaches (and the sub-installation
// that imports it), and a change of the user runs the items the user
// reaches, the masked auth header included.
func TestWhatRunsAgain(t *testing.T) {
	bp := load(t)
	ctx := context.Background()
	_, kept := apply(t, bp, imports("admin", "first-pw-1", "1"), nil)
	plan := func(imp installation.Imports) *installation.Plan {
		t.Helper()
		seal := atrest.New(imp.Sealed["password"][len("sealed:"):], nil)
		p, err := installation.PlanTree(ctx, seal.Blueprint(bp), imp, kept, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		if !p.Noop && atrest.Forced(kept) {
			if p, err = installation.PlanTree(ctx, seal.Blueprint(bp), imp, atrest.Force(kept), "", nil); err != nil {
				t.Fatal(err)
			}
		}
		return p
	}
	if p := plan(imports("admin", "second-pw-2", "1")); !p.Noop {
		t.Errorf("a new password under the same version plans %v", p.Job.Run)
	}
	p := plan(imports("admin", "second-pw-2", "2"))
	if p.Noop || strings.Join(p.Job.Run, ",") != "auth,literal" {
		t.Errorf("a new version runs %v at the root, want auth and literal", p.Job.Run)
	}
	if len(p.Subs) != 1 || strings.Join(p.Subs[0].Job.Run, ",") != "echo" {
		t.Errorf("a new version: the sub-installation plans %+v", p.Subs)
	}
	p = plan(imports("root", "first-pw-1", "1"))
	if strings.Join(p.Job.Run, ",") != "auth,literal,plain" {
		t.Errorf("a new user runs %v, want every item it reaches, masked or not", p.Job.Run)
	}
}

// A tree that runs anything runs again what its kept status masked (item
// exports, node exports) before anyone uses it, so exports flow as they
// were computed, not as they were kept.
func TestForcedRunRestoresExports(t *testing.T) {
	bp := load(t)
	_, kept := apply(t, bp, imports("admin", "first-pw-1", "1"), nil)
	ran, _ := apply(t, bp, imports("root", "first-pw-1", "1"), kept)
	if ran.Exports.Data["child"] != "FIRST-PW-1" || ran.Exports.Data["token"] != "tok-first-pw-1" {
		t.Errorf("exports after a forced run: %v", ran.Exports.Data)
	}
	if len(ran.Execution.Items["auth"].Export) == 0 || strings.Contains(string(ran.Execution.Items["auth"].Export), "***") {
		t.Errorf("auth ran with a masked export: %s", ran.Execution.Items["auth"].Export)
	}
}

// Template state a secret influenced would have to be kept: refused.
func TestTemplateStateFromASecretIsRefused(t *testing.T) {
	bp, err := render.Load(context.Background(), render.Source{Filesystem: map[string]string{"blueprint.yaml": `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: password, schema: {type: string}}
deployExecutions:
  - name: x
    type: GoTemplate
    template: |
      state: {kept: {{ .imports.password | quote }}}
      deployItems: []
`}}, render.Options{Deployers: registry()})
	if err != nil {
		t.Fatal(err)
	}
	seal := atrest.New("1", nil)
	imp := atrest.Sealed(installation.Imports{Data: map[string]any{"password": "pw-in-state"}}, []string{"password"}, "1")
	if _, err := seal.Blueprint(bp).Render(context.Background(), installation.Input{Imports: imp}); err == nil ||
		!strings.Contains(err.Error(), "template state") || strings.Contains(err.Error(), "pw-in-state") {
		t.Errorf("render: %v", err)
	}
}

// Only deployers that can delete from a masked config may delete an item
// whose config was withheld.
func TestUndeletable(t *testing.T) {
	reg := registry()
	reg.Register(noSealer{}, "exec")
	spec := engine.ItemSpec{Type: "exec", Withheld: true}
	if !atrest.Undeletable(reg, spec) {
		t.Error("an exec item with a withheld config counts as deletable")
	}
	spec.Type = "mock"
	if atrest.Undeletable(reg, spec) {
		t.Error("a mock item counts as undeletable")
	}
}

type noSealer struct{}

func (noSealer) Validate(json.RawMessage) error { return nil }
func (noSealer) Reconcile(context.Context, deployer.Request) (deployer.Result, error) {
	return deployer.Result{}, nil
}
func (noSealer) Delete(context.Context, deployer.Request) (deployer.Result, error) {
	return deployer.Result{}, nil
}

// An item or sub-installation named after a sealed value (a digest of it,
// to keep names unique per database) would be kept under that name in
// private state, where no key can hide it: refused, naming the node.
func TestNamesFromASecretAreRefused(t *testing.T) {
	const pw = "pw-in-a-name-9"
	for _, tc := range []struct{ name, template string }{
		{"item", `deployItems:
        - name: db-{{ .imports.password | sha256sum | trunc 12 }}
          type: landscaper.gardener.cloud/mock
          config: {}`},
		{"item type", `deployItems:
        - name: db
          type: {{ if hasPrefix "pw" .imports.password }}landscaper.gardener.cloud/mock{{ else }}mock{{ end }}
          config: {}`},
		{"sub-installation", `deployItems: []
subinstallationExecutions:
  - name: x
    type: GoTemplate
    template: |
      subinstallations:
        - apiVersion: landscaper.gardener.cloud/v1alpha1
          kind: InstallationTemplate
          name: db-{{ .imports.password | sha256sum | trunc 12 }}
          blueprint: {filesystem: {blueprint.yaml: "kind: Blueprint\napiVersion: landscaper.gardener.cloud/v1alpha1\n"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bp, err := render.Load(context.Background(), render.Source{Filesystem: map[string]string{"blueprint.yaml": `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: password, schema: {type: string}}
deployExecutions:
  - name: x
    type: GoTemplate
    template: |
      ` + tc.template + `
`}}, render.Options{Deployers: registry()})
			if err != nil {
				t.Fatal(err)
			}
			imp := atrest.Sealed(installation.Imports{Data: map[string]any{"password": pw}}, []string{"password"}, "1")
			_, err = atrest.New("1", nil).Blueprint(bp).Render(context.Background(), installation.Input{Imports: imp})
			if err == nil || !strings.Contains(err.Error(), "write-only secret") {
				t.Errorf("render: %v", err)
			}
		})
	}
}

// A sealed value's influence can hide from one stand-in: a && b with a
// true and b false is false for the real value and for both flipped; 50
// and its rotated digits are both over ten. The renderings that flip each
// boolean alone, and draw numbers at random, find it, as the masking of
// plans does; what they find is withheld at rest.
func TestBranchesOnSeveralSealedValuesAreFound(t *testing.T) {
	bp, err := render.Load(context.Background(), render.Source{Filesystem: map[string]string{"blueprint.yaml": `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: flags, schema: {type: object}}
  - {name: size, schema: {type: integer}}
exports:
  - {name: both, schema: {type: boolean}}
deployExecutions:
  - name: x
    type: GoTemplate
    template: |
      deployItems:
        - name: both
          type: landscaper.gardener.cloud/mock
          config:
            export: {both: {{ and .imports.flags.a .imports.flags.b }}}
        - name: size
          type: landscaper.gardener.cloud/mock
          config:
            export: {class: {{ if gt (int .imports.size) 10 }}large{{ else }}small{{ end }}}
        - name: plain
          type: landscaper.gardener.cloud/mock
          config:
            export: {fixed: yes}
exportExecutions:
  - name: x
    type: GoTemplate
    template: |
      exports:
        both: {{ and .imports.flags.a .imports.flags.b }}
`}}, render.Options{Deployers: registry()})
	if err != nil {
		t.Fatal(err)
	}
	imp := installation.Imports{Data: map[string]any{"flags": map[string]any{"a": true, "b": false}, "size": json.Number("50")}}
	imp = atrest.Sealed(imp, []string{"flags", "size"}, "1")
	_, kept := apply(t, bp, imp, nil)
	for _, n := range []string{"both", "size"} {
		if is := kept.Execution.Items[n]; !is.Spec.Withheld {
			t.Errorf("item %q is kept as it is: %s", n, is.Spec.Config)
		}
	}
	if kept.Execution.Items["plain"].Spec.Withheld {
		t.Error("an item no sealed value reached is withheld")
	}
	if _, ok := kept.Exports.Sealed["both"]; !ok {
		t.Errorf("the export a && b is not sealed: %v", kept.Exports.Data)
	}
}
