// Command gateway-listeners maintains, for every TenantGateway, the Gateway
// named after it (its listeners derived from the routes attached to it, the
// inheriting child tenants and the certificate mode) and the HTTP-to-HTTPS
// redirect route, and reports the listeners and the Ready summary on the
// TenantGateway. See docs/gateway-listeners.md.
package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	ctrl "sigs.k8s.io/controller-runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/controllers/gateway-listeners/internal/controller"
	"github.com/cozyplane/cozyplane/pkg/gatewayruntime"
	"github.com/cozyplane/cozyplane/pkg/manager"
)

// Name is the controller's name: field manager, leader election lock, events.
const Name = "cozystack-gateway-listeners"

func main() {
	certManagerNamespace := flag.String("cert-manager-namespace", gatewayv1alpha1.CertManagerNamespace,
		"namespace where cert-manager publishes its HTTP-01 challenge routes; the port-80 listener of every Gateway admits routes from it "+
			"(cert-manager for a stock install)")
	batchWindow := flag.Duration("batch-window", controller.DefaultBatchWindow,
		"how long a change of a TenantGateway, a route or a namespace's labels waits for another before the reconcile they share, so that a burst of them makes one Gateway write (0: none)")
	manager.Main(manager.Program{
		Name:    Name,
		Schemes: []func(*runtime.Scheme) error{gatewayv1.Install, gatewayv1alpha1.AddToScheme},
		Cache:   gatewayruntime.TrimmedCache(controller.CacheTrims...),
		Setup: func(mgr ctrl.Manager, opts manager.Options) error {
			if errs := validation.IsDNS1123Label(*certManagerNamespace); len(errs) > 0 {
				return fmt.Errorf("--cert-manager-namespace %q is not a namespace name: %s", *certManagerNamespace, strings.Join(errs, "; "))
			}
			if *batchWindow < 0 {
				return fmt.Errorf("--batch-window %s is negative", *batchWindow)
			}
			r := &controller.Reconciler{Base: gatewayruntime.NewBase(mgr, Name), CertManagerNamespace: *certManagerNamespace,
				BatchWindow: *batchWindow}
			return errors.Join(r.SetupWithManager(mgr, opts.Workers),
				gatewayruntime.ManagedObjects(mgr.GetClient(), Name, "Gateway", &gatewayv1.GatewayList{}),
				gatewayruntime.ManagedObjects(mgr.GetClient(), Name, "HTTPRoute", &gatewayv1.HTTPRouteList{}))
		},
	})
}
