// Command terraform is the Terraform backend controller: every instance of
// every kind whose ApplicationDefinition names the Terraform backend becomes
// a tofu-controller Terraform object, tenants approve plans through their
// instance, and plans, applies and outputs come back onto the instance. See
// internal/tfbackend for the mapping and pkg/instance for the rest.
package main

import (
	"flag"

	tfv1alpha2 "github.com/cozyplane/cozyplane/api/tofu/v1alpha2"
	"github.com/cozyplane/cozyplane/controllers/terraform/internal/tfbackend"
	"github.com/cozyplane/cozyplane/pkg/instance"
)

// Name is the controller's name: field manager, leader election lock, events.
const Name = "cozystack-terraform"

func main() {
	runner := tfbackend.BindRunnerFlags(flag.CommandLine)
	instance.Main(Name, tfbackend.Backend{Runner: runner}, tfv1alpha2.AddToScheme)
}
