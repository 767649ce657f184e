package lscluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/masking"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm"
)

// Read reads the root Installation namespace/name and everything a
// takeover needs from the cluster, without writing anything.
func (r *Reader) Read(ctx context.Context, namespace, name string) (*Installation, error) {
	if err := r.check(); err != nil {
		return nil, err
	}
	var inst lsInstallation
	if err := r.get(ctx, installationsGVR, namespace, name, "", &inst); err != nil {
		return nil, err
	}
	if parent := parentOf(&inst); parent != "" {
		return nil, fmt.Errorf("Installation %s/%s is a sub-installation of %q: take over the root installation, its sub-installations come with it", namespace, name, parent)
	}
	out := &Installation{
		Namespace: namespace, Name: name, Phase: inst.Status.Phase,
		Imports: map[string]Import{}, Targets: map[string]TargetImport{},
		Exports: map[string]Export{}, TargetExports: map[string]TargetExport{},
	}
	rd := &instReader{Reader: r, inst: &inst, out: out}
	steps := []func(context.Context) error{
		rd.blueprint, rd.component, rd.dataImports, rd.targetImports, rd.mappings, rd.exports,
	}
	for _, step := range steps {
		if err := step(ctx); err != nil {
			return nil, rd.mask(fmt.Errorf("Installation %s/%s: %w", namespace, name, err))
		}
	}
	rd.notes()
	exec, subs, err := r.tree(ctx, &inst, 0)
	if err != nil {
		return nil, fmt.Errorf("Installation %s/%s: %w", namespace, name, err)
	}
	out.Execution, out.Subinstallations = exec, subs
	out.Warnings = append(out.Warnings, treeWarnings(out.DeployItems())...)
	return out, nil
}

// instReader reads one root Installation's parts into out.
type instReader struct {
	*Reader
	inst *lsInstallation
	out  *Installation
	// targetValues are the imported Targets as Landscaper hands them to
	// importDataMappings (whole objects), by import name.
	targetValues map[string]any
	// secrets are the values a mapping result must not carry unmarked:
	// those of Secret imports and of Target configs.
	secrets []string
	// masked masks them, and what mappings made of them, in messages.
	masked masking.Secrets
}

// maskedError is an error whose message had secrets masked; it still
// wraps the error it came from, for errors.Is.
type maskedError struct {
	msg string
	err error
}

func (e *maskedError) Error() string { return e.msg }
func (e *maskedError) Unwrap() error { return e.err }

// mask masks the values of Secrets and Target configs, and what the
// mappings made of them, in an error: it reaches a diagnostic.
func (rd *instReader) mask(err error) error {
	for _, s := range rd.secrets {
		// Its upper and lower case, base64, hex and JSON forms too, as
		// wherever else secrets are masked.
		rd.masked.Add(s)
	}
	if m := rd.masked.Text(err.Error()); m != err.Error() {
		return &maskedError{msg: m, err: err}
	}
	return err
}

func (rd *instReader) warn(format string, args ...any) {
	rd.out.Warnings = append(rd.out.Warnings, fmt.Sprintf(format, args...))
}

// parentOf is the name of the Installation owning inst, as Landscaper tells
// root installations from sub-installations: by owner reference.
func parentOf(inst *lsInstallation) string {
	for _, o := range inst.OwnerReferences {
		if o.Kind == "Installation" && strings.HasPrefix(o.APIVersion, group+"/") {
			return o.Name
		}
	}
	return ""
}

func (rd *instReader) blueprint(context.Context) error {
	bp, err := readBlueprint(rd.inst)
	rd.out.Blueprint = bp
	return err
}

func readBlueprint(inst *lsInstallation) (Blueprint, error) {
	def := inst.Spec.Blueprint
	switch {
	case def.Reference != nil && def.Inline != nil:
		return Blueprint{}, errors.New("spec.blueprint sets both ref and inline")
	case def.Reference != nil:
		if def.Reference.ResourceName == "" {
			return Blueprint{}, errors.New("spec.blueprint.ref.resourceName is empty")
		}
		return Blueprint{Ref: def.Reference.ResourceName}, nil
	case def.Inline != nil:
		files, err := flattenFilesystem(def.Inline.Filesystem)
		if err != nil {
			return Blueprint{}, fmt.Errorf("spec.blueprint.inline.filesystem: %w", err)
		}
		return Blueprint{Filesystem: files}, nil
	}
	return Blueprint{}, errors.New("spec.blueprint sets neither ref nor inline")
}

