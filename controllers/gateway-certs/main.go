// Command gateway-certs maintains, for every TenantGateway, the cert-manager
// Issuer <tgw>-gateway and the Certificates the HTTPS listeners of its
// Gateway reference (whoever maintains that Gateway), deletes the
// Certificates it owns that no listener needs any more, and reports
// CertificatesReady. See docs/gateway-certs.md.
package main

import (
	"errors"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/controllers/gateway-certs/internal/controller"
	"github.com/cozyplane/cozyplane/pkg/gatewayruntime"
	"github.com/cozyplane/cozyplane/pkg/manager"
)

// Name is the controller's name: field manager and leader election lock.
const Name = "cozystack-gateway-certs"

func main() {
	manager.Main(manager.Program{
		Name:    Name,
		Schemes: []func(*runtime.Scheme) error{gatewayv1.Install, cmv1.AddToScheme, gatewayv1alpha1.AddToScheme},
		Cache:   gatewayruntime.TrimmedCache(controller.CacheTrims...),
		Setup: func(mgr ctrl.Manager, opts manager.Options) error {
			r := &controller.Reconciler{Base: controller.NewBase(gatewayruntime.NewBase(mgr, Name))}
			return errors.Join(r.SetupWithManager(mgr, opts.Workers),
				gatewayruntime.ManagedObjects(mgr.GetClient(), Name, "Issuer", &cmv1.IssuerList{}),
				gatewayruntime.ManagedObjects(mgr.GetClient(), Name, "Certificate", &cmv1.CertificateList{}))
		},
	})
}
