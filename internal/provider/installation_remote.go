package provider

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/installation"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/lscluster"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/masking"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/privatestate"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/render"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/target"
)

// Remote mode: landscaper_installation with landscaper_cluster hands the
// installation to a Landscaper resource cluster. The tree is still
// rendered in-process at plan time, as a review surface; what runs is
// Landscaper's. The objects come from lscluster.Spec, the waiting and
// reading from lscluster.Writer; this file only maps attributes to them.

const (
	attrLandscaperCluster  = "landscaper_cluster"
	attrLandscaperObjects  = "landscaper_objects"
	attrAutomaticReconcile = "automatic_reconcile"
)

// remoteState is what private state keeps of an installation a Landscaper
// cluster runs; storedInstallation.Status then holds Landscaper's tree.
type remoteState struct {
	Target    string `json:"target"`
	Namespace string `json:"namespace"`
	// Owner is the resource's identity on the Landscaper cluster
	// (lscluster.Owner): what it wrote carries it, and nothing else is
	// overwritten or deleted. It is made when the resource first writes.
	Owner string `json:"owner,omitempty"`
	// Objects are the records (lscluster.Object.Record) of the objects
	// written, in the order written: what a refresh compares the cluster
	// with, and what destroy deletes. A record keeps no secret.
	Objects []lscluster.Object `json:"objects"`
	// Trigger is the reconcile_trigger of the last job.
	Trigger string `json:"trigger,omitempty"`
	// Drifted names the objects the last refresh found changed or gone.
	Drifted []string `json:"drifted,omitempty"`
	// Unreconciled says the last apply may have written objects without
	// starting Landscaper's job for them (a write or the reconcile
	// annotation failed, the apply was cut short): the records and the
	// status then agree with a configuration Landscaper never ran, so
	// the next plan must plan an update rather than nothing.
	Unreconciled bool `json:"unreconciled,omitempty"`
	// Input is the installation.InputHash of the last apply: a move back
	// in-process must run from the same blueprint and imports.
	Input string `json:"input,omitempty"`
	// Released is set once a move back in-process has started releasing
	// the Installation: what each deploy item adopts, read before
	// Landscaper let go of any.
	Released map[string]*deployer.Adoption `json:"released,omitempty"`
	// Server is the API server the objects were written to. A provider
	// target pointed at another cluster since must not read them as gone,
	// nor write or delete on that other cluster: what was written would
	// be left behind, tracked by no state.
	Server string `json:"server,omitempty"`
	// NamespaceUID is the UID of Namespace on that server (lscluster.Reader.
	// NamespaceUID): another cluster may answer at the same URL. ""
	// when the credentials may not read it, or in the state of an earlier
	// build until the next apply, or a refresh that finds this resource's
	// Installation, records it.
	NamespaceUID string `json:"namespace_uid,omitempty"`
}

// entering tells a remote plan or apply of an installation that ran
// in-process: a move to the Landscaper cluster.
func entering(saved storedInstallation) bool { return saved.Remote == nil && saved.Status != nil }

// remoteCluster reads landscaper_cluster; set is false in-process, known
// false while a part of it is unknown.
func remoteCluster(f map[string]tftypes.Value) (target, namespace string, set, known bool) {
	v := f[attrLandscaperCluster]
	if v.IsNull() {
		return "", "", false, true
	}
	if !v.IsFullyKnown() {
		return "", "", true, false
	}
	c := fields(v)
	return str(c["target"]), str(c["namespace"]), true, true
}

// validateRemote refuses, at validate and plan time, what remote mode
// cannot hand to Landscaper, saying why.
func validateRemote(f map[string]tftypes.Value) problems {
	var ps problems
	if ar := f[attrAutomaticReconcile]; !ar.IsNull() {
		at := attrPath(attrAutomaticReconcile).WithAttributeName("interval")
		if iv := fields(ar)["interval"]; ar.IsKnown() && iv.IsKnown() {
			if d, err := time.ParseDuration(str(iv)); err != nil || d <= 0 {
				ps.add(at, "Invalid interval", fmt.Sprintf("%q is not a positive duration such as \"1h\" or \"30m\"", str(iv)))
			}
		}
		if f[attrLandscaperCluster].IsNull() {
			ps.add(attrPath(attrAutomaticReconcile), "Only on a Landscaper cluster", attrAutomaticReconcile+" needs "+
				attrLandscaperCluster+": in-process, nothing runs between applies, so nothing could reconcile on its own.")
		}
	}
	if v := f[attrLandscaperCluster]; v.IsNull() {
		return ps
	}
	c := fields(f[attrLandscaperCluster])
	if ns := c["namespace"]; ns.IsKnown() && !ns.IsNull() {
		// A Kubernetes namespace: a DNS label, no upper case, no '_'.
		if err := lscluster.CheckNamespace(str(ns)); err != nil {
			ps.add(attrPath(attrLandscaperCluster).WithAttributeName("namespace"), "Invalid namespace", err.Error())
		}
	}
	why := "Landscaper's controllers run on the Landscaper cluster and read components from a registry; "
	comp := fields(f["component"])
	if cs := comp["constructors"]; cs.IsKnown() && !cs.IsNull() {
		ps.add(attrPath("component").WithAttributeName("constructors"), "Not possible on a Landscaper cluster",
			why+"component constructors are files on this machine, which Landscaper cannot read. Transfer the component "+
				"to a registry (ocm transfer) and give its repository_context.")
	}
	if r := comp["repository"]; r.IsKnown() && !r.IsNull() {
		ps.add(attrPath("component").WithAttributeName("repository"), "Not possible on a Landscaper cluster",
			why+"a local transport archive or component archive is a file on this machine, which Landscaper cannot "+
				"read. Transfer it to a registry (ocm transfer ctf) and give its repository_context.")
	}
	for _, a := range []struct{ name, why string }{
		{attrRollout, "Landscaper has no rollouts: it runs every deploy item of a job."},
		{"verification", "the provider verifies signatures in-process; on a Landscaper cluster that is Landscaper's " +
			"own verification, configured there."},
		{attrSensitiveImportsWO, "Landscaper's controllers read imports from Secrets in the cluster, so a write-only " +
			"value would be kept at rest there; use sensitive_imports."},
	} {
		if v := f[a.name]; !v.IsKnown() || !v.IsNull() {
			ps.add(attrPath(a.name), "Not possible on a Landscaper cluster", a.name+" cannot be used with "+attrLandscaperCluster+": "+a.why)
		}
	}
	return ps
}

// remoteRun is an installation rendered for a Landscaper cluster.
type remoteRun struct {
	spec lscluster.Spec
	objs []lscluster.Object
	plan *installation.Plan
	bp   installation.Blueprint
	imp  installation.Imports
	sec  *masking.Tree
	// credentials are the strings of the provider targets' configs, which
	// the tree's masking never sees (the tree holds references), but
	// Landscaper's messages might quote.
	credentials []string
}

// mask masks what run knows to be secret in a message: the tree's
// secrets, and the provider targets' credentials.
func (run *remoteRun) mask(text string) string {
	text = run.sec.Text(text)
	for _, c := range run.credentials {
		text = strings.ReplaceAll(text, c, mask)
	}
	return text
}

