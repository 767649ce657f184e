package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// protoV6ProviderFactories runs the provider in-process for acceptance tests.
var protoV6ProviderFactories = map[string]func() (tfprotov6.ProviderServer, error){
	"landscaper": providerserver.NewProtocol6WithError(New("test")()),
}
