package provider

import (
	"strings"
	"testing"

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