// exportsMayHoldSecrets says whether the data exports Landscaper computed
// may carry a secret, and are then all held as sensitive: which of them a
// secret influenced is not known from Landscaper, which runs the export
// executions on its own. They may when the tree holds a secret: a
// sensitive import, an inline target config, or an item exporting from a
// Kubernetes Secret, among the items the provider rendered or those
// Landscaper rendered on its own (a sub-installation whose imports were
// known only there). A tree whose targets are all provider targets,
// passed as references, holds none.
func (run *remoteRun) exportsMayHoldSecrets(tree *lscluster.Tree) bool {
	if len(run.spec.SecretData) > 0 || masking.HoldsSecrets(run.imp, nil, nil, renderedSpecs(run.plan)) {
		return true
	}
	specs := map[string]engine.ItemSpec{}
	for key, di := range tree.DeployItems {
		specs[key] = engine.ItemSpec{Type: di.Type, Config: di.Config}
	}
	return masking.HoldsSecrets(installation.Imports{}, nil, nil, specs)
}

// remoteSecrets masks what a refresh or a destroy in remote mode says
// (Landscaper's messages, API errors) as apply masks it (run.mask): the
// sensitive imports, the inline target configs, and the credentials of
// every provider target, as which of them the tree imports is not
// rendered there.
func (x *installations) remoteSecrets(f map[string]tftypes.Value) *masking.Tree {
	pt := x.targets()
	imp, _, _ := importsOf(f, pt)
	sec := secretsOf(f, imp)
	for _, c := range pt.credentials() {
		sec.AddText(c)
	}
	for _, c := range registrySecrets(x.registryCredentials()) {
		sec.AddText(c)
	}
	return sec
}

// remoteHoldsSecrets says, for a refresh or destroy, whether the tree
// may hold a secret (see exportsMayHoldSecrets): sensitive imports, an
// inline target config, or exports the last apply held as sensitive.
func (x *installations) remoteHoldsSecrets(st *installation.Status, f map[string]tftypes.Value) bool {
	imp, _, _ := importsOf(f, x.targets())
	return len(secretsOf(f, imp).List()) > 0 || st != nil && len(st.SensitiveExports) > 0
}

// credentials are the strings of every provider target's config. Apply,
// refresh and destroy mask them all alike: which of them the tree imports
// (a target, a list element, a map entry) is beside the point when a
// Landscaper message quotes one.
func (pt *providerTargets) credentials() []string {
	if pt == nil {
		return nil
	}
	var out []string
	for _, t := range pt.byName {
		out = append(out, credentialStrings(t.Config)...)
	}
	return out
}

// registrySecrets are the passwords and tokens of registry credentials.
func registrySecrets(creds map[string]lscluster.RegistryAuth) []string {
	var out []string
	b64 := base64.StdEncoding.EncodeToString
	for _, c := range creds {
		for _, s := range []string{c.Password, c.Token} {
			if s != "" {
				// The pull secret also carries the password as the
				// dockerconfig's auth (base64 of user:password), and a
				// message may quote either encoded.
				out = append(out, s, b64([]byte(s)))
			}
		}
		if c.Password != "" {
			out = append(out, b64([]byte(c.Username+":"+c.Password)))
		}
	}
	return out
}

// longestFirst orders strings to mask so that a string is masked before
// a part of it, which would otherwise leave the rest showing.
func longestFirst(ss []string) []string {
	slices.SortStableFunc(ss, func(a, b string) int { return len(b) - len(a) })
	return ss
}

// credentialStrings are the string values in a target config, and in the
// YAML documents (a kubeconfig) among them, long enough to be a secret.
func credentialStrings(config []byte) []string {
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for _, e := range v {
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		case string:
			if len(v) < 8 {
				return
			}
			out = append(out, v)
			var doc any
			if strings.Contains(v, "\n") && yaml.Unmarshal([]byte(v), &doc) == nil {
				walk(doc)
			}
		}
	}
	var v any
	if yaml.Unmarshal(config, &v) == nil {
		walk(v)
	}
	return longestFirst(out)
}

// renderRemote renders the tree in-process, as a plan shows it, and the
// objects that hand it to Landscaper; nil while inputs are unknown or on
// problems.
func (x *installations) renderRemote(ctx context.Context, f map[string]tftypes.Value, pt *providerTargets) (*remoteRun, problems) {
	src, srcKnown := sourceOf(f)
	imp, impKnown, ps := importsOf(f, pt)
	if ps.errors() || !srcKnown || !impKnown || !f["name"].IsKnown() {
		return nil, ps
	}
	// The registry credentials are checked before the component is read:
	// one Landscaper cannot use fails the plan whether or not the
	// registry is reachable from here.
	var pulls map[string]lscluster.RegistryAuth
	var overwrites []ocm.Overwrite
	if c := src.Component; c != nil {
		if x.overwrites != nil {
			overwrites = x.overwrites()
		}
		pulls = lscluster.PullSecretsFor(x.registryCredentials(),
			lscluster.PullSecretHosts(&lscluster.ComponentRef{RepositoryContext: c.RepositoryContext}, overwrites))
		if pps := pullSecretProblems(pulls); pps.errors() {
			return nil, append(ps, pps...)
		}
	}
	bp, err := x.load(ctx, src)
	if err != nil {
		return nil, append(ps, loadProblems(err)...)
	}
	ps = append(ps, componentWarnings(bp)...)
	if rcs, ok := render.RepositoryContexts(bp); ok && len(rcs) == 0 && src.Component != nil {
		// Landscaper v1.4 fails such a component ("repository context is
		// required"): better said here than after the objects are written.
		ps.add(attrPath("component"), "Component not readable by Landscaper", fmt.Sprintf("The descriptor of %s:%s lists "+
			"no repositoryContexts. Landscaper refuses a component version whose descriptor does not record the "+
			"repository it was transferred to (\"repository context is required\"). Transfer it with ocm transfer, which "+
			"records the target repository, or add repositoryContexts to its descriptor.", src.Component.Name, src.Component.Version))
		return nil, ps
	}
	sec := secretsOf(f, imp)
	p, err := installation.PlanTree(ctx, bp, imp, nil, triggerOf(f), nil)
	if err != nil {
		in := masking.ShadowInput{Blueprint: bp, Imports: imp, Sensitive: sensitiveImports(f)}
		return nil, append(ps, renderProblems(ctx, sec, in, err)...)
	}
	// allowed_deployers holds on a Landscaper cluster too, as far as the
	// provider renders the tree: what Landscaper renders on its own (a
	// sub-installation unknown at plan time) is up to the deployers
	// installed there.
	if refused := treeRefused(p, x.allowed()); refused.errors() {
		return nil, append(ps, refused...)
	}
	p.Walk(func(n *installation.Plan) { sec.AddImports(n.Imports) })
	if p.AllKnown() {
		sec.Current(renderedSpecs(p))
		sec.Shadow(ctx, masking.ShadowInput{Blueprint: bp, Imports: imp, Sensitive: sensitiveImports(f), Known: planKnown(p)},
			plannedSpecs(p, nil))
	}
	spec, err := remoteSpec(f, src, bp, imp, pt, x.deployers.TargetLocation)
	if err != nil {
		ps.add(nil, "Cannot hand the installation to Landscaper", sec.Text(err.Error()))
		return nil, ps
	}
	// The plan rendered with the provider's component_overwrites: Landscaper
	// resolves with them too, or it would deploy other versions than shown.
	spec.PullSecrets, spec.Overwrites = pulls, overwrites
	objs, err := spec.Objects()
	if err != nil {
		ps.add(nil, "Cannot hand the installation to Landscaper", sec.Text(err.Error()))
		return nil, ps
	}
	run := &remoteRun{spec: spec, objs: objs, plan: p, bp: bp, imp: imp, sec: sec,
		credentials: longestFirst(append(pt.credentials(), registrySecrets(pulls)...))}
	return run, ps
}

