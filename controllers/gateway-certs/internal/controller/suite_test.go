package controller

import (
	"fmt"
	"os"
	"testing"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/gatewayruntime"
	"github.com/cozyplane/cozyplane/pkg/testenv"
	"github.com/cozyplane/cozyplane/pkg/testenv/onereconcile"
)

// The tests of the reconciler's glue run one Reconcile at a time against a
// real API server, through the cached client of a manager built as the
// controller's own (its controller not started): the reconciler writes only
// with server-side apply (its objects, and its part of the TenantGateway's
// status merged with the other controllers' conditions), which the fake
// client does with a schema deduced from the objects (every list atomic)
// rather than the CRDs'.

// fieldManager is the controller's name, as its main package sets it.
const fieldManager = "cozystack-gateway-certs"

var (
	k8s    client.Client // uncached, for the tests' own reads and writes
	cached client.Client // the reconciler's reads
	writes *testenv.WriteLog
	rec    *Reconciler
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	gw, err := testenv.GatewayAPICRDs("gateways")
	if err != nil {
		return fail(err)
	}
	cm, err := testenv.CertManagerCRDs("issuers", "certificates")
	if err != nil {
		return fail(err)
	}
	own, err := testenv.CRDFromFile("api/crds/gateway.cozystack.io_tenantgateways.yaml")
	if err != nil {
		return fail(err)
	}
	return onereconcile.Run(m, fieldManager, append(append(gw, cm...), own),
		[]func(*runtime.Scheme) error{gatewayv1.Install, cmv1.AddToScheme, gatewayv1alpha1.AddToScheme},
		func(env onereconcile.Env) {
			k8s, cached = env.K8s, env.Cached
			writes = testenv.NewWriteLog(cached)
			rec = &Reconciler{Base: NewBase(gatewayruntime.Base{Client: writes, APIReader: env.APIReader, Name: fieldManager})}
		})
}

// caughtUp waits until the reconciler's cache shows what the test wrote.
func caughtUp(t *testing.T) {
	t.Helper()
	testenv.CacheCaughtUp(t, cached, k8s, &gatewayv1alpha1.TenantGatewayList{}, &gatewayv1.GatewayList{}, &cmv1.IssuerList{}, &cmv1.CertificateList{})
}
