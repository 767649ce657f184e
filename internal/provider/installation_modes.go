package provider

import (
	"context"
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/helm"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/kube"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/manifest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/installation"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/lscluster"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/masking"
)

// Moving an installation between modes hands what it deployed over in
// place, as the take-over from Landscaper does: adding landscaper_cluster
// lets Landscaper's deployers update the objects the provider deployed
// (same UIDs) and upgrade its helm releases; removing it releases the
// Installation from Landscaper without uninstalling and lets the
// provider's deployers adopt what Landscaper's deployed
// (installation.Adopting). Either way, nothing is deleted or re-created,
// so only a tree that succeeded, run from the configuration it is moved
// with, is moved: anything it would no longer render would be left behind,
// known to neither side.

// handoverTypes are the deploy item types whose objects Landscaper's
// deployers take over from the provider's: they write the same objects
// and releases under the same names.
var handoverTypes = map[string]bool{
	manifest.Type: true, manifest.Alias: true, helm.Type: true, helm.Alias: true,
	"landscaper.gardener.cloud/mock": true, "mock": true,
}

// enterProblems refuses to move an installation that ran in-process to a
// Landscaper cluster unless Landscaper's deployers can take over what it
// deployed: its last job succeeded, from the blueprint and imports it is
// moved with (input, installation.InputHash), and every item is of a type
// Landscaper takes over, no manifest of policy fallback among them.
func enterProblems(st *installation.Status, input string) problems {
	var ps problems
	at := attrPath(attrLandscaperCluster)
	const summary = "Cannot move to the Landscaper cluster"
	if !st.Succeeded() {
		ps.add(at, summary, fmt.Sprintf("The installation's last in-process job did not succeed (phase %s). Landscaper's "+
			"deployers would take over a tree deployed in part; apply in-process until it succeeds, then add %s.",
			phaseOrNone(st.Phase), attrLandscaperCluster))
		return ps
	}
	if st.InputHash != input {
		ps.add(at, summary, "The blueprint, component or imports differ from those the last in-process apply ran with. "+
			"What the new configuration no longer renders would be left behind, known to neither the provider nor "+
			"Landscaper: move with the configuration of the last apply, then change it with "+attrLandscaperCluster+" set.")
		return ps
	}
	specs := st.ItemSpecs()
	for _, key := range slices.Sorted(maps.Keys(specs)) {
		spec := specs[key]
		if !handoverTypes[spec.Type] {
			ps.add(at, summary, fmt.Sprintf("Deploy item %q is of type %s: Landscaper has no deployer that takes over what "+
				"the provider's ran. Destroy the installation and create it again with %s.", key, spec.Type, attrLandscaperCluster))
			continue
		}
		if spec.Type != manifest.Type && spec.Type != manifest.Alias {
			continue
		}
		cfg, _ := manifest.Decode(spec.Config)
		if cfg == nil {
			continue
		}
		for i, m := range cfg.Manifests {
			if m.Policy == kube.PolicyFallback {
				ps.add(at, summary, fmt.Sprintf("Deploy item %q: manifest %d has policy fallback. Landscaper's manifest "+
					"deployer leaves an object of that policy alone when another deploy item's label marks it, as the "+
					"provider's does: it would neither manage nor delete it. Apply in-process with policy manage "+
					"first, then move.", key, i))
			}
		}
	}
	return ps
}

// leaveProblems refuses to move an installation from a Landscaper cluster
// back in-process unless the provider's deployers can take over what
// Landscaper's deployed: Landscaper's last job succeeded, the objects the
// provider wrote are as written, and the blueprint and imports are those
// of the last apply (input). A release that started (rs.Released) goes
// on: Landscaper may have let go already.
func leaveProblems(rs *remoteState, st *installation.Status, input string) problems {
	var ps problems
	if rs.Released != nil {
		return ps
	}
	at := attrPath(attrLandscaperCluster)
	const summary = "Cannot move back in-process"
	switch {
	case !st.Succeeded():
		ps.add(at, summary, fmt.Sprintf("The installation is not Succeeded on the Landscaper cluster (phase %s): the "+
			"provider would take over a tree deployed in part. Apply with %s until Landscaper succeeds, then remove it.",
			phaseOrNone(st.Phase), attrLandscaperCluster))
	case rs.Unreconciled:
		ps.add(at, summary, "The last apply wrote objects to the Landscaper cluster without Landscaper running a job "+
			"for them: what it deployed may not be what the configuration says. Apply with "+attrLandscaperCluster+
			" first, then remove it.")
	case len(rs.Drifted) > 0:
		ps.add(at, summary, fmt.Sprintf("Objects written to the Landscaper cluster changed outside Terraform (%s): what "+
			"Landscaper deployed may not be what the configuration says. Apply with %s first, then remove it.",
			strings.Join(rs.Drifted, ", "), attrLandscaperCluster))
	case rs.Input == "":
		ps.add(at, summary, "The last apply on the Landscaper cluster was made by an earlier build of the provider, which "+
			"did not record what it ran from. Apply once with "+attrLandscaperCluster+" and a new reconcile_trigger, then remove it.")
	case rs.Input != input:
		ps.add(at, summary, "The blueprint, component or imports differ from those of the last apply on the Landscaper "+
			"cluster. What the new configuration no longer renders would be left behind: move back with the "+
			"configuration of the last apply, then change it in-process.")
	}
	return ps
}

