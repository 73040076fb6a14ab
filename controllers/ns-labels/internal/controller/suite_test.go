package controller

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/gatewayctl"
	"github.com/cozyplane/cozyplane/pkg/manager"
	"github.com/cozyplane/cozyplane/pkg/testenv"
)

// The tests of the reconciler's glue run one Reconcile at a time against a
// real API server, through the cached client of a manager built as the
// controller's own (its controller not started): the reconciler writes its
// part of the TenantGateway's status with server-side apply, merged with the
// other controllers' conditions, which the fake client does with a schema
// deduced from the objects (every list atomic) rather than the CRD's; and its
// namespace patches carry a resourceVersion precondition the API server
// decides.

// fieldManager is the controller's name, as its main package sets it.
const fieldManager = "cozystack-ns-labels"

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
	ctrl.SetLogger(logr.Discard())
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	own, err := testenv.CRDFromFile("api/crds/gateway.cozystack.io_tenantgateways.yaml")
	if err != nil {
		return fail(err)
	}
	env, err := testenv.Start(own)
	if err != nil {
		return fail(err)
	}
	defer func() { _ = env.Stop() }()

	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, gatewayv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			return fail(err)
		}
	}
	if k8s, err = client.New(env.Config, client.Options{Scheme: scheme}); err != nil {
		return fail(err)
	}
	opts := manager.NewOptions(fieldManager)
	opts.MetricsAddr, opts.ProbeAddr = "0", "0"
	mgr, err := manager.NewWithConfig(opts, env.Config, scheme)
	if err != nil {
		return fail(err)
	}
	cached = mgr.GetClient()
	writes = testenv.NewWriteLog(cached)
	rec = &Reconciler{Base: gatewayctl.Base{Client: writes, APIReader: mgr.GetAPIReader(), Name: fieldManager}}

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	})
	defer wg.Wait()
	defer cancel()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return fail(fmt.Errorf("the cache did not sync"))
	}
	return m.Run()
}

// caughtUp waits until the reconciler's cache shows what the test wrote.
func caughtUp(t *testing.T) {
	t.Helper()
	testenv.CacheCaughtUp(t, cached, k8s, &gatewayv1alpha1.TenantGatewayList{}, &corev1.NamespaceList{})
}
