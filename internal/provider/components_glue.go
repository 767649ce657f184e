package provider

import (
	"strings"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/blueprint/component"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/ociregistry"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/signing"
)

// newRegistryClient hands the configured credentials to the registry
// client, the one place that keeps them. A baseUrl with http:// (the
// provider's, or an overwrite's) asks for plain HTTP to its host.
func newRegistryClient(cc componentsConfig, cache ocm.Cache, version string) (registryClient, error) {
	creds := make(map[string]ociregistry.Credential, len(cc.credentials))
	for host, c := range cc.credentials {
		creds[host] = ociregistry.Credential{Username: c.username, Password: c.password, Token: c.token}
	}
	var plain []string
	addPlain := func(rc map[string]any) {
		if u, _ := rc["baseUrl"].(string); strings.HasPrefix(u, "http://") {
			host, _, _ := strings.Cut(strings.TrimPrefix(u, "http://"), "/")
			plain = append(plain, host)
		}
	}
	addPlain(cc.repositoryContext)
	for _, o := range cc.overwrites {
		addPlain(o.Substitution.RepositoryContext)
	}
	return ociregistry.New(ociregistry.Options{
		Credentials: creds,
		Cache:       cache,
		PlainHTTP:   plain,
		MaxBlobSize: component.MaxBlobSize,
		UserAgent:   "terraform-provider-landscaper/" + version,
	})
}

func newSignatureVerifier(name, publicKey, caCertificate string) (component.Verifier, error) {
	return signing.NewVerifier(name, publicKey, caCertificate)
}
