package provider

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/blueprint/component"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/installation"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/ctf"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/render"
)

// The provider attributes that say where components come from: Landscaper's
// Context (repositoryContext, registry pull secrets, verification
// signatures, component version overwrites) plus a cache directory.

const (
	attrRepositoryContext      = "repository_context"
	attrRegistryCredentials    = "registry_credentials"
	attrVerificationSignatures = "verification_signatures"
	attrComponentOverwrites    = "component_overwrites"
	attrCacheDir               = "cache_dir"
)

const repositoryContextDescription = "Landscaper's `repositoryContext`, with its keys verbatim: " +
	"`type` (`OCIRegistry`, or the legacy `ociRegistry`), `baseUrl` (a registry host and path such as " +
	"`ghcr.io/acme/ocm`; prefix `http://` to reach a registry over plain HTTP, which is otherwise allowed " +
	"for loopback addresses only), and optionally `subPath` and `componentNameMapping` (`urlPath`, the " +
	"default, or `sha256-digest`)."

func componentProviderAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		attrRepositoryContext: schema.MapAttribute{
			MarkdownDescription: "The OCM repository components are read from when an installation names none. " +
				repositoryContextDescription,
			Optional:    true,
			ElementType: types.StringType,
		},
		attrRegistryCredentials: schema.MapNestedAttribute{
			MarkdownDescription: "Credentials by registry host (`ghcr.io`, `registry.example.com:5000`), for components, " +
				"blueprints and resources and for the helm deployer's charts (`chart.ref`, and `helmChartRepo` and " +
				"`archive.remote.url` by the URL's host). They come first; then the Docker config (`DOCKER_CONFIG` or `~/.docker/config.json`, with its credential " +
				"helpers); then anonymous access. They are sent to that host and port over HTTPS only, never along a redirect " +
				"or a chart URL to another scheme, host or port; write the key `http://host:port` to send them over plain HTTP " +
				"too (which also allows plain HTTP to that host). They never reach state, logs or diagnostics. With " +
				"`landscaper_cluster`, an installation's component registry's entry (user name and password; a token " +
				"is refused there) is written to the Landscaper cluster as the Context's registry pull secret.",
			Optional:  true,
			Sensitive: true,
			NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"username": schema.StringAttribute{Optional: true, Sensitive: true, MarkdownDescription: "User name for basic authentication, or for the registry's token service."},
				"password": schema.StringAttribute{Optional: true, Sensitive: true, MarkdownDescription: "Password or access token going with `username`."},
				"token": schema.StringAttribute{Optional: true, Sensitive: true, MarkdownDescription: "A registry token sent as a bearer " +
					"token (instead of `username` and `password`)."},
			}},
		},
		attrVerificationSignatures: schema.MapNestedAttribute{
			MarkdownDescription: "Landscaper's `verificationSignatures`: what an installation's " +
				"`verification.signature_name` verifies with, by signature name. Set exactly one of `public_key` " +
				"and `ca_certificate`.",
			Optional: true,
			NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"public_key": schema.StringAttribute{Optional: true, MarkdownDescription: "PEM-encoded RSA public key " +
					"of the signer (`ocm verify --public-key`)."},
				"ca_certificate": schema.StringAttribute{Optional: true, MarkdownDescription: "PEM-encoded CA certificate " +
					"that issued the signer's certificate (`ocm verify --ca-cert`); the signature must carry the " +
					"signer's certificate, which must allow code signing (its extended key usage, if any) and digital " +
					"signatures (its key usage, if any). Without `subject`, any certificate the CA issued is accepted " +
					"(a warning says so)."},
				"subject": schema.StringAttribute{Optional: true, MarkdownDescription: "With `ca_certificate`: the " +
					"signer whose certificate alone is accepted, as a distinguished name (`CN=release signer,O=Acme,C=DE`, " +
					"as `openssl x509 -subject -nameopt RFC2253` prints it; every attribute must match, in any order) " +
					"or a plain common name (`release signer`)."},
			}},
		},
		attrComponentOverwrites: schema.DynamicAttribute{
			MarkdownDescription: "Landscaper's `ComponentVersionOverwrites`: a list of " +
				"`{ component = {...}, substitution = {...} }`, each side with Landscaper's keys `componentName`, " +
				"`version` and `repositoryContext`, all optional. A reference matching every key given in " +
				"`component` gets the keys given in `substitution`. Entries are evaluated in order; no key is " +
				"substituted twice, and an entry applies whole or not at all. They apply to the installations' " +
				"components and to every component they reference.",
			Optional: true,
		},
		attrCacheDir: schema.StringAttribute{
			MarkdownDescription: "Where component descriptors and blobs read from repositories are cached by " +
				"digest; `~/` is the home directory. Defaults to `terraform-provider-landscaper` in the OS's user " +
				"cache directory (`$XDG_CACHE_HOME`, `~/.cache`, `~/Library/Caches`). With a warm cache a settled " +
				"plan downloads nothing, and still works while the registry is unreachable (with a warning).",
			Optional: true,
		},
	}
}