// pullSecretProblems refuses registry credentials Landscaper cannot use
// for the component's registry: a token (Landscaper's registry access
// reads a user name and password from a pull secret, and an entry with a
// token alone as no credentials at all, so the pulls would go anonymous).
func pullSecretProblems(creds map[string]lscluster.RegistryAuth) problems {
	var ps problems
	for _, host := range slices.Sorted(maps.Keys(creds)) {
		if creds[host].Token != "" {
			ps.add(attrPath("component").WithAttributeName(attrRepositoryContext), "Registry token not usable on a Landscaper cluster",
				fmt.Sprintf("The provider's registry_credentials for %s, the registry Landscaper reads this component from, "+
					"hold a token. The Context's registry pull secret is a Docker config, of which Landscaper's registry "+
					"access reads a user name and password only: give username and password for %s (many registries "+
					"take a token as the password of any user name).", host, host))
		}
	}
	return ps
}

// registryCredentials are the provider's registry_credentials; nil before
// the provider is configured.
func (x *installations) registryCredentials() map[string]lscluster.RegistryAuth {
	if x.registry == nil {
		return nil
	}
	return x.registry()
}

// remoteSpec is what the Landscaper cluster is handed.
// locate says where a target of a type and config points (see
// lscluster.Target.Location).
func remoteSpec(f map[string]tftypes.Value, src render.Source, bp installation.Blueprint, imp installation.Imports, pt *providerTargets,
	locate func(typ string, config json.RawMessage) string,
) (lscluster.Spec, error) {
	_, ns, _, _ := remoteCluster(f)
	s := lscluster.Spec{Namespace: ns, Name: str(f["name"])}
	if c := src.Component; c != nil {
		if c.RepositoryContext == nil {
			return s, errors.New("component: give component.repository_context, the registry Landscaper reads the " +
				"component from; the provider's repository_context is not handed to a Landscaper cluster")
		}
		s.Component = &lscluster.ComponentRef{Name: c.Name, Version: c.Version, RepositoryContext: c.RepositoryContext}
	}
	if src.Ref != "" {
		s.Blueprint.Ref = src.Ref
	} else {
		files, err := render.Files(bp)
		if err != nil {
			return s, err
		}
		s.Files = files
	}
	if ar := fields(f[attrAutomaticReconcile]); ar != nil {
		s.AutomaticReconcile, _ = time.ParseDuration(str(ar["interval"]))
	}
	plain, _ := valueToAny(f["imports"])
	s.Data, _ = plain.(map[string]any)
	secret, _ := valueToAny(f[attrSensitiveImports])
	s.SecretData, _ = secret.(map[string]any)
	var err error
	target := func(t *deployer.Target) lscluster.Target {
		out, terr := remoteTarget(t, pt, locate)
		if terr != nil {
			err = terr
		}
		return out
	}
	s.Targets = map[string]lscluster.Target{}
	for n, t := range imp.Targets {
		s.Targets[n] = target(t)
	}
	s.TargetLists = map[string][]lscluster.Target{}
	for n, l := range imp.TargetLists {
		for _, t := range l {
			s.TargetLists[n] = append(s.TargetLists[n], target(t))
		}
	}
	s.TargetMaps = map[string]map[string]lscluster.Target{}
	for n, m := range imp.TargetMaps {
		s.TargetMaps[n] = map[string]lscluster.Target{}
		for k, t := range m {
			s.TargetMaps[n][k] = target(t)
		}
	}
	_, exports := render.Declarations(bp)
	for _, d := range exports {
		if d.Type == "target" {
			s.TargetExports = append(s.TargetExports, d.Name)
		} else {
			s.DataExports = append(s.DataExports, d.Name)
		}
	}
	return s, err
}

// remoteTarget is a target import as the Landscaper cluster is handed it:
// a provider target's type and config resolved, and where it points.
func remoteTarget(t *deployer.Target, pt *providerTargets, locate func(string, json.RawMessage) string) (lscluster.Target, error) {
	out := lscluster.Target{Ref: t.Ref, Type: t.Type, Config: t.Config, Labels: t.Labels, Annotations: t.Annotations}
	if t.Ref != "" {
		resolved, ok := pt.resolve(t.Ref)
		if !ok {
			return out, fmt.Errorf("provider target %q is not defined", t.Ref)
		}
		out.Type, out.Config = resolved.Type, resolved.Config
	}
	out.Location = locate(out.Type, out.Config)
	if out.Type == target.KubernetesClusterType {
		// Of other types the provider does not know which fields are
		// credentials: any change of their config runs a job.
		out.Pointing = target.KubernetesClusterPointing(out.Config)
	}
	return out, nil
}

// objectsValue is landscaper_objects: every object masked (Secrets' data
// by lscluster, any other secret value by the tree's masking); the
// objects named in unknown are known only after the apply.
func (x *installations) objectsValue(objs []lscluster.Object, sec *masking.Tree, unknown []string) tftypes.Value {
	t := x.t.AttributeTypes[attrLandscaperObjects]
	vals := make(map[string]tftypes.Value, len(objs))
	for _, o := range objs {
		vals[o.Key()] = stringValue(sec.Text(o.Masked()))
		if slices.Contains(unknown, o.Key()) {
			vals[o.Key()] = tftypes.NewValue(tftypes.String, tftypes.UnknownValue)
		}
	}
	return tftypes.NewValue(t, vals)
}

// changedObjects are the keys of the objects whose record differs from
// what rs wrote, or that it did not write, or that drifted since, and the
// Secrets in secretsChanged (whose data the cluster holds differently:
// records keep none); and whether all of them are Secrets holding
// credentials (target configs, registry pull secrets), which a rotated
// credential changes without any job to run. A Target pointed elsewhere
// (another provider target, server, CA, proxy or anything else but its
// credentials: lscluster.Rotated) changed, though only its Secret is
// written differently.
func (rs *remoteState) changedObjects(objs []lscluster.Object, secretsChanged []string) (keys []string, onlyCredentials bool) {
	before := map[string]lscluster.Object{}
	for _, o := range rs.Objects {
		before[o.Key()] = o
	}
	onlyCredentials = true
	// A Target's Secret is the one of its name, not one whose name looks
	// so (a sensitive import "db.target.password"); the registry pull
	// Secret is one of its own type.
	credentialSecrets, targetSecrets := lscluster.CredentialSecrets(objs), lscluster.TargetSecrets(objs)
	targets := map[string]lscluster.Object{}
	for _, o := range objs {
		if o.Kind == lscluster.KindTarget {
			targets[o.Name] = o
		}
	}
	rotated := func(secret string) bool {
		return !targetSecrets[secret] || lscluster.Rotated(before[lscluster.KindTarget+"/"+secret], targets[secret])
	}
	for _, o := range objs {
		b, ok := before[o.Key()]
		if ok && lscluster.Equal(b, o.Record()) && lscluster.SamePoints(b, o) && !slices.Contains(rs.Drifted, o.Key()) &&
			!slices.Contains(secretsChanged, o.Key()) {
			continue
		}
		keys = append(keys, o.Key())
		onlyCredentials = onlyCredentials && ok && o.Kind == lscluster.KindSecret && credentialSecrets[o.Name] && rotated(o.Name)
	}
	// An object no longer written is deleted only after a job of the
	// Installation without it (applyRemote): Landscaper's deploy items may
	// still use it (a Target).
	written := map[string]bool{}
	for _, o := range objs {
		written[o.Key()] = true
	}
	for _, o := range rs.Objects {
		if !written[o.Key()] {
			keys = append(keys, o.Key())
		}
	}
	if len(objs) != len(rs.Objects) {
		onlyCredentials = false
	}
	return keys, onlyCredentials
}

