// Command terraform-provider-landscaper serves the landscaper provider.
package main

import (
	"flag"
	"fmt"
	"log"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/provider"
)

// version is set by goreleaser, and by scripts/install-mirror.sh to the
// version it installs as.
var version = "dev"

func main() {
	var debug, printVersion bool
	flag.BoolVar(&debug, "debug", false, "run with support for debuggers like delve")
	flag.BoolVar(&printVersion, "version", false, "print the provider's version and exit")
	flag.Parse()
	if printVersion {
		fmt.Println(version)
		return
	}

	var opts []tf6server.ServeOpt
	if debug {
		opts = append(opts, tf6server.WithManagedDebug())
	}
	// Should terraform die without stopping us, stop the jobs and exit.
	provider.ExitWhenOrphaned()
	newServer := provider.NewServer(version)
	err := tf6server.Serve("registry.terraform.io/landscaper-tf/landscaper", func() tfprotov6.ProviderServer {
		s, err := newServer()
		if err != nil {
			log.Fatal(err.Error())
		}
		return s
	}, opts...)
	if err != nil {
		log.Fatal(err.Error())
	}
}
