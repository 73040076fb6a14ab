// Command ns-labels writes the label namespace.cozystack.io/gateway=<owner>
// and the annotation cozystack.io/gateway-attached-by=<owner> on the namespace
// of every TenantGateway and on its attachedNamespaces, so that their routes
// pass the Gateway's listener selectors, and removes what it wrote when a
// namespace is no longer listed. Labels without the annotation belong to the
// tenant chart and are never touched. See docs/ns-labels.md.
package main

import (
	"flag"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/controllers/ns-labels/internal/controller"
	"github.com/cozyplane/cozyplane/pkg/manager"
)

// Name is the controller's name: field manager and leader election lock.
const Name = "cozystack-ns-labels"

func main() {
	opts := manager.NewOptions(Name)
	opts.BindFlags(flag.CommandLine)
	flag.Parse()

	scheme := runtime.NewScheme()
	must(clientgoscheme.AddToScheme(scheme))
	must(gatewayv1alpha1.AddToScheme(scheme))

	mgr, err := manager.New(opts, scheme)
	must(err)
	r := &controller.Reconciler{Client: mgr.GetClient(), Name: Name, Recorder: mgr.GetEventRecorder(Name)}
	must(r.SetupWithManager(mgr, opts.Workers))
	manager.Start(mgr)
}

func must(err error) {
	if err != nil {
		ctrl.Log.WithName("setup").Error(err, "cannot start")
		os.Exit(1)
	}
}
