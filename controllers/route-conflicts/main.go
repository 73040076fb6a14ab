// Command route-conflicts decides, for every TenantGateway, which route owns a
// hostname that routes in several namespaces claim, and says so on the
// routes: its own status.parents entry (controllerName
// gateway.cozystack.io/tenantgateway-controller), Accepted=False with reason
// HostnameConflict on the losers and Accepted=True on the others. Entries of
// other controllers are never touched. See docs/route-conflicts.md.
package main

import (
	"flag"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/controllers/route-conflicts/internal/controller"
	"github.com/cozyplane/cozyplane/pkg/manager"
)

// Name is the controller's name: field manager and leader election lock.
const Name = "cozystack-route-conflicts"

func main() {
	opts := manager.NewOptions(Name)
	opts.BindFlags(flag.CommandLine)
	flag.Parse()

	scheme := runtime.NewScheme()
	must(clientgoscheme.AddToScheme(scheme))
	must(gatewayv1.Install(scheme))
	must(gatewayv1alpha1.AddToScheme(scheme))

	mgr, err := manager.New(opts, scheme)
	must(err)
	r := &controller.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Name: Name, Recorder: mgr.GetEventRecorder(Name)}
	must(r.SetupWithManager(mgr, opts.Workers))
	manager.Start(mgr)
}

func must(err error) {
	if err != nil {
		ctrl.Log.WithName("setup").Error(err, "cannot start")
		os.Exit(1)
	}
}
