package provider

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// Bad component settings, of the provider or of an installation, are
// plan-time errors that name the attribute and say what to fix; nothing
// runs.
func TestAccComponents_badConfig(t *testing.T) {
	const inst = `
resource "landscaper_installation" "app" {
  name      = "app"
  blueprint = { ref = "blueprint" }
  %s
}
`
	cases := map[string]struct {
		provider, resource, want string
	}{
		"unknown repository type": {
			provider: `repository_context = { type = "S3", baseUrl = "x" }`,
			want:     `(?s)Invalid repository context.*"S3" is not supported.*OCIRegistry`,
		},
		"repository without baseUrl": {
			provider: `repository_context = { type = "OCIRegistry" }`,
			want:     `(?s)Invalid repository context.*baseUrl is required`,
		},
		"bad name mapping": {
			provider: `repository_context = { type = "OCIRegistry", baseUrl = "r.example/ocm", componentNameMapping = "md5" }`,
			want:     `(?s)componentNameMapping "md5" is not supported`,
		},
		"token and password": {
			provider: `registry_credentials = { "r.example" = { username = "u", password = "p", token = "t" } }`,
			want:     `(?s)Invalid registry credentials.*either token, or username and password`,
		},
		"username alone": {
			provider: `registry_credentials = { "r.example" = { username = "u" } }`,
			want:     `(?s)username and password go together`,
		},
		"signature with neither key": {
			provider: `verification_signatures = { acme = {} }`,
			want:     `(?s)Invalid verification signature.*exactly one of public_key and ca_certificate`,
		},
		"overwrites not a list": {
			provider: `component_overwrites = { component = {} }`,
			want:     `(?s)Invalid component overwrite.*must be a list`,
		},
		"overwrite with an unknown key": {
			provider: `component_overwrites = [{ component = { name = "a" }, substitution = { version = "2" } }]`,
			want:     `(?s)Invalid component overwrite.*unknown key "name"`,
		},
		"overwrite substituting nothing": {
			provider: `component_overwrites = [{ component = { componentName = "a" }, substitution = {} }]`,
			want:     `(?s)substitution must set componentName, version or repositoryContext`,
		},
		"repository and repository_context": {
			resource: `component = { name = "a", version = "1", repository = "./ctf", repository_context = { type = "OCIRegistry", baseUrl = "r.example/ocm" } }`,
			want:     `(?s)set repository or repository_context, not both`,
		},
		"bad repository_context on the installation": {
			resource: `component = { name = "a", version = "1", repository_context = { type = "OCIRegistry" } }`,
			want:     `(?s)Invalid repository context.*baseUrl is required`,
		},
		"verification without component": {
			resource: `verification = { signature_name = "acme" }`,
			want:     `(?s)verification needs a component`,
		},
		"no repository at all": {
			resource: `component = { name = "github.com/acme/app", version = "v1.0.0" }`,
			want:     `(?s)component\s+github.com/acme/app\s+version\s+v1.0.0\s+was\s+not\s+found;\s+there\s+is\s+nowhere\s+to\s+look\s+it\s+up:\s+give\s+constructor\s+files`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cfg := "provider \"landscaper\" {\n  " + tc.provider + "\n}\n" + fmt.Sprintf(inst, tc.resource)
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: protoV6ProviderFactories,
				Steps:                    []resource.TestStep{{Config: cfg, PlanOnly: true, ExpectError: regexp.MustCompile(tc.want)}},
			})
		})
	}
}