// flattenFilesystem turns Landscaper's YAML file system (file name to
// content, a nested object a directory) into contents by path.
func flattenFilesystem(raw json.RawMessage) (map[string]string, error) {
	var root map[string]any
	if err := json.Unmarshal(raw, &root); err != nil {
		return nil, fmt.Errorf("not an object of file names to contents: %w", err)
	}
	files := map[string]string{}
	var walk func(prefix string, m map[string]any) error
	walk = func(prefix string, m map[string]any) error {
		for k, v := range m {
			p := path.Join(prefix, k)
			switch t := v.(type) {
			case string:
				files[p] = t
			case map[string]any:
				if err := walk(p, t); err != nil {
					return err
				}
			default:
				return fmt.Errorf("entry %s is neither a file (string) nor a directory (object)", p)
			}
		}
		return nil
	}
	if err := walk("", root); err != nil {
		return nil, err
	}
	if _, ok := files["blueprint.yaml"]; !ok {
		return nil, errors.New("it holds no blueprint.yaml")
	}
	return files, nil
}

// component reads the component reference as Landscaper resolves it
// (installations.GetExternalContext): the Context named by spec.context is
// read whenever it is set; the reference's own repository context wins
// over the Context's.
func (rd *instReader) component(ctx context.Context) error {
	spec := rd.inst.Spec
	if spec.Verification != nil {
		rd.out.Verification = spec.Verification.SignatureName
	}
	var lsCtx *lsContext
	if spec.Context != "" {
		lsCtx = &lsContext{}
		if err := rd.get(ctx, contextsGVR, rd.inst.Namespace, spec.Context, "spec.context", lsCtx); err != nil {
			return err
		}
		rd.contextNotes(lsCtx)
	}
	cd := spec.ComponentDescriptor
	if cd == nil || (cd.Reference == nil && cd.Inline == nil) {
		return nil
	}
	c := &Component{}
	switch {
	case cd.Reference != nil:
		c.Name, c.Version = cd.Reference.ComponentName, cd.Reference.Version
		if cd.Reference.RepositoryContext != nil {
			c.RepositoryContext, c.RepositoryContextFrom = cd.Reference.RepositoryContext, "spec.componentDescriptor.ref"
		}
	default:
		comp := cd.Inline.Component
		c.Name, c.Version = comp.Name, comp.Version
		if n := len(comp.RepositoryContexts); n > 0 {
			c.RepositoryContext, c.RepositoryContextFrom = comp.RepositoryContexts[n-1], "spec.componentDescriptor.inline"
		}
		rd.warn("spec.componentDescriptor.inline: the inline component descriptor is not taken over; the component %s:%s is read from its repository instead", c.Name, c.Version)
	}
	if c.Name == "" || c.Version == "" {
		return errors.New("spec.componentDescriptor names no component name and version")
	}
	if c.RepositoryContext == nil && lsCtx != nil && lsCtx.RepositoryContext != nil {
		c.RepositoryContext, c.RepositoryContextFrom = lsCtx.RepositoryContext, fmt.Sprintf("Context %q", lsCtx.Name)
	}
	if lsCtx != nil && lsCtx.ComponentVersionOverwrites != "" {
		if err := rd.overwrite(ctx, lsCtx, c); err != nil {
			return err
		}
	}
	if c.RepositoryContext == nil {
		rd.warn("the component %s:%s has no repository context, neither in spec.componentDescriptor nor in a Context: the provider's repository_context must name its repository", c.Name, c.Version)
	}
	rd.out.Component = c
	return nil
}