// componentsModel is the components part of the provider configuration.
type componentsModel struct {
	RepositoryContext      types.Map     `tfsdk:"repository_context"`
	RegistryCredentials    types.Map     `tfsdk:"registry_credentials"`
	VerificationSignatures types.Map     `tfsdk:"verification_signatures"`
	ComponentOverwrites    types.Dynamic `tfsdk:"component_overwrites"`
	CacheDir               types.String  `tfsdk:"cache_dir"`
}

type credentialModel struct {
	Username types.String `tfsdk:"username"`
	Password types.String `tfsdk:"password"`
	Token    types.String `tfsdk:"token"`
}

type signatureModel struct {
	PublicKey     types.String `tfsdk:"public_key"`
	CACertificate types.String `tfsdk:"ca_certificate"`
	Subject       types.String `tfsdk:"subject"`
}

// componentsConfig is the components part of the provider configuration,
// decoded.
type componentsConfig struct {
	repositoryContext map[string]any
	credentials       map[string]registryCredential
	signatures        map[string]signatureModel
	overwrites        []ocm.Overwrite
	cacheDir          string
}

type registryCredential struct {
	username, password, token string
}

// decode reads the components configuration, reporting problems on their
// attribute paths. Unknown values (a provider configured from resources
// not yet created) leave their part unset.
func (m componentsModel) decode(ctx context.Context) (componentsConfig, diag.Diagnostics) {
	var c componentsConfig
	var diags diag.Diagnostics
	if known(m.RepositoryContext) && !m.RepositoryContext.IsNull() {
		var rc map[string]string
		diags.Append(m.RepositoryContext.ElementsAs(ctx, &rc, false)...)
		c.repositoryContext = stringMapToAny(rc)
		if _, err := ocm.ParseRepositorySpec(c.repositoryContext); err != nil {
			diags.AddAttributeError(path.Root(attrRepositoryContext), "Invalid repository context", err.Error())
		}
	}
	if known(m.RegistryCredentials) && !m.RegistryCredentials.IsNull() {
		var creds map[string]credentialModel
		diags.Append(m.RegistryCredentials.ElementsAs(ctx, &creds, false)...)
		c.credentials = map[string]registryCredential{}
		for host, cr := range creds {
			at := path.Root(attrRegistryCredentials).AtMapKey(host)
			rc := registryCredential{username: cr.Username.ValueString(), password: cr.Password.ValueString(), token: cr.Token.ValueString()}
			switch {
			case rc.token != "" && (rc.username != "" || rc.password != ""):
				diags.AddAttributeError(at, "Invalid registry credentials", "set either token, or username and password, not both")
			case rc.token == "" && (rc.username == "") != (rc.password == ""):
				diags.AddAttributeError(at, "Invalid registry credentials", "username and password go together")
			}
			c.credentials[host] = rc
		}
	}
	if known(m.VerificationSignatures) && !m.VerificationSignatures.IsNull() {
		diags.Append(m.VerificationSignatures.ElementsAs(ctx, &c.signatures, false)...)
		for name, s := range c.signatures {
			if (s.PublicKey.ValueString() == "") == (s.CACertificate.ValueString() == "") && known(s.PublicKey) && known(s.CACertificate) {
				diags.AddAttributeError(path.Root(attrVerificationSignatures).AtMapKey(name), "Invalid verification signature",
					"set exactly one of public_key and ca_certificate")
			}
			if !s.Subject.IsNull() && known(s.Subject) && known(s.CACertificate) {
				at := path.Root(attrVerificationSignatures).AtMapKey(name)
				if s.CACertificate.ValueString() == "" {
					diags.AddAttributeError(at.AtName("subject"), "Invalid verification signature",
						"subject applies to ca_certificate only: a public_key names its signer already")
				} else if _, err := newSignatureVerifier(name, "", s.CACertificate.ValueString(), ""); err != nil {
					diags.AddAttributeError(at.AtName("ca_certificate"), "Invalid verification signature", err.Error())
				} else if _, err := newSignatureVerifier(name, "", s.CACertificate.ValueString(), s.Subject.ValueString()); err != nil {
					diags.AddAttributeError(at.AtName("subject"), "Invalid verification signature", err.Error())
				}
			}
		}
	}
	if !m.ComponentOverwrites.IsNull() && known(m.ComponentOverwrites) {
		var err error
		var at path.Path
		c.overwrites, at, err = decodeOverwrites(m.ComponentOverwrites.UnderlyingValue())
		if err != nil {
			diags.AddAttributeError(at, "Invalid component overwrite", err.Error())
		}
	}
	if known(m.CacheDir) {
		c.cacheDir = m.CacheDir.ValueString()
	}
	return c, diags
}

