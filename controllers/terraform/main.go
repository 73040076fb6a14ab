// Command terraform is the Terraform backend controller: every instance of
// every kind whose ApplicationDefinition names the Terraform backend becomes
// a tofu-controller Terraform object, tenants approve plans through their
// instance, and plans, applies and outputs come back onto the instance. See
// internal/tfbackend for the mapping and pkg/instance for the rest.
package main

import (
	"flag"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"

	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	tfv1alpha2 "github.com/cozyplane/cozyplane/api/tofu/v1alpha2"
	"github.com/cozyplane/cozyplane/controllers/terraform/internal/tfbackend"
	"github.com/cozyplane/cozyplane/pkg/instance"
	"github.com/cozyplane/cozyplane/pkg/manager"
)

// Name is the controller's name: field manager, leader election lock, events.
const Name = "cozystack-terraform"

func main() {
	opts := manager.NewOptions(Name)
	opts.BindFlags(flag.CommandLine)
	flag.Parse()

	scheme := runtime.NewScheme()
	must(clientgoscheme.AddToScheme(scheme))
	must(cozyv1alpha1.AddToScheme(scheme))
	must(tfv1alpha2.AddToScheme(scheme))

	backend := tfbackend.Backend{}
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
