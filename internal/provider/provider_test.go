package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// protoV6ProviderFactories serves the provider in-process as Terraform
// gets it: with the protocol fast path for landscaper_execution.
var protoV6ProviderFactories = factories{
	"landscaper": NewServer("test"),
}

// frameworkProviderFactories serves the same provider through the plain
// framework server, to keep the framework adapters honest.
var frameworkProviderFactories = factories{
	"landscaper": providerserver.NewProtocol6WithError(New("test")()),
}

type factories = map[string]func() (tfprotov6.ProviderServer, error)

// bothServers runs an acceptance test through the protocol fast path and
// through the plain framework server: both must behave the same.
func bothServers(t *testing.T, test func(*testing.T, factories)) {
	t.Run("protocol", func(t *testing.T) { test(t, protoV6ProviderFactories) })
	t.Run("framework", func(t *testing.T) { test(t, frameworkProviderFactories) })
}