// drifting is rs with Drifted holding also what drifted on the cluster
// since the refresh (or with -refresh=false, since the last apply), so
// plan and apply run Landscaper's job for the fields the apply takes back
// (Restore), as a refresh that saw them would; every object when the
// cluster cannot be read (the job then runs).
func (x *installations) drifting(ctx context.Context, w *lscluster.Writer, rs *remoteState, mask func(string) string) (*remoteState, problems) {
	if w == nil || len(rs.Objects) == 0 {
		return rs, nil
	}
	var ps problems
	live, err := w.Drifted(ctx, rs.Objects)
	if err != nil {
		ps.warn(attrPath(attrLandscaperCluster), "Cannot read the objects written to the Landscaper cluster",
			mask(err.Error())+"; they are taken as changed.")
		live = nil
		for _, o := range rs.Objects {
			live = append(live, o.Key())
		}
	}
	next := *rs
	next.Drifted = slices.Clone(rs.Drifted)
	for _, k := range live {
		if !slices.Contains(next.Drifted, k) {
			next.Drifted = append(next.Drifted, k)
		}
	}
	return &next, ps
}

// planRemote plans an installation in remote mode. Nothing that has not
// changed plans anything: not Landscaper's status, not the exports.
func (x *installations) planRemote(ctx context.Context, f, pf map[string]tftypes.Value, saved storedInstallation,
	replace []*tftypes.AttributePath,
) (tftypes.Value, []*tftypes.AttributePath, problems) {
	computed := []string{"status", "exports", attrSensitiveExports, "target_exports", attrDeployItems, attrClusterChanges,
		attrRolloutPlan, attrLandscaperObjects}
	unknown := func(a ...string) {
		for _, a := range a {
			f[a] = tftypes.NewValue(x.t.AttributeTypes[a], tftypes.UnknownValue)
		}
	}
	ps := validateRemote(f)
	target, ns, set, known := remoteCluster(f)
	if rs := saved.Remote; rs != nil && rs.Released != nil {
		ps.add(attrPath(attrLandscaperCluster), "A move back in-process is under way", fmt.Sprintf("The last apply "+
			"started releasing the Installation %s/%s from Landscaper and did not finish. Remove %s and apply to "+
			"finish the move; the installation can move to a Landscaper cluster again after that.", rs.Namespace,
			str(f["name"]), attrLandscaperCluster))
	}
	// Another cluster or namespace is another Installation: the old one
	// is destroyed, not left behind. A landscaper_cluster unknown at plan
	// time may be either, so it replaces too, as RequiresReplace does.
	if rs := saved.Remote; rs != nil && set && (!known || rs.Target != target || rs.Namespace != ns) {
		replace = append(replace, attrPath(attrLandscaperCluster))
	}
	if rs := saved.Remote; rs != nil && known && rs.Target == target {
		w, _ := x.landscaperWriter(target)
		ps = append(ps, clusterMoved(ctx, rs, w)...)
	}
	if ps.errors() || !known {
		unknown(computed...)
		return tftypes.NewValue(x.t, f), replace, ps
	}
	pt := x.targets().assuming(locations(treeTargets(saved.Status)))
	run, rps := x.renderRemote(ctx, f, pt)
	ps = append(ps, rps...)
	if run == nil {
		unknown(computed...)
		return tftypes.NewValue(x.t, f), replace, ps
	}
	if entering(saved) && len(replace) == 0 {
		// From in-process (installation_modes.go): Landscaper takes over.
		if refused := enterProblems(saved.Status, installation.InputHash(run.bp, run.imp)); refused.errors() {
			unknown(computed...)
			return tftypes.NewValue(x.t, f), replace, append(ps, refused...).masked(run.sec.Text)
		}
		ps = append(ps, enterWarning(saved.Status, target, ns, str(f["name"]))...)
	}
	objects := func(unknownKeys []string) { f[attrLandscaperObjects] = x.objectsValue(run.objs, run.sec, unknownKeys) }
	var secretsChanged []string
	if saved.Remote != nil && len(replace) == 0 {
		var sps problems
		secretsChanged, sps = x.secretsChanged(ctx, target, run)
		ps = append(ps, sps...)
		w, _ := x.landscaperWriter(target)
		saved.Remote, sps = x.drifting(ctx, w, saved.Remote, run.mask)
		ps = append(ps, sps...)
	}
	if rs := saved.Remote; rs != nil && rs.Unreconciled {
		ps.warn(attrPath(attrLandscaperCluster), "Landscaper has not run the last apply",
			"The last apply wrote objects to the Landscaper cluster but did not start Landscaper's job for them; this apply starts it.")
	}
	if rs := saved.Remote; rs != nil && !rs.Unreconciled && len(replace) == 0 && saved.Status.Succeeded() && rs.Trigger == triggerOf(f) {
		changed, onlyCredentials := rs.changedObjects(run.objs, secretsChanged)
		if len(changed) == 0 || onlyCredentials {
			// Nothing for Landscaper to run: what was computed stays, and
			// a rotated credential shows as its Secret alone.
			for _, a := range computed {
				f[a] = pf[a]
			}
			if len(changed) > 0 {
				objects(changed)
			}
			return tftypes.NewValue(x.t, f), replace, ps.masked(run.sec.Text)
		}
	}
	var changed []string
	if saved.Remote != nil {
		changed, _ = saved.Remote.changedObjects(run.objs, secretsChanged)
	}
	objects(slices.DeleteFunc(changed, func(k string) bool { return !strings.HasPrefix(k, lscluster.KindSecret+"/") }))
	f[attrDeployItems] = plannedItems(x.t.AttributeTypes[attrDeployItems], run.plan, nil, run.sec)
	f[attrRolloutPlan] = tftypes.NewValue(x.t.AttributeTypes[attrRolloutPlan], nil)
	var previewProblems problems
	f[attrClusterChanges], previewProblems = x.plannedClusterChanges(ctx, f, run.plan, nil, run.sec, false)
	ps = append(ps, previewProblems...)
	unknown("status", "exports", attrSensitiveExports, "target_exports")
	return tftypes.NewValue(x.t, f), replace, ps.masked(run.sec.Text)
}

// secretsChanged are the keys of run's Secrets whose data on the Landscaper
// cluster is not what run writes; every Secret of run when the cluster
// cannot be read (the apply then writes them, and finds out).
func (x *installations) secretsChanged(ctx context.Context, target string, run *remoteRun) ([]string, problems) {
	var all []string
	for _, o := range run.objs {
		if o.Kind == lscluster.KindSecret {
			all = append(all, o.Key())
		}
	}
	w, _ := x.landscaperWriter(target)
	if w == nil {
		return all, nil
	}
	changed, err := w.SecretsChanged(ctx, run.objs)
	if err != nil {
		var ps problems
		ps.warn(attrPath(attrLandscaperCluster), "Cannot read the Secrets written to the Landscaper cluster",
			run.mask(err.Error())+"; they are taken as changed.")
		return all, ps
	}
	return changed, nil
}

// recordedWriter writes to the Landscaper resource cluster the objects of
// rs were written to; nil, with an error, when the provider target now
// points at another cluster.
func (x *installations) recordedWriter(ctx context.Context, rs *remoteState) (*lscluster.Writer, problems) {
	w, ps := x.landscaperWriter(rs.Target)
	if moved := clusterMoved(ctx, rs, w); moved != nil {
		return nil, append(ps, moved...)
	}
	return w, ps
}

