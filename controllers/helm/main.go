// Command helm is the Helm backend controller: every instance of every kind
// whose ApplicationDefinition names the Helm backend (legacy spec.release
// included) becomes a Flux HelmRelease, and the HelmRelease's status comes
// back onto the instance. See internal/helmbackend for the exact mapping and
// pkg/instance for the backend-neutral part.
package main

import (
	helmv2 "github.com/fluxcd/helm-controller/api/v2"

	"github.com/cozyplane/cozyplane/controllers/helm/internal/helmbackend"
	"github.com/cozyplane/cozyplane/pkg/instance"
)

// Name is the controller's name: field manager, leader election lock, events.
const Name = "cozystack-helm"

func main() {
	backend := helmbackend.Backend{}
	instance.Main(Name, backend, backend.Components(), helmv2.AddToScheme)
}
