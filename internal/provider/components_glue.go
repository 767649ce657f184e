package provider

import (
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/blueprint/component"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/lscluster"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/ociregistry"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/signing"
)

// newRegistryClient hands the configured credentials to the registry
// client, the one place that keeps them.
func newRegistryClient(cc componentsConfig, cache ocm.Cache, version string) (registryClient, error) {
	creds := make(map[string]ociregistry.Credential, len(cc.credentials))
	for host, c := range cc.credentials {
		creds[host] = ociregistry.Credential{Username: c.username, Password: c.password, Token: c.token}
	}
	return ociregistry.New(ociregistry.Options{
		Credentials: creds,
		Cache:       cache,
		MaxBlobSize: component.MaxBlobSize,
		UserAgent:   "terraform-provider-landscaper/" + version,
	})
}

func newSignatureVerifier(name, publicKey, caCertificate, subject string) (component.Verifier, error) {
	v, err := signing.NewVerifier(name, publicKey, caCertificate)
	if err != nil || subject == "" {
		return v, err
	}
	if err := v.RequireSubject(subject); err != nil {
		return nil, err
	}
	return v, nil
}

// registryCredentials are the provider's registry_credentials by their
// keys, for a Landscaper cluster's pull secrets; nil before Configure.
func (p *Provider) registryCredentials() map[string]lscluster.RegistryAuth {
	c := p.components.Load()
	if c == nil || len(c.cfg.credentials) == 0 {
		return nil
	}
	out := make(map[string]lscluster.RegistryAuth, len(c.cfg.credentials))
	for key, cr := range c.cfg.credentials {
		out[key] = lscluster.RegistryAuth{Username: cr.username, Password: cr.password, Token: cr.token}
	}
	return out
}

// componentOverwrites are the provider's component_overwrites, which a
// plan renders with and a Landscaper cluster is handed, so that both
// resolve the same component versions.
func (p *Provider) componentOverwrites() []ocm.Overwrite {
	if c := p.components.Load(); c != nil {
		return c.cfg.overwrites
	}
	return nil
}

// chartRegistry is the registry client of the provider's configuration,
// which the helm deployer pulls charts with (nil before Configure): the
// same credentials, TLS rules and cache as for components.
func (p *Provider) chartRegistry() *ociregistry.Client {
	c := p.components.Load()
	if c == nil {
		return nil
	}
	oc, _ := c.registry.(*ociregistry.Client)
	return oc
}