// known reports whether a value holds no unknown value anywhere:
// validation sees variables as unknown, and so may a provider configured
// from resources not created yet. Unknown parts are checked once known.
func known(v attr.Value) bool {
	tv, err := v.ToTerraformValue(context.Background())
	return err == nil && tv.IsFullyKnown()
}

func stringMapToAny(in map[string]string) map[string]any {
	if in == nil {
		return nil
	}
	out := make(map[string]any, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}

// decodeOverwrites reads component_overwrites: a list (or tuple) of
// objects with component and substitution, each with Landscaper's keys.
func decodeOverwrites(v attr.Value) ([]ocm.Overwrite, path.Path, error) {
	root := path.Root(attrComponentOverwrites)
	var elems []attr.Value
	switch l := v.(type) {
	case basetypes.ListValue:
		elems = l.Elements()
	case basetypes.TupleValue:
		elems = l.Elements()
	default:
		return nil, root, fmt.Errorf("must be a list of { component = {...}, substitution = {...} }, not %s", v.Type(context.Background()))
	}
	out := make([]ocm.Overwrite, 0, len(elems))
	for i, e := range elems {
		at := root.AtListIndex(i)
		attrs, err := objectAttributes(e)
		if err != nil {
			return nil, at, err
		}
		for k := range attrs {
			if k != "component" && k != "substitution" {
				return nil, at.AtName(k), fmt.Errorf("unknown key %q (component, substitution)", k)
			}
		}
		var o ocm.Overwrite
		for _, side := range []struct {
			key string
			ref *ocm.OverwriteRef
		}{{"component", &o.Source}, {"substitution", &o.Substitution}} {
			sv, ok := attrs[side.key]
			if !ok || sv.IsNull() {
				return nil, at.AtName(side.key), fmt.Errorf("%s is required", side.key)
			}
			if *side.ref, err = decodeOverwriteRef(sv); err != nil {
				return nil, at.AtName(side.key), err
			}
		}
		if o.Substitution.ComponentName == "" && o.Substitution.Version == "" && o.Substitution.RepositoryContext == nil {
			return nil, at.AtName("substitution"), fmt.Errorf("substitution must set componentName, version or repositoryContext")
		}
		out = append(out, o)
	}
	return out, root, nil
}

func objectAttributes(v attr.Value) (map[string]attr.Value, error) {
	switch o := v.(type) {
	case basetypes.ObjectValue:
		return o.Attributes(), nil
	case basetypes.MapValue:
		return o.Elements(), nil
	}
	return nil, fmt.Errorf("must be an object, not %s", v.Type(context.Background()))
}

func decodeOverwriteRef(v attr.Value) (ocm.OverwriteRef, error) {
	var r ocm.OverwriteRef
	attrs, err := objectAttributes(v)
	if err != nil {
		return r, err
	}
	for k, av := range attrs {
		if av.IsNull() {
			continue
		}
		switch k {
		case "componentName", "version":
			s, ok := av.(basetypes.StringValue)
			if !ok {
				return r, fmt.Errorf("%s must be a string", k)
			}
			if k == "version" {
				r.Version = s.ValueString()
			} else {
				r.ComponentName = s.ValueString()
			}
		case "repositoryContext":
			rc, err := objectAttributes(av)
			if err != nil {
				return r, fmt.Errorf("repositoryContext %w", err)
			}
			r.RepositoryContext = map[string]any{}
			for rk, rv := range rc {
				s, ok := rv.(basetypes.StringValue)
				if !ok {
					return r, fmt.Errorf("repositoryContext.%s must be a string", rk)
				}
				r.RepositoryContext[rk] = s.ValueString()
			}
			if _, err := ocm.ParseRepositorySpec(r.RepositoryContext); err != nil {
				return r, err
			}
		default:
			keys := []string{"componentName", "version", "repositoryContext"}
			slices.Sort(keys)
			return r, fmt.Errorf("unknown key %q (%s, %s, %s)", k, keys[0], keys[1], keys[2])
		}
	}
	return r, nil
}

// localRepository is the repository context of a component.repository
// path: a CTF or a component archive, told apart when it is opened.
func localRepository(p string) map[string]any {
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	return map[string]any{"type": ocm.TypeCTF, "filePath": p}
}

// validateComponent checks an installation's component at plan time.
func validateComponent(comp, verification tftypes.Value) problems {
	var ps problems
	if v := fields(verification); v != nil {
		if n := v["signature_name"]; n.IsKnown() && !n.IsNull() && str(n) == "" {
			// An empty name once verified nothing, silently: a
			// verification block always verifies.
			ps.add(attrPath("verification").WithAttributeName("signature_name"), "Invalid verification",
				"signature_name is empty: name the signature to verify (a key of the provider's verification_signatures); "+
					"to install without verifying, remove the verification block")
		}
	}
	c := fields(comp)
	if c == nil {
		if v := verification; v.IsKnown() && !v.IsNull() {
			ps.add(attrPath("verification"), "Invalid verification", "verification needs a component to verify: set component")
		}
		return ps
	}
	at := attrPath("component")
	rc, repo := c[attrRepositoryContext], c["repository"]
	if rc.IsKnown() && !rc.IsNull() && repo.IsKnown() && !repo.IsNull() {
		ps.add(at.WithAttributeName("repository"), "Invalid component", "set repository or repository_context, not both")
	}
	if rc.IsFullyKnown() && !rc.IsNull() {
		m := map[string]any{}
		for k, v := range fields(rc) {
			m[k] = str(v)
		}
		if _, err := ocm.ParseRepositorySpec(m); err != nil {
			ps.add(at.WithAttributeName(attrRepositoryContext), "Invalid repository context", err.Error())
		}
	}
	if repo.IsKnown() && !repo.IsNull() && str(repo) == "" {
		ps.add(at.WithAttributeName("repository"), "Invalid component", "repository must name a CTF or component archive path")
	}
	return ps
}

// componentWarnings turns what loading components had to say without
// failing (a registry down, the cache used) into warnings on component.
func componentWarnings(bp installation.Blueprint) problems {
	var ps problems
	for _, w := range render.Warnings(bp) {
		ps.warn(attrPath("component"), "Component served from the cache", w)
	}
	return ps
}

// components is what the provider configuration says about components,
// ready for use: the repositories' client (holding the credentials, which
// go no further), the cache and the verifiers.
type components struct {
	cfg      componentsConfig
	cache    ocm.Cache
	registry registryClient
}

// registryClient reaches OCI registries: repositories of component
// versions, and artifacts that resources point to.
type registryClient interface {
	Repository(spec ocm.RepositorySpec) ocm.Repository
	ocm.BlobSource
}

func newComponents(cc componentsConfig, version string) (*components, error) {
	var cache ocm.Cache
	if cc.cacheDir != "" {
		dc, err := ocm.NewDiskCache(cc.cacheDir)
		if err != nil {
			return nil, err
		}
		cache = dc
	} else if dir, err := ocm.DefaultCacheDir(); err == nil {
		// Without a usable default directory (no home, read-only) the
		// provider still works, downloading what it needs every time.
		if dc, err := ocm.NewDiskCache(dir); err == nil {
			cache = dc
		}
	}
	reg, err := newRegistryClient(cc, cache, version)
	if err != nil {
		return nil, err
	}
	return &components{cfg: cc, cache: cache, registry: reg}, nil
}

// context is the ocm.Context of one operation's resolver.
func (c *components) context() *ocm.Context {
	return &ocm.Context{
		RepositoryContext: c.cfg.repositoryContext,
		Overwrites:        c.cfg.overwrites,
		Open:              c.open,
		Global:            c.registry,
	}
}

func (c *components) open(spec ocm.RepositorySpec) (ocm.Repository, error) {
	switch spec.Type {
	case ocm.TypeCTF, ocm.TypeComponentArchive:
		return ctf.Open(spec.FilePath)
	}
	return c.registry.Repository(spec), nil
}

// verifier returns the verifier of a signature name of
// verification_signatures.
func (c *components) verifier(name string) (component.Verifier, error) {
	s, ok := c.cfg.signatures[name]
	if !ok {
		names := slices.Sorted(maps.Keys(c.cfg.signatures))
		if len(names) == 0 {
			return nil, fmt.Errorf("signature %q is not in the provider's verification_signatures, which is empty", name)
		}
		return nil, fmt.Errorf("signature %q is not in the provider's verification_signatures (%s)", name, strings.Join(names, ", "))
	}
	return newSignatureVerifier(name, s.PublicKey.ValueString(), s.CACertificate.ValueString(), s.Subject.ValueString())
}

// signatureWarnings says which CA signatures accept any certificate
// their CA issued. Given once, when the configuration is validated.
func (c componentsConfig) signatureWarnings() diag.Diagnostics {
	var diags diag.Diagnostics
	for _, name := range slices.Sorted(maps.Keys(c.signatures)) {
		s := c.signatures[name]
		if s.CACertificate.ValueString() != "" && s.Subject.IsNull() {
			diags.AddAttributeWarning(path.Root(attrVerificationSignatures).AtMapKey(name).AtName("ca_certificate"), "Any signer of this CA is accepted",
				fmt.Sprintf("signature %q verifies with a CA certificate and no subject: a component signed with any certificate that CA "+
					"issued verifies. Set subject to the signer's certificate subject (or common name) to accept that signer only.", name))
		}
	}
	return diags
}
