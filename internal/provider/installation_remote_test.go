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

// An inline target config (a target import, a target list element, a
// target map entry) is masked in what a refresh or a destroy reports, as
// the apply masks it (the remote review's F8): before, only provider
// targets' credentials and sensitive imports were.
func TestRemoteSecretsMaskInlineTargetConfigs(t *testing.T) {
	rt := objectType(&installationResource{})
	f := make(map[string]tftypes.Value, len(rt.AttributeTypes))
	for n, at := range rt.AttributeTypes {
		f[n] = tftypes.NewValue(at, nil)
	}
	inline := func(token string) tftypes.Value {
		et := as[tftypes.Object](as[tftypes.Map](rt.AttributeTypes[attrTargets]).ElementType)
		v := make(map[string]tftypes.Value, len(et.AttributeTypes))
		for n, at := range et.AttributeTypes {
			v[n] = tftypes.NewValue(at, nil)
		}
		v["type"] = stringValue("landscaper.gardener.cloud/kubernetes-cluster")
		v["config"] = stringValue(`{"kubeconfig":"apiVersion: v1\nkind: Config\nusers:\n- name: admin\n  user:\n    token: ` + token + `\n"}`)
		return tftypes.NewValue(et, v)
	}
	f[attrTargets] = tftypes.NewValue(rt.AttributeTypes[attrTargets], map[string]tftypes.Value{"cluster": inline("tok-inline-4c7d2e")})
	lt := rt.AttributeTypes["target_lists"]
	f["target_lists"] = tftypes.NewValue(lt, map[string]tftypes.Value{"shoots": tftypes.NewValue(as[tftypes.Map](lt).ElementType,
		[]tftypes.Value{inline("tok-list-9a1f3b")})})
	mt := rt.AttributeTypes["target_maps"]
	f["target_maps"] = tftypes.NewValue(mt, map[string]tftypes.Value{"regions": tftypes.NewValue(as[tftypes.Map](mt).ElementType,
		map[string]tftypes.Value{"eu": inline("tok-map-6b8e0c")})})
	x := &installations{t: rt, targets: func() *providerTargets { return &providerTargets{known: true} }}
	sec := x.remoteSecrets(f)
	for _, tok := range []string{"tok-inline-4c7d2e", "tok-list-9a1f3b", "tok-map-6b8e0c"} {
		if got := sec.Text("Unauthorized: token " + tok + " expired"); strings.Contains(got, tok) {
			t.Errorf("a refresh or destroy message shows an inline target's token: %q", got)
		}
	}
}