// clusterMoved refuses a writer w of another cluster than the one the
// objects of rs were written to: another API server, or, at the same URL,
// a namespace of another UID.
func clusterMoved(ctx context.Context, rs *remoteState, w *lscluster.Writer) problems {
	if w == nil {
		return nil
	}
	var ps problems
	at := attrPath(attrLandscaperCluster).WithAttributeName("target")
	const summary = "The Landscaper cluster moved"
	if rs.Server != "" && w.Server() != rs.Server {
		ps.add(at, summary, fmt.Sprintf("The provider target %q now points at the API server %s, but this installation's "+
			"objects were written to %s. Nothing is read, written or deleted on the other cluster, as the objects on %s "+
			"would be left behind: point the provider target back at %s (to destroy the installation there, or move it "+
			"with a new name), or remove the resource from the state (terraform state rm) if those objects are gone.",
			rs.Target, w.Server(), rs.Server, rs.Server, rs.Server))
		return ps
	}
	if rs.NamespaceUID == "" {
		return nil
	}
	uid, err := w.NamespaceUID(ctx, rs.Namespace)
	if err != nil && !errors.Is(err, lscluster.ErrNotFound) {
		// Not read (a server error, rate limiting, a timeout): the cluster
		// is not told from another at the URL, so nothing is read (a
		// refresh keeps the state), written or deleted.
		ps.add(at, "Cannot tell the Landscaper cluster", fmt.Sprintf("Reading the namespace %s on %s, which tells the "+
			"cluster this installation's objects were written to from another one at the same URL: %v. Nothing is "+
			"read, written or deleted; try again.", rs.Namespace, w.Server(), err))
		return ps
	}
	if uid == rs.NamespaceUID {
		return nil
	}
	why := fmt.Sprintf("the namespace %s there is not the one they were written to (its UID is %s, not %s)", rs.Namespace, uid, rs.NamespaceUID)
	switch {
	case err != nil:
		why = fmt.Sprintf("there is no namespace %s there", rs.Namespace)
	case uid == "":
		why = fmt.Sprintf("the provider target's credentials may no longer read the namespace %s there, which tells "+
			"the cluster they were written to from another one at the same URL", rs.Namespace)
	}
	ps.add(at, summary, fmt.Sprintf("This installation's objects were written to the API server %s, but %s: another "+
		"cluster answers at that URL (a port-forward, kubernetes.default.svc, a DNS name pointed elsewhere), or the "+
		"namespace was deleted, and the objects with it. Nothing is read, written or deleted there: point the provider "+
		"target %q back at the cluster the objects were written to, or remove the resource from the state "+
		"(terraform state rm) if they are gone.", w.Server(), why, rs.Target))
	return ps
}

// landscaperWriter writes to the Landscaper resource cluster of the
// provider target name.
func (x *installations) landscaperWriter(name string) (*lscluster.Writer, problems) {
	r, ps := x.landscaperReader(name, "landscaper_cluster.target")
	if r == nil {
		return nil, ps
	}
	return lscluster.WriterOf(r), ps
}

// applyRemote writes the objects, starts Landscaper's job and waits for
// it, unless only target Secrets changed (a rotated credential): then the
// Secrets are written and nothing runs.
func (x *installations) applyRemote(r *jobRun[storedInstallation]) (tftypes.Value, []byte, problems) {
	ctx, f := r.ctx, r.f
	ps := validateRemote(f)
	if ps.errors() {
		return r.failed(ps)
	}
	target, ns, _, _ := remoteCluster(f)
	run, rps := x.renderRemote(ctx, f, x.targets())
	if ps = append(ps, rps...); run == nil {
		if !ps.errors() {
			ps.add(nil, "Installation not known", "blueprint, component or imports still hold unknown values at apply time.")
		}
		return r.failed(ps)
	}
	w, wps := x.landscaperWriter(target)
	if ps = append(ps, wps...); w == nil {
		return r.failed(ps)
	}
	name, trigger := str(f["name"]), triggerOf(f)
	prev := r.saved.Remote
	if prev != nil && prev.Target == target {
		if _, mps := x.recordedWriter(ctx, prev); mps.errors() {
			return r.failed(append(ps, mps...))
		}
	}
	if prev != nil && prev.Target != target {
		// The plan replaces the resource then; the old objects are on
		// another cluster, which this writer cannot delete.
		ps.add(attrPath(attrLandscaperCluster), "Cannot move to another Landscaper cluster in place", fmt.Sprintf(
			"The installation's objects are on the cluster of provider target %q; moving to %q replaces the resource.", prev.Target, target))
		return r.failed(ps)
	}
	moving := entering(r.saved)
	if moving {
		// Checked again before anything is written: the plan may not have
		// known the inputs.
		if refused := enterProblems(r.saved.Status, installation.InputHash(run.bp, run.imp)); refused.errors() {
			return r.failed(append(ps, refused...))
		}
	}
	rs := &remoteState{Target: target, Namespace: ns, Trigger: trigger, Owner: lscluster.NewOwnerID(), Server: w.Server(),
		Input: installation.InputHash(run.bp, run.imp)}
	// Read before anything is written: an unreadable namespace is left
	// unrecorded (the URL alone tells the cluster then), a missing one
	// fails the writes.
	// A resource keeps the UID it recorded (recordedWriter checked it);
	// the state of an earlier build, which recorded none, gets it from a
	// refresh that finds its own Installation, not from whatever cluster
	// answers at the URL now.
	if prev == nil {
		rs.NamespaceUID, _ = w.NamespaceUID(ctx, ns)
	} else {
		rs.NamespaceUID = prev.NamespaceUID
	}
	if prev != nil && prev.Owner != "" {
		rs.Owner = prev.Owner
	}
	if moving {
		rs.Owner = moveOwnerID(r.saved.Status, ns, name)
	}
	own := rs.owner(name)
	for _, o := range run.objs {
		rs.Objects = append(rs.Objects, o.Record())
	}
	rotationOnly := false
	if prev != nil && !prev.Unreconciled && r.saved.Status.Succeeded() && prev.Trigger == trigger {
		secretsChanged, sps := x.secretsChanged(ctx, target, run)
		ps = append(ps, sps...)
		drifting, dps := x.drifting(ctx, w, prev, run.mask)
		ps = append(ps, dps...)
		changed, onlyCredentials := drifting.changedObjects(run.objs, secretsChanged)
		rotationOnly = len(changed) == 0 || onlyCredentials
	}
	uid, err := w.Apply(ctx, own, run.objs)
	var restored []string
	installationWritten := err == nil
	if err == nil {
		// Server-side apply leaves what other managers added (a refresh
		// reports it as drift): taken back before Landscaper runs.
		restored, err = w.Restore(ctx, own, run.objs)
	}
	if err != nil {
		if moving {
			_, cleanup := w.Delete(ctx, own, refsOf(run.objs))
			ps.add(attrPath(attrLandscaperCluster), "Cannot write to the Landscaper cluster", run.mask(moveWriteFailed(err, cleanup, installationWritten)))
			return r.failed(ps)
		}
		ps.add(attrPath(attrLandscaperCluster), "Cannot write to the Landscaper cluster", run.mask(err.Error()))
		if !rs.writeFailed(err, prev) {
			return r.failed(ps)
		}
		return x.remoteState(f, run, r.saved.Status, nil, rs, ps)
	}
	st := r.saved.Status
	if moving {
		// The in-process record is forgotten: from now on Landscaper's
		// tree is the status, unknown until it can be read.
		st = nil
	}
	var tree *lscluster.Tree
	// Objects no longer written go once Landscaper has run without them:
	// the deploy items of its last job may use them (a dropped Target,
	// which their deployer reads to delete them), and a job still running
	// may read them.
	jobDone := rotationOnly
	if rotationOnly && len(restored) > 0 {
		// Changed by someone between the drift read and the write, and
		// taken back: Landscaper may have run with it. The plan promised
		// no job, so the next apply runs it.
		rs.Unreconciled, jobDone = true, false
		ps.warn(attrPath(attrLandscaperCluster), "Objects changed outside Terraform during the apply", fmt.Sprintf(
			"The apply took back what others changed on %s since the plan; Landscaper may have run with it. The next "+
				"apply runs Landscaper's job.", strings.Join(restored, ", ")))
	}
	if !rotationOnly {
		var err error
		if st, tree, err = x.runRemote(ctx, w, run, ns, name, uid, st); err != nil {
			ps.add(attrPath(attrLandscaperCluster), "Landscaper did not finish the installation", run.mask(err.Error()))
			// Without a tree read, a job for what was written may never
			// have started; with one, Landscaper goes on with it, and a
			// refresh reads where it got to.
			rs.Unreconciled = tree == nil
		}
		jobDone = err == nil && st.Succeeded()
	}
	if stale := staleObjects(prev, rs); len(stale) > 0 && !jobDone {
		// Kept, and recorded: a later apply whose job succeeds deletes
		// them, a destroy too.
		rs.Objects = append(rs.Objects, stale...)
	} else if len(stale) > 0 {
		notOwned, err := w.Delete(ctx, own, refsOf(stale))
		if notOwned != nil {
			// Another owner wrote them since: theirs now, and forgotten.
			ps.warn(attrPath(attrLandscaperCluster), "Objects no longer written are not this resource's", run.mask(notOwned.Error()))
		}
		if err != nil {
			ps.warn(attrPath(attrLandscaperCluster), "Cannot delete objects no longer written", run.mask(err.Error()))
			rs.Objects = append(rs.Objects, stale...)
		}
	}
	ps = append(ps, treeProblems(st, run.sec)...)
	return x.remoteState(f, run, st, tree, rs, ps)
}

