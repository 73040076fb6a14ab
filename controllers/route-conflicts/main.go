// Command route-conflicts decides, for every TenantGateway, which route owns a
// hostname that routes in several namespaces claim, and says so on the
// routes: its own status.parents entry (controllerName
// gateway.cozystack.io/tenantgateway-controller), Accepted=False with reason
// HostnameConflict on the losers and Accepted=True on the others. Entries of
// other controllers are never touched. See docs/route-conflicts.md.
package main

import (
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/controllers/route-conflicts/internal/controller"
	"github.com/cozyplane/cozyplane/pkg/gatewayruntime"
	"github.com/cozyplane/cozyplane/pkg/manager"
)

// Name is the controller's name: field manager and leader election lock.
const Name = "cozystack-route-conflicts"

func main() {
	manager.Main(manager.Program{
		Name:    Name,
		Schemes: []func(*runtime.Scheme) error{gatewayv1.Install, gatewayv1alpha1.AddToScheme},
		Cache:   gatewayruntime.TrimmedCache(controller.CacheTrims...),
		Setup: func(mgr ctrl.Manager, opts manager.Options) error {
			r := &controller.Reconciler{Base: gatewayruntime.NewBase(mgr, Name)}
			return r.SetupWithManager(mgr, opts.Workers)
		},
	})
}
