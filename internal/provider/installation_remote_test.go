package provider

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/masking"
)

// TestRemoteMaskHidesProviderTargetCredentials: a message of Landscaper's
// that quotes a provider target's token, or its whole kubeconfig, shows
// neither; the tree's masking never sees those configs.
func TestRemoteMaskHidesProviderTargetCredentials(t *testing.T) {
	config := []byte(`{"kubeconfig":"apiVersion: v1\nkind: Config\nusers:\n- name: admin\n  user:\n    token: tok-remote-7f3a9c\n"}`)
	run := &remoteRun{sec: masking.NewTree(), credentials: credentialStrings(config)}
	for _, msg := range []string{"unauthorized with token tok-remote-7f3a9c", "bad kubeconfig apiVersion: v1\nkind: Config\nusers:\n- name: admin\n  user:\n    token: tok-remote-7f3a9c\n"} {
		if got := run.mask(msg); strings.Contains(got, "tok-remote-7f3a9c") {
			t.Errorf("mask(%q) = %q", msg, got)
		}
	}
	if got := run.mask("phase Failed"); got != "phase Failed" {
		t.Errorf("a message without credentials became %q", got)
	}
}

// A refresh or a destroy in remote mode renders nothing, so it cannot
// tell which provider targets the tree imports: what they say is masked
// with the credentials of every provider target, and the sensitive
// imports.
func TestRemoteSecretsMaskRefreshAndDestroy(t *testing.T) {
	config := []byte(`{"kubeconfig":"apiVersion: v1\nkind: Config\nusers:\n- name: admin\n  user:\n    token: tok-refresh-8e2b1d\n"}`)
	pt := &providerTargets{known: true, byName: map[string]*deployer.Target{"prod": {Type: "landscaper.gardener.cloud/kubernetes-cluster", Config: config}}}
	x := &installations{targets: func() *providerTargets { return pt }}
	f := map[string]tftypes.Value{attrSensitiveImports: tftypes.NewValue(tftypes.DynamicPseudoType, nil)}
	sec := x.remoteSecrets(f)
	if got := sec.Text("Unauthorized: token tok-refresh-8e2b1d expired"); strings.Contains(got, "tok-refresh-8e2b1d") {
		t.Errorf("a refresh message shows a provider target's token: %q", got)
	}
}