func phaseOrNone(p core.Phase) string {
	if p == "" {
		return "none"
	}
	return string(p)
}

// itemKeys are the keys of the deploy items of a tree, sorted.
func itemKeys(st *installation.Status) []string {
	var keys []string
	st.Walk(func(p string, n *installation.Status) {
		for item := range n.Execution.Items {
			keys = append(keys, installation.Join(p, item))
		}
	})
	slices.Sort(keys)
	return keys
}

func quoted(keys []string) string {
	q := make([]string, len(keys))
	for i, k := range keys {
		q[i] = fmt.Sprintf("%q", k)
	}
	if len(q) == 0 {
		return "none"
	}
	return strings.Join(q, ", ")
}

// enterWarning is what the plan of a move to a Landscaper cluster says is
// handed over.
func enterWarning(st *installation.Status, target, ns, name string) problems {
	var ps problems
	ps.warn(attrPath(attrLandscaperCluster), "Moving to the Landscaper cluster", fmt.Sprintf("The installation moves "+
		"from in-process to the Landscaper cluster of provider target %q as Installation %s/%s. Landscaper's deployers "+
		"take over what the provider deployed, in place: the deploy items %s keep their objects (updated, same UIDs) "+
		"and helm releases (upgraded: one revision more). Nothing is deleted or re-created; the provider then forgets "+
		"its own record of the tree.", target, ns, name, quoted(itemKeys(st))))
	return ps
}

// leaveWarning is what the plan of a move back in-process says is handed
// over.
func leaveWarning(rs *remoteState, st *installation.Status, name string) problems {
	var written []string
	for _, o := range rs.Objects {
		if o.Kind != lscluster.KindInstallation {
			written = append(written, o.Key())
		}
	}
	var ps problems
	ps.warn(attrPath(attrLandscaperCluster), "Moving back in-process", fmt.Sprintf("Landscaper lets go of the "+
		"Installation %s/%s without uninstalling it; the provider's deployers take over what its deploy items %s "+
		"deployed, in place (objects updated with the same UIDs, helm releases upgraded: one revision more). The "+
		"objects the provider wrote there are deleted: %s.", rs.Namespace, name, quoted(itemKeys(st)), strings.Join(written, ", ")))
	return ps
}

