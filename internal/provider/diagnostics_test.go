package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// A diagnostic on a map element the message does not name says which one:
// Terraform cannot point at an element that comes from a variable.
func TestDiagnosticsNameTheElementTheyAreAbout(t *testing.T) {
	at := tftypes.NewAttributePath().WithAttributeName("target_maps").WithElementKeyString("fleet").WithElementKeyString("eu").WithAttributeName("type")
	cases := []struct {
		path         *tftypes.AttributePath
		detail, want string
	}{
		{at, `"nope" is not a known target type`, `target_maps["fleet"]["eu"].type: "nope" is not a known target type`},
		{tftypes.NewAttributePath().WithAttributeName("imports").WithElementKeyString("prefix"), `data import "prefix": required import is not given`,
			`data import "prefix": required import is not given`},
		{tftypes.NewAttributePath().WithAttributeName("target_lists").WithElementKeyString("l").WithElementKeyInt(2), "bad", `target_lists["l"][2]: bad`},
		// Inside a nested attribute Terraform points at the resource only.
		{tftypes.NewAttributePath().WithAttributeName("rollout").WithAttributeName("canary"), "bad", "rollout.canary: bad"},
		{tftypes.NewAttributePath().WithAttributeName("rollout").WithAttributeName("duration"), `rollout.duration: "x" is bad`, `rollout.duration: "x" is bad`},
		{tftypes.NewAttributePath().WithAttributeName("name"), "bad", "bad"},
		{nil, "bad", "bad"},
	}
	for _, c := range cases {
		var ps problems
		ps.add(c.path, "s", c.detail)
		if got := ps.protocol()[0].Detail; got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
}
