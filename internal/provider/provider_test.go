package provider

import (
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// protoV6ProviderFactories serves the provider in-process as Terraform
// gets it, through NewServer.
var protoV6ProviderFactories = factories{
	"landscaper": NewServer("test"),
}

type factories = map[string]func() (tfprotov6.ProviderServer, error)
