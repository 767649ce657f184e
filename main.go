// Command terraform-provider-landscaper serves the landscaper provider.
package main

import (
	"context"
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/provider"
)

// version is set by goreleaser.
var version = "dev"

func main() {
	var debug bool
	flag.BoolVar(&debug, "debug", false, "run with support for debuggers like delve")
	flag.Parse()

	err := providerserver.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{
		Address: "registry.terraform.io/landscaper-tf/landscaper",
		Debug:   debug,
	})
	if err != nil {
		log.Fatal(err.Error())
	}
}
