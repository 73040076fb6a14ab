// Command route-conflicts decides, for every TenantGateway, which route owns a
// hostname that routes in several namespaces claim, and says so on the
// routes: its own status.parents entry (controllerName
// gateway.cozystack.io/tenantgateway-controller), Accepted=False with reason
// HostnameConflict on the losers and Accepted=True on the others. Entries of
// other controllers are never touched. See docs/route-conflicts.md.
package main

import (
	"flag"
	"fmt"
	"time"

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
	deletionWindow := flag.Duration("deletion-window", controller.DefaultDeletionWindow,
		"how long the deletion of a TenantGateway or a route waits for another before the verdicts they change are written, "+
			"so that a tenant's TenantGateway and routes deleted together withdraw no verdict from routes about to go (0: none)")
	batchWindow := flag.Duration("batch-window", controller.DefaultBatchWindow,
		"how long a change of a TenantGateway, a route or a namespace's labels waits for another before the reconcile they share, "+
			"so that a burst of routes is decided together rather than once for each (at most ten windows in all; 0: none)")
	manager.Main(manager.Program{
		Name:    Name,
		Schemes: []func(*runtime.Scheme) error{gatewayv1.Install, gatewayv1alpha1.AddToScheme},
		Cache:   gatewayruntime.TrimmedCache(controller.CacheTrims...),
		Setup: func(mgr ctrl.Manager, opts manager.Options) error {
			for name, w := range map[string]time.Duration{"--deletion-window": *deletionWindow, "--batch-window": *batchWindow} {
				if w < 0 {
					return fmt.Errorf("%s %s is negative", name, w)
				}
			}
			r := &controller.Reconciler{Base: gatewayruntime.NewBase(mgr, Name), DeletionWindow: *deletionWindow, BatchWindow: *batchWindow}
			return r.SetupWithManager(mgr, opts.Workers)
		},
	})
}
