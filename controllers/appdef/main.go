// Command appdef serves one CustomResourceDefinition per
// ApplicationDefinition: every definition's kind becomes
// apps.cozystack.io/v1alpha1 <Kind>, live within seconds, validated by the
// API server against the definition's schema. See doc.go for the contract
// and internal/controller for how.
package main

import (
	"flag"
	"os"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/metadata"
	ctrl "sigs.k8s.io/controller-runtime"

	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/controllers/appdef/internal/controller"
	"github.com/cozyplane/cozyplane/pkg/manager"
)

// Name is the controller's name: field manager, leader election lock, events.
const Name = "cozystack-appdef"

func main() {
	opts := manager.NewOptions(Name)
	opts.BindFlags(flag.CommandLine)
	flag.Parse()

	scheme := runtime.NewScheme()
	must(clientgoscheme.AddToScheme(scheme))
	must(apiextensionsv1.AddToScheme(scheme))
	must(cozyv1alpha1.AddToScheme(scheme))

	mgr, err := manager.New(opts, scheme, controller.CacheOptions())
	must(err)
	md, err := metadata.NewForConfig(mgr.GetConfig())
	must(err)
	r := &controller.Reconciler{
		Client:       mgr.GetClient(),
		APIReader:    mgr.GetAPIReader(),
		Metadata:     md,
		Recorder:     mgr.GetEventRecorder(Name),
		FieldManager: Name,
		Workers:      opts.Workers,
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