// overwrite applies the Context's ComponentVersionOverwrites to the
// component reference, after the Context's repository context, as
// Landscaper does (installations.ApplyComponentOverwrite), with the rules
// the provider's component_overwrites follow.
func (rd *instReader) overwrite(ctx context.Context, lsCtx *lsContext, c *Component) error {
	var cvo lsOverwrites
	why := fmt.Sprintf("componentVersionOverwrites of Context %q", lsCtx.Name)
	if err := rd.get(ctx, overwritesGVR, rd.inst.Namespace, lsCtx.ComponentVersionOverwrites, why, &cvo); err != nil {
		return err
	}
	list := make([]ocm.Overwrite, len(cvo.Overwrites))
	for i, o := range cvo.Overwrites {
		list[i] = ocm.Overwrite{Source: o.Source, Substitution: o.Substitution}
	}
	rd.out.ComponentOverwrites = list
	ref := ocm.Ref{ComponentName: c.Name, Version: c.Version, RepositoryContext: c.RepositoryContext}
	before := ref
	if ocm.Overwrites(list, &ref) {
		c.Overwritten = &before
		c.Name, c.Version = ref.ComponentName, ref.Version
		if !reflect.DeepEqual(ref.RepositoryContext, before.RepositoryContext) {
			c.RepositoryContext = ref.RepositoryContext
			c.RepositoryContextFrom = fmt.Sprintf("ComponentVersionOverwrites %q", cvo.Name)
		}
		rd.warn("ComponentVersionOverwrites %q (of Context %q) turn the component %s into %s, which is what is taken over", cvo.Name, lsCtx.Name, before, ref)
	}
	rd.warn("ComponentVersionOverwrites %q (of Context %q, %d substitution(s)) also apply to the components the component references: set the provider's component_overwrites to them", cvo.Name, lsCtx.Name, len(list))
	return nil
}

// contextNotes warns of what a Context holds that is not copied: the
// provider holds credentials, overwrites and trust itself.
func (rd *instReader) contextNotes(c *lsContext) {
	if len(c.RegistryPullSecrets) > 0 {
		names := make([]string, len(c.RegistryPullSecrets))
		for i, s := range c.RegistryPullSecrets {
			names[i] = fmt.Sprintf("%q", s.Name)
		}
		rd.warn("Context %q: registryPullSecrets (Secret %s) are not copied: set the provider's registry_credentials for the registries they hold", c.Name, strings.Join(names, ", "))
	}
	if c.OCMConfig != nil && c.OCMConfig.Name != "" {
		rd.warn("Context %q: ocmConfig (ConfigMap %q) is not copied: set the provider's repository_context and registry_credentials to what it configures", c.Name, c.OCMConfig.Name)
	}
	if len(c.VerificationSignatures) > 0 {
		names := make([]string, 0, len(c.VerificationSignatures))
		for n := range c.VerificationSignatures {
			names = append(names, fmt.Sprintf("%q", n))
		}
		sort.Strings(names)
		rd.warn("Context %q: verificationSignatures (%s) are not copied: set the provider's verification_signatures", c.Name, strings.Join(names, ", "))
	}
	rd.configurationNotes(c)
}

// configurationNotes warns of a Context's configurations, which deployers
// read and the provider does not: helm chart repository credentials belong
// in registry_credentials, by the repository's host.
func (rd *instReader) configurationNotes(c *lsContext) {
	for _, key := range sortedKeys(c.Configurations) {
		if key != "helmChartRepoCredentials" {
			rd.warn("Context %q: configurations.%s is not copied: the provider does not read deployer configurations from a Context", c.Name, key)
			continue
		}
		var creds struct {
			Auths []struct {
				URL string `json:"url"`
			} `json:"auths"`
		}
		_ = json.Unmarshal(c.Configurations[key], &creds)
		hosts := []string{}
		for _, a := range creds.Auths {
			if u, err := url.Parse(a.URL); err == nil && u.Host != "" && !slices.Contains(hosts, strconv.Quote(u.Host)) {
				hosts = append(hosts, strconv.Quote(u.Host))
			}
		}
		where := "the helm chart repositories they name"
		if len(hosts) > 0 {
			where = strings.Join(hosts, ", ")
		}
		rd.warn("Context %q: configurations.helmChartRepoCredentials are not copied: set the provider's registry_credentials for %s", c.Name, where)
	}
}

// notes warns of what the Installation sets that has no counterpart.
func (rd *instReader) notes() {
	inst := rd.inst
	if len(inst.Spec.ExportDataMappings) > 0 {
		keys := sortedKeys(inst.Spec.ExportDataMappings)
		rd.warn("spec.exportDataMappings (%s) are not taken over: landscaper_installation exports what the blueprint exports", strings.Join(keys, ", "))
	}
	if len(inst.Spec.AutomaticReconcile) > 0 && string(inst.Spec.AutomaticReconcile) != "null" {
		rd.warn("spec.automaticReconcile is not taken over: Terraform runs the installation when it applies")
	}
	if inst.Status.Phase != phaseSucceeded {
		rd.warn("the Installation's phase is %q, not %q: the first apply runs what did not finish", inst.Status.Phase, phaseSucceeded)
	}
	if inst.DeletionTimestamp != nil {
		rd.warn("the Installation is being deleted (since %s)", inst.DeletionTimestamp.UTC().Format(time.RFC3339))
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