// applyLeaving moves an installation from its Landscaper cluster back
// in-process: Landscaper lets go of the Installation without uninstalling
// (lscluster.Writer.Release), the objects the provider wrote there are
// deleted, and the in-process job adopts every deploy item's objects and
// release, as after an import from Landscaper. Until Landscaper has let go
// the state stays remote, remembering what each item adopts; from then
// on it is in-process, whatever the job does.
func (x *installations) applyLeaving(r *jobRun[storedInstallation]) (tftypes.Value, []byte, problems) {
	rs, f := r.saved.Remote, r.f
	name := str(f["name"])
	w, ps := x.recordedWriter(r.ctx, rs)
	if w == nil {
		return r.failed(ps)
	}
	sec := x.remoteSecrets(f)
	at := attrPath(attrLandscaperCluster)
	tree, err := w.Tree(r.ctx, rs.Namespace, name)
	if err != nil {
		ps.add(at, "Cannot read the Landscaper installation", sec.Text(err.Error()))
		return r.failed(ps)
	}
	adoptions := rs.Released
	switch {
	case tree == nil && adoptions == nil:
		ps.add(at, "Cannot move back in-process", fmt.Sprintf("The Installation %s/%s is gone from the Landscaper "+
			"cluster, so what it deployed cannot be taken over. Refresh: the next plan creates the installation.", rs.Namespace, name))
		return r.failed(ps)
	case tree != nil && tree.Owner != rs.Owner:
		ps.add(at, "Cannot move back in-process", fmt.Sprintf("The Installation %s/%s on the Landscaper cluster is "+
			"no longer the one this resource wrote (annotation %s %q): what it deployed is not this resource's to take "+
			"over. Nothing was changed.", rs.Namespace, name, lscluster.OwnerAnnotation, tree.Owner))
		return r.failed(ps)
	case tree != nil && adoptions == nil && (tree.Phase != string(core.PhaseSucceeded) || tree.JobID != tree.JobIDFinished):
		// Landscaper started a job since the plan (its automatic reconcile).
		ps.add(at, "Cannot move back in-process", fmt.Sprintf("The Installation %s/%s is %s, job %q of Landscaper "+
			"running or not Succeeded; nothing was changed. Apply again once Landscaper has succeeded.",
			rs.Namespace, name, orUnknown(tree.Phase), tree.JobID))
		return r.failed(ps)
	}
	if adoptions == nil {
		if refused := x.leaveRechecked(r, w, sec); refused.errors() {
			return r.failed(append(ps, refused...))
		}
	}
	if tree != nil {
		inst, err := w.Release(r.ctx, rs.owner(name), rs.Namespace, name)
		if inst != nil {
			for _, msg := range inst.Warnings {
				ps.warn(at, "Taken over from Landscaper with a change", msg)
			}
			// What an earlier attempt read stands where Landscaper has
			// since removed a DeployItem.
			next := inst.Adoptions()
			maps.Copy(next, adoptions)
			adoptions = next
		}
		if err != nil {
			ps.add(at, "Landscaper did not let go of the installation", sec.Text(fmt.Sprintf("%v. The installation stays "+
				"on the Landscaper cluster in the state; the next apply goes on releasing it.", err)))
			if adoptions == nil {
				return r.failed(ps)
			}
			next := *rs
			next.Released = adoptions
			priv, perr := encodeRemote(r.saved.Status, &next)
			if perr != nil {
				return r.failed(ps)
			}
			return r.prior, priv, ps
		}
	}
	var written []lscluster.Object
	for _, o := range slices.Backward(rs.Objects) {
		if o.Kind != lscluster.KindInstallation {
			written = append(written, o)
		}
	}
	notOwned, err := w.Delete(r.ctx, rs.owner(name), refsOf(written))
	if notOwned != nil {
		ps.warn(at, "Objects left to their owner", sec.Text(notOwned.Error()))
	}
	if err != nil {
		var keys []string
		for _, o := range written {
			keys = append(keys, o.Key())
		}
		ps.add(at, "Cannot delete the objects written to the Landscaper cluster", sec.Text(fmt.Sprintf("%v. Landscaper "+
			"let go of the installation and the provider runs it in-process now; delete what is left of %s in "+
			"namespace %s by hand.", err, strings.Join(keys, ", "), rs.Namespace)))
	}
	if adoptions == nil {
		adoptions = map[string]*deployer.Adoption{}
	}
	st := installation.Adopting(adoptions)
	if prev := r.saved.Status; prev != nil {
		// What Landscaper exported stands until the job here computes it.
		st.Exports, st.SensitiveExports = prev.Exports, prev.SensitiveExports
	}
	// From here on the state is in-process, also when the job fails
	// before it starts.
	priv, err := encodeInstallationPrivate(st)
	if err != nil {
		ps.add(nil, "Cannot store the installation's status", err.Error())
		return r.failed(ps)
	}
	r.prior, _, _ = x.stateOf(maps.Clone(f), st, sec, nil, nil)
	r.private, r.saved = priv, storedInstallation{Status: st}
	state, priv, jps := x.applyInProcess(r)
	return state, priv, append(ps, jps...)
}

