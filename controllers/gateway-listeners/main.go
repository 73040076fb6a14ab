// Command gateway-listeners maintains, for every TenantGateway, the Gateway
// named after it (its listeners derived from the routes attached to it, the
// inheriting child tenants and the certificate mode) and the HTTP-to-HTTPS
// redirect route, and reports the listeners and the Ready summary on the
// TenantGateway. See docs/gateway-listeners.md.
package main

import (
	"flag"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/controllers/gateway-listeners/internal/controller"
	"github.com/cozyplane/cozyplane/pkg/gatewayctl"
	"github.com/cozyplane/cozyplane/pkg/manager"
)

// Name is the controller's name: field manager, leader election lock, events.
const Name = "cozystack-gateway-listeners"

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
	must(gatewayctl.ManagedObjects(mgr.GetClient(), Name, "Gateway", &gatewayv1.GatewayList{}))
	must(gatewayctl.ManagedObjects(mgr.GetClient(), Name, "HTTPRoute", &gatewayv1.HTTPRouteList{}))
	manager.Start(mgr)
}

func must(err error) {
	if err != nil {
		ctrl.Log.WithName("setup").Error(err, "cannot start")
		os.Exit(1)
	}
}