// runRemote starts a job of the Installation the apply wrote (of the
// UID), waits for it, and reads the tree and its exports into a status;
// on an error (a timeout, Ctrl-C) the status says where Landscaper got
// to, or is prev when that cannot be read.
func (x *installations) runRemote(ctx context.Context, w *lscluster.Writer, run *remoteRun, ns, name string,
	uid types.UID, prev *installation.Status,
) (*installation.Status, *lscluster.Tree, error) {
	before, err := w.Reconcile(ctx, ns, name, uid)
	if err != nil {
		return prev, nil, err
	}
	tree, werr := w.Wait(ctx, ns, name, before, uid)
	if tree == nil {
		return prev, nil, werr
	}
	for path := range tree.Installations {
		// Landscaper's summaries name failed sub-installations.
		run.sec.AddPath(path)
	}
	st := remoteStatus(tree, run.mask, run.exportsMayHoldSecrets(tree))
	if werr != nil {
		return st, tree, fmt.Errorf("%w; the Installation %s/%s is %s, and Landscaper goes on with it: the next plan shows where it got to",
			werr, ns, name, orUnknown(tree.Phase))
	}
	if st.Phase != core.PhaseSucceeded {
		return st, tree, nil
	}
	data, targets, err := w.Exports(ctx, run.spec, uid)
	if err != nil {
		return st, tree, err
	}
	st.Exports.Data = data
	if run.exportsMayHoldSecrets(tree) {
		st.SensitiveExports = slices.Sorted(maps.Keys(data))
	}
	st.Exports.Targets = map[string]*deployer.Target{}
	refs := providerTargetSecrets(name, run.imp)
	for n, t := range targets {
		dt := &deployer.Target{Name: n, Type: t.Type, Config: t.Config, Labels: t.Labels, Annotations: t.Annotations}
		if ref, ok := refs[t.Secret]; ok && t.Secret != "" {
			// It passes on a provider target: a reference, no config.
			dt.Ref, dt.Config = ref, nil
		}
		st.Exports.Targets[n] = dt
	}
	return st, tree, nil
}

// providerTargetSecrets are, by the name of the Secret holding its config,
// the provider targets the installation imports (targets, list elements
// and map entries), as the Spec names them.
func providerTargetSecrets(inst string, imp installation.Imports) map[string]string {
	out := map[string]string{}
	for n, t := range imp.Targets {
		if t != nil && t.Ref != "" {
			out[lscluster.TargetSecret(inst, n)] = t.Ref
		}
	}
	for n, l := range imp.TargetLists {
		for i, t := range l {
			if t != nil && t.Ref != "" {
				out[lscluster.TargetSecret(inst, n+"."+strconv.Itoa(i))] = t.Ref
			}
		}
	}
	for n, m := range imp.TargetMaps {
		for k, t := range m {
			if t != nil && t.Ref != "" {
				out[lscluster.TargetSecret(inst, n+"."+k)] = t.Ref
			}
		}
	}
	return out
}

func orUnknown(phase string) string {
	if phase == "" {
		return "without a phase yet"
	}
	return "at phase " + phase
}

// staleObjects are the objects prev wrote that rs no longer does, in
// whichever namespace they are.
func staleObjects(prev, rs *remoteState) []lscluster.Object {
	if prev == nil {
		return nil
	}
	keep := map[lscluster.ObjectRef]bool{}
	for _, o := range rs.Objects {
		keep[o.Ref()] = true
	}
	var out []lscluster.Object
	for _, o := range prev.Objects {
		if !keep[o.Ref()] {
			out = append(out, o)
		}
	}
	return out
}

// writeFailed records in rs, the state of an apply whose write failed
// with err, what that write may have left, and says whether there is
// anything: nothing when another owner's object refused the write before
// any was written (lscluster.NothingWritten). Otherwise the records are
// those of prev and of rs together, as some of either may be on the
// cluster (a destroy deletes them), and Landscaper's job for what was
// written has not run.
func (rs *remoteState) writeFailed(err error, prev *remoteState) bool {
	if lscluster.NothingWritten(err) {
		return false
	}
	rs.Objects = append(rs.Objects, staleObjects(prev, rs)...)
	rs.Unreconciled = true
	return true
}

// owner is who the resource of installation name writes as.
func (rs *remoteState) owner(name string) lscluster.Owner {
	return lscluster.Owner{ID: rs.Owner, Installation: name}
}

func refsOf(objs []lscluster.Object) []lscluster.ObjectRef {
	out := make([]lscluster.ObjectRef, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.Ref())
	}
	return out
}

// remoteState writes the resource value and private state of a remote
// installation.
func (x *installations) remoteState(f map[string]tftypes.Value, run *remoteRun, st *installation.Status, tree *lscluster.Tree,
	rs *remoteState, ps problems,
) (tftypes.Value, []byte, problems) {
	f["status"] = x.statusValue(st, run.sec)
	if !f[attrDeployItems].IsFullyKnown() {
		f[attrDeployItems] = x.remoteItems(run, tree)
	}
	f[attrClusterChanges] = keepClusterChanges(x.t.AttributeTypes[attrClusterChanges], f[attrClusterChanges])
	f[attrRolloutPlan] = tftypes.NewValue(x.t.AttributeTypes[attrRolloutPlan], nil)
	f[attrLandscaperObjects] = x.objectsValue(run.objs, run.sec, nil)
	var err error
	if f["exports"], f[attrSensitiveExports], f["target_exports"], err = x.exportValues(st); err != nil {
		ps.add(attrPath("exports"), "Export cannot be represented", err.Error())
	}
	priv, err := encodeRemote(st, rs)
	if err != nil {
		ps.add(nil, "Cannot store the installation's status", err.Error())
	}
	return tftypes.NewValue(x.t, f), priv, ps.masked(run.mask)
}

