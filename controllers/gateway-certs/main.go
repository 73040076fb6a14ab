// Command gateway-certs maintains, for every TenantGateway, the cert-manager
// Issuer <tgw>-gateway and the Certificates the HTTPS listeners of its
// Gateway reference (whoever maintains that Gateway), deletes the
// Certificates it owns that no listener needs any more, and reports
// CertificatesReady. See docs/gateway-certs.md.
package main

import (
	"flag"
	"os"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/controllers/gateway-certs/internal/controller"
	"github.com/cozyplane/cozyplane/pkg/gatewayctl"
	"github.com/cozyplane/cozyplane/pkg/manager"
)

// Name is the controller's name: field manager and leader election lock.
const Name = "cozystack-gateway-certs"

func main() {
	opts := manager.NewOptions(Name)
	opts.BindFlags(flag.CommandLine)
	flag.Parse()

	scheme := runtime.NewScheme()
	must(clientgoscheme.AddToScheme(scheme))
	must(gatewayv1.Install(scheme))
	must(cmv1.AddToScheme(scheme))
	must(gatewayv1alpha1.AddToScheme(scheme))

	mgr, err := manager.New(opts, scheme)
	must(err)
	r := &controller.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Name: Name, Recorder: mgr.GetEventRecorder(Name)}
	must(r.SetupWithManager(mgr, opts.Workers))
	must(gatewayctl.ManagedObjects(mgr.GetClient(), Name, "Issuer", &cmv1.IssuerList{}))
	must(gatewayctl.ManagedObjects(mgr.GetClient(), Name, "Certificate", &cmv1.CertificateList{}))
	manager.Start(mgr)
}

func must(err error) {
	if err != nil {
		ctrl.Log.WithName("setup").Error(err, "cannot start")
		os.Exit(1)
	}
}