// leaveRechecked checks a move back in-process again before Landscaper
// lets go, as applyRemote checks a move there: the plan checked it only
// when it knew the blueprint and imports (not when an import comes from a
// resource changed in the same apply), and against the objects' drift
// as the last refresh read it (none with -refresh=false).
func (x *installations) leaveRechecked(r *jobRun[storedInstallation], w *lscluster.Writer, sec *masking.Tree) problems {
	src, srcKnown := sourceOf(r.f)
	imp, impKnown, ps := importsOf(r.f, x.targets())
	if ps.errors() {
		return ps
	}
	if !srcKnown || !impKnown {
		ps.add(nil, "Installation not known", "blueprint, component or imports still hold unknown values at apply time.")
		return ps
	}
	bp, err := x.load(r.ctx, src)
	if err != nil {
		return loadProblems(err)
	}
	rs := *r.saved.Remote
	if rs.Drifted, err = w.Drifted(r.ctx, rs.Objects); err != nil {
		ps.add(attrPath(attrLandscaperCluster), "Cannot move back in-process", sec.Text(fmt.Sprintf("Reading the "+
			"objects written to the Landscaper cluster: %v. Nothing was changed.", err)))
		return ps
	}
	input := installation.InputHash(bp, imp)
	if refused := leaveProblems(&rs, r.saved.Status, input); refused.errors() || rs.Released != nil {
		return refused
	}
	// Drifted compares records, whose Secret data is masked: a Secret
	// given other data on the Landscaper cluster (a target kubeconfig, a
	// sensitive import) is told by comparing what the configuration
	// writes.
	changed, err := x.leavingSecretsChanged(r.ctx, w, r.f, &rs)
	if err != nil {
		ps.add(attrPath(attrLandscaperCluster), "Cannot move back in-process", sec.Text(fmt.Sprintf("Reading the "+
			"Secrets written to the Landscaper cluster: %v. Nothing was changed.", err)))
		return ps
	}
	rs.Drifted = slices.Compact(slices.Sorted(slices.Values(append(rs.Drifted, changed...))))
	return leaveProblems(&rs, r.saved.Status, input)
}

// leavingSecretsChanged are the keys of the Secrets rs wrote whose data on
// the Landscaper cluster is not what the configuration f writes there.
func (x *installations) leavingSecretsChanged(ctx context.Context, w *lscluster.Writer, f map[string]tftypes.Value,
	rs *remoteState,
) ([]string, error) {
	lt, _ := x.t.AttributeTypes[attrLandscaperCluster].(tftypes.Object)
	cluster := map[string]tftypes.Value{}
	for name, typ := range lt.AttributeTypes {
		cluster[name] = tftypes.NewValue(typ, nil)
	}
	cluster["target"] = tftypes.NewValue(tftypes.String, rs.Target)
	cluster["namespace"] = tftypes.NewValue(tftypes.String, rs.Namespace)
	g := maps.Clone(f)
	g[attrLandscaperCluster] = tftypes.NewValue(lt, cluster)
	run, ps := x.renderRemote(ctx, g, x.targets())
	if run == nil {
		return nil, fmt.Errorf("the configuration does not render the objects to compare: %v", ps)
	}
	recorded := map[string]bool{}
	for _, o := range rs.Objects {
		recorded[o.Key()] = true
	}
	// A Secret the last apply did not write is not on the cluster to
	// compare; the inputs' check (Input) refuses such a move.
	objs := slices.DeleteFunc(slices.Clone(run.objs), func(o lscluster.Object) bool { return !recorded[o.Key()] })
	return w.SecretsChanged(ctx, objs)
}

// moveWriteFailed undoes what a move to a Landscaper cluster wrote before
// the write failed: the Installation is written last, so unless it was
// written (installationWritten: the write failed after it, taking back
// what others changed), Landscaper has not been handed anything, and the
// installation stays in-process. What the clean-up cannot delete is left
// under the move's owner ID (moveOwnerID), which the next try of the move
// writes as again, so it takes those objects over.
func moveWriteFailed(err error, cleanup error, installationWritten bool) string {
	msg := fmt.Sprintf("%v. The installation stays in-process; nothing was handed over.", err)
	if installationWritten {
		msg = fmt.Sprintf("%v. The installation stays in-process, but the Installation was written to the Landscaper "+
			"cluster before the failure, and Landscaper may have started a job for it.", err)
	}
	if cleanup != nil {
		msg += " Deleting what was written failed: " + cleanup.Error() + ". The objects left stay annotated as this " +
			"resource's: applying the move again takes them over; moving no more leaves them to be deleted by hand."
	}
	return msg
}

// moveOwnerID is the owner ID a move to a Landscaper cluster writes as:
// derived from the in-process job's ID (random, in the private state, and
// kept as it was when the move fails), so a retry of a failed move is the
// same owner as the objects the failed one left, and another resource is
// not. Without a job ID it is a new one.
func moveOwnerID(st *installation.Status, namespace, name string) string {
	if st == nil || st.JobID == "" {
		return lscluster.NewOwnerID()
	}
	sum := sha256.Sum256([]byte("landscaper-move\x00" + st.JobID + "\x00" + namespace + "/" + name))
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:16]))
}