// notRenderedHere stands for the config of a deploy item the provider
// could not render: it belongs to a sub-installation whose imports come
// from a sibling's exports, which only Landscaper's run computed.
const notRenderedHere = "(rendered on the Landscaper cluster: this sub-installation imports what a sibling exported there)"

// remoteItems are deploy_items after a remote apply: every item the plan
// rendered, and the other items Landscaper reports (of sub-installations
// the plan could not render) with their type and target, and
// notRenderedHere as config.
func (x *installations) remoteItems(run *remoteRun, tree *lscluster.Tree) tftypes.Value {
	t := x.t.AttributeTypes[attrDeployItems]
	if run.plan.AllKnown() {
		return plannedItems(t, run.plan, nil, run.sec)
	}
	var vals map[string]tftypes.Value
	_ = renderedItems(t, planSpecs(run.plan), run.sec).As(&vals)
	et := as[tftypes.Map](t).ElementType
	if tree != nil {
		for key, di := range tree.DeployItems {
			key = run.sec.Key(key)
			if _, ok := vals[key]; ok {
				continue
			}
			vals[key] = tftypes.NewValue(et, map[string]tftypes.Value{"type": stringValue(di.Type),
				"target": stringOrNull(di.Target), "config": stringValue(notRenderedHere)})
		}
	}
	return tftypes.NewValue(t, vals)
}

// remoteStatus is Landscaper's tree as the status of a tree run
// in-process: phases, jobs and errors of every installation and deploy
// item, each error's message masked (a message may quote a secret).
func remoteStatus(t *lscluster.Tree, mask func(string) string, secrets bool) *installation.Status {
	coreError := func(e *lscluster.Error) *core.Error {
		if e == nil {
			return nil
		}
		return &core.Error{Operation: core.Operation(e.Operation), Reason: e.Reason, Message: mask(e.Message), Codes: e.Codes}
	}
	nodeError := func(e *lscluster.Error) *core.Error {
		c := coreError(e)
		if c != nil && secrets && renderedByLandscaper[e.Reason] {
			// What Landscaper's templates said of a tree holding secrets
			// cannot be compared with a stand-in rendering here, as the
			// provider's own messages are (maskNodeErrors): it may
			// quote what a template made of a secret.
			c.Message = "the message is not shown: Landscaper's templates failed on a tree holding secrets, and the message may " +
				"quote what they made of one; the Installation's status on the Landscaper cluster has it"
		}
		return c
	}
	root := &installation.Status{Phase: core.Phase(t.Phase), JobID: t.JobID, JobIDFinished: t.JobIDFinished,
		LastError: nodeError(t.LastError)}
	node := func(path string) *installation.Status {
		n := root
		if path == "" {
			return n
		}
		for _, part := range strings.Split(path, "/") {
			if n.Subs == nil {
				n.Subs = map[string]*installation.Status{}
			}
			if n.Subs[part] == nil {
				n.Subs[part] = &installation.Status{}
			}
			n = n.Subs[part]
		}
		return n
	}
	for path, in := range t.Installations {
		n := node(path)
		n.Phase, n.LastError = core.Phase(in.Phase), nodeError(in.LastError)
		if path != "" {
			n.JobID = t.JobID
			if in.Phase == string(core.PhaseSucceeded) || in.Phase == string(core.PhaseFailed) {
				n.JobIDFinished = t.JobID
			}
		}
	}
	for key, di := range t.DeployItems {
		path, item := "", key
		if i := strings.LastIndex(key, "/"); i >= 0 {
			path, item = key[:i], key[i+1:]
		}
		n := node(path)
		if n.Execution.Items == nil {
			n.Execution.Items = map[string]*engine.ItemStatus{}
		}
		n.Execution.Items[item] = &engine.ItemStatus{Phase: core.Phase(di.Phase), JobIDFinished: di.JobIDFinished,
			LastError: coreError(di.LastError)}
	}
	return root
}

// renderedByLandscaper are the reasons of Landscaper's Installation errors
// (v1.4, installations controller) whose messages come from rendering
// the blueprint's templates and import mappings, or validating what they
// made.
var renderedByLandscaper = map[string]bool{
	"CreateImportsAndSubobjects": true, "ConstructImports": true, "RenderImportExecutions": true,
	"CreateOrUpdateImports": true, "EnsureSubinstallations": true, "ReconcileExecution": true,
	"ImportsSatisfied": true, "ConstructImportsForExports": true, "RenderImportExecutionsForExports": true,
	"ConstructExports": true, "CreateOrUpdateExports": true,
}

// readRemote reads where Landscaper is with the installation and whether
// the objects written are still as written: a tree no longer Succeeded,
// or a changed object, plans an update; an Installation deleted outside
// Terraform plans a create.
func (x *installations) readRemote(ctx context.Context, state tftypes.Value, saved storedInstallation) (tftypes.Value, []byte, problems) {
	rs := saved.Remote
	w, _ := x.recordedWriter(ctx, rs)
	if w == nil {
		// The provider's targets may not be known while refreshing, or
		// point elsewhere now (the plan says so): the state stays as it
		// was.
		return state, nil, nil
	}
	var ps problems
	f := fields(state)
	name := str(f["name"])
	sec := x.remoteSecrets(f)
	tree, err := w.Tree(ctx, rs.Namespace, name)
	if err != nil {
		ps.warn(attrPath(attrLandscaperCluster), "Cannot read the Landscaper installation", err.Error())
		return state, nil, ps.masked(sec.Text)
	}
	// Deleted outside Terraform, and perhaps written again by another
	// owner (another Terraform resource, a Landscaper user): not this
	// resource's, which the next apply refuses to overwrite.
	taken := tree != nil && (tree.Owner != rs.Owner || rs.Owner == "")
	if rs.Released != nil && (tree == nil || taken) {
		// A move back in-process let go of it: rs.Released alone records
		// what each deploy item adopts, and the next apply finishes the
		// move (or refuses another owner's Installation).
		if taken {
			ps.warn(nil, "Installation deleted outside Terraform", fmt.Sprintf("The Installation %s/%s on the "+
				"Landscaper cluster is another owner's (annotation %s %q) while this resource was moving back in-process: "+
				"the resource keeps what Landscaper let go of, and the next apply refuses to take over that Installation.",
				rs.Namespace, name, lscluster.OwnerAnnotation, tree.Owner))
		}
		return state, nil, ps.masked(sec.Text)
	}
	if tree == nil || taken {
		return x.readRemoteGone(ctx, w, state, saved, tree)
	}
	st := saved.Status
	// A job in flight (Landscaper's automatic reconcile, say) is reported
	// once it has finished: until then the last finished one stands.
	inFlight := tree.JobID != tree.JobIDFinished && st.Succeeded()
	if !inFlight && (st == nil || tree.JobID != st.JobID || tree.Phase != string(st.Phase) || tree.JobIDFinished != st.JobIDFinished) {
		next := remoteStatus(tree, sec.Text, x.remoteHoldsSecrets(saved.Status, f))
		if st != nil {
			next.Exports, next.SensitiveExports = st.Exports, st.SensitiveExports
		}
		st = next
	}
	drifted, err := w.Drifted(ctx, rs.Objects)
	if err != nil {
		ps.warn(attrPath(attrLandscaperCluster), "Cannot read the objects written to the Landscaper cluster", err.Error())
	}
	next := *rs
	next.Drifted = drifted
	if next.NamespaceUID == "" && rs.Owner != "" {
		// The state of an earlier build: the Installation read is this
		// resource's (its owner ID), so the namespace is the one written to.
		next.NamespaceUID, _ = w.NamespaceUID(ctx, rs.Namespace)
	}
	for _, k := range drifted {
		ps.warn(attrPath(attrLandscaperObjects).WithElementKeyString(k), fmt.Sprintf("%s changed outside Terraform", k),
			"The object is gone from the Landscaper cluster, no longer holds what the provider wrote, or holds fields "+
				"or annotations Landscaper acts on that others added; the next apply writes it again as the provider wrote it.")
	}
	f["status"] = x.statusValue(st, sec)
	ps = append(ps, remoteFailures(st, tree.JobID)...)
	priv, err := encodeRemote(st, &next)
	if err != nil {
		ps.add(nil, "Cannot store the installation's status", err.Error())
	}
	return tftypes.NewValue(x.t, f), priv, ps.masked(sec.Text)
}

