package lscluster

import (
	"encoding/base64"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm"
)

// RegistrySecret is the name of the Secret of type
// kubernetes.io/dockerconfigjson that holds an installation's registry
// credentials (Spec.PullSecrets), which its Context names in
// registryPullSecrets.
func RegistrySecret(inst string) string { return ObjectName(inst, "registry", "") }

// CredentialSecrets are the names of the Secrets among objs that hold
// credentials and nothing a job reads as input: the target configs'
// Secrets (TargetSecrets) and the registry pull Secret. A change to them
// alone is a rotated credential, which Landscaper needs no job for.
func CredentialSecrets(objs []Object) map[string]bool {
	out := TargetSecrets(objs)
	for _, o := range objs {
		if o.Kind == KindSecret && isRegistrySecret(o) {
			out[o.Name] = true
		}
	}
	return out
}

func isRegistrySecret(o Object) bool {
	typ, _ := o.Body["type"].(string)
	return typ == dockerConfigType
}

const dockerConfigType = "kubernetes.io/dockerconfigjson"

// PullSecretHosts are the registry hosts (host[:port]) Landscaper reads an
// installation's component from: the repository context's, and those of
// the overwrites' substitutions, which redirect components there. Local
// repositories have none.
func PullSecretHosts(component *ComponentRef, overwrites []ocm.Overwrite) []string {
	hosts := map[string]bool{}
	add := func(rc map[string]any) {
		if rc == nil {
			return
		}
		spec, err := ocm.ParseRepositorySpec(rc)
		if err != nil {
			return
		}
		if h, _ := spec.Registry(); h != "" {
			hosts[h] = true
		}
	}
	if component != nil {
		add(component.RepositoryContext)
	}
	for _, o := range overwrites {
		add(o.Substitution.RepositoryContext)
	}
	return slices.Sorted(maps.Keys(hosts))
}

// PullSecretsFor picks, of credentials keyed as the provider's
// registry_credentials are ("host[:port]", or with an http:// or https://
// scheme), those of hosts. A host given under several keys takes the key
// without a scheme, then https://, then http://.
func PullSecretsFor(creds map[string]RegistryAuth, hosts []string) map[string]RegistryAuth {
	out := map[string]RegistryAuth{}
	for _, h := range hosts {
		for _, key := range []string{h, "https://" + h, "http://" + h} {
			if c, ok := creds[key]; ok {
				out[h] = c
				break
			}
		}
	}
	return out
}

// dockerConfig is the .dockerconfigjson of the credentials, by host:
// Landscaper's OCM registry access reads each "auths" entry's username and
// password (an entry with neither is read as no credentials), and matches
// the entry's host and port with the registry's.
func dockerConfig(creds map[string]RegistryAuth) (map[string]any, error) {
	auths := map[string]any{}
	for _, host := range slices.Sorted(maps.Keys(creds)) {
		c := creds[host]
		h := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(host, "https://"), "http://"), "/")
		switch {
		case c.Token != "":
			return nil, fmt.Errorf("the registry credentials of %s are a token: Landscaper's registry access sends "+
				"a user name and password only (a Docker config's auths entry), so a token cannot be handed to it; "+
				"give username and password", host)
		case c.Username == "":
			return nil, fmt.Errorf("the registry credentials of %s hold no user name", host)
		}
		auths[h] = map[string]any{"username": c.Username, "password": c.Password,
			"auth": base64.StdEncoding.EncodeToString([]byte(c.Username + ":" + c.Password))}
	}
	return map[string]any{"auths": auths}, nil
}
