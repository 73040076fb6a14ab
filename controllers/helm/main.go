// Command helm is the Helm backend controller: every instance of every kind
// whose ApplicationDefinition names the Helm backend (legacy spec.release
// included) becomes a Flux HelmRelease, and the HelmRelease's status comes
// back onto the instance. See internal/helmbackend for the exact mapping and
// pkg/instance for the backend-neutral part.
package main

import (
	"flag"
	"os"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"

	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/controllers/helm/internal/helmbackend"
	"github.com/cozyplane/cozyplane/pkg/instance"
	"github.com/cozyplane/cozyplane/pkg/manager"
)

// Name is the controller's name: field manager, leader election lock, events.
const Name = "cozystack-helm"

func main() {
	opts := manager.NewOptions(Name)
	opts.BindFlags(flag.CommandLine)
	flag.Parse()

	scheme := runtime.NewScheme()
	must(clientgoscheme.AddToScheme(scheme))
	must(cozyv1alpha1.AddToScheme(scheme))
	must(helmv2.AddToScheme(scheme))

	backend := helmbackend.Backend{}
	mgr, err := manager.New(opts, scheme, instance.CacheOptions(backend))
	must(err)
	r := &instance.Reconciler{
		Name:      Name,
		Backend:   backend,
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Recorder:  mgr.GetEventRecorder(Name),
		Workers:   opts.Workers,
	}
	must(r.SetupWithManager(mgr))
	manager.Start(mgr)
}

func must(err error) {
	if err != nil {
		ctrl.Log.WithName("setup").Error(err, "cannot start")
		os.Exit(1)
	}
}