// readRemoteGone reads what is left of the objects of a resource whose
// Installation is gone (tree nil) or another owner's (tree): the resource
// stays, the missing objects drifted, while any object it wrote is left
// (Secrets with credentials among them), so that the next apply writes
// the Installation again, or refuses another owner's, and a destroy
// deletes them. Dropped, the resource would be created anew under another
// owner ID, which its own objects refuse, and nothing would delete them.
func (x *installations) readRemoteGone(ctx context.Context, w *lscluster.Writer, state tftypes.Value, saved storedInstallation,
	tree *lscluster.Tree,
) (tftypes.Value, []byte, problems) {
	var ps problems
	rs := saved.Remote
	f := fields(state)
	name := str(f["name"])
	sec := x.remoteSecrets(f)
	what := fmt.Sprintf("The Installation %s/%s is gone from the Landscaper cluster", rs.Namespace, name)
	if tree != nil {
		what = fmt.Sprintf("The Installation %s/%s on the Landscaper cluster is no longer the one this resource wrote: "+
			"another Terraform resource or a Landscaper user wrote it (annotation %s %q), and the next apply refuses to "+
			"overwrite it", rs.Namespace, name, lscluster.OwnerAnnotation, tree.Owner)
	}
	left, err := w.LiveOwned(ctx, rs.owner(name), rs.Objects)
	if err != nil {
		ps.warn(attrPath(attrLandscaperCluster), "Cannot read the objects written to the Landscaper cluster", err.Error())
		return state, nil, ps.masked(sec.Text)
	}
	if len(left) == 0 {
		next := "; the next apply writes it again."
		if tree != nil {
			next = "."
		}
		ps.warn(nil, "Installation deleted outside Terraform", what+next)
		return tftypes.NewValue(x.t, nil), nil, ps.masked(sec.Text)
	}
	next := *rs
	next.Drifted = nil
	var kept []string
	for _, o := range rs.Objects {
		if _, ok := left[o.Key()]; ok {
			kept = append(kept, o.Key())
		} else {
			next.Drifted = append(next.Drifted, o.Key())
		}
	}
	slices.Sort(next.Drifted)
	ps.warn(nil, "Installation deleted outside Terraform", fmt.Sprintf("%s. The objects the provider wrote for it "+
		"that are left (%s) stay in the state: destroying the resource deletes them.", what, strings.Join(kept, ", ")))
	priv, err := encodeRemote(saved.Status, &next)
	if err != nil {
		ps.add(nil, "Cannot store the installation's status", err.Error())
	}
	return state, priv, ps.masked(sec.Text)
}

// remoteFailures warns, on a refresh, that Landscaper's last job failed:
// the next apply starts another.
func remoteFailures(st *installation.Status, jobID string) problems {
	var ps problems
	if st.Phase == core.PhaseFailed && st.JobID == jobID {
		ps.warn(attrPath("status"), "The installation failed on the Landscaper cluster",
			"Landscaper's last job of the installation failed (see status); the next apply starts another.")
	}
	return ps
}

// destroyRemote deletes the Installation, waits until Landscaper has
// removed what its deploy items installed, and then deletes the objects
// the provider wrote. Items Landscaper cannot delete are named, and the
// resource stays.
func (x *installations) destroyRemote(r *jobRun[storedInstallation]) (tftypes.Value, []byte, problems) {
	rs := r.saved.Remote
	w, ps := x.recordedWriter(r.ctx, rs)
	if w == nil {
		return r.failed(ps)
	}
	name := str(r.f["name"])
	sec := x.remoteSecrets(r.f)
	own := rs.owner(name)
	tree, err := w.Uninstall(r.ctx, own, rs.Namespace, name)
	if notOwned, ok := errors.AsType[*lscluster.NotOwnedError](err); ok {
		// This resource's Installation is gone already; the one there is
		// another owner's, and stays.
		ps.warn(attrPath(attrLandscaperCluster), "The Installation is not this resource's", sec.Text(notOwned.Error()))
		err = nil
	}
	if err != nil {
		if tree == nil {
			ps.add(attrPath(attrLandscaperCluster), "Cannot delete the Landscaper installation", sec.Text(err.Error()))
			return r.failed(ps)
		}
		st := remoteStatus(tree, sec.Text, x.remoteHoldsSecrets(r.saved.Status, r.f))
		ps = append(ps, treeProblems(st, sec)...)
		ps.add(attrPath(attrLandscaperCluster), "Landscaper did not delete the installation", sec.Text(fmt.Sprintf(
			"%v: the Installation %s/%s is %s. Its objects stay; the next destroy tries again.", err, rs.Namespace, name, orUnknown(tree.Phase))))
		f := r.f
		f["status"] = x.statusValue(st, sec)
		priv, perr := encodeRemote(st, rs)
		if perr != nil {
			return r.failed(ps)
		}
		return tftypes.NewValue(x.t, f), priv, ps.masked(sec.Text)
	}
	var rest []lscluster.Object
	for _, o := range slices.Backward(rs.Objects) {
		if o.Kind != lscluster.KindInstallation {
			rest = append(rest, o)
		}
	}
	notOwned, err := w.Delete(r.ctx, own, refsOf(rest))
	if notOwned != nil {
		ps.warn(attrPath(attrLandscaperCluster), "Objects left to their owner", sec.Text(notOwned.Error()))
	}
	if err != nil {
		ps.add(attrPath(attrLandscaperCluster), "Cannot delete the objects written to the Landscaper cluster", sec.Text(err.Error()))
		next := *rs
		next.Objects = rest
		priv, _ := encodeRemote(nil, &next)
		return r.prior, priv, ps
	}
	return tftypes.NewValue(x.t, nil), nil, ps
}

// remoteKey marks the private state of a remote installation, so that a
// refresh tells it without decoding the status.
const remoteKey = "\x00remote"

func encodeRemote(st *installation.Status, rs *remoteState) ([]byte, error) {
	return privatestate.Encode(storedInstallation{Status: st, Remote: rs}, map[string][]byte{remoteKey: []byte("1")})
}

func isRemote(private []byte) bool {
	blobs, err := privatestate.Blobs(private)
	return err == nil && len(blobs[remoteKey]) > 0
}
