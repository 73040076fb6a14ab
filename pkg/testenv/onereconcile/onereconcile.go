// Package onereconcile runs tests of a controller's glue: one Reconcile at a
// time against a real API server, through the cached client of a manager
// built as the controller's own, its controllers not started. A test writes
// with the uncached client, waits until the cache shows it
// (testenv.CacheCaughtUp), calls Reconcile and asserts what was written
// (testenv.WriteLog).
package onereconcile

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cozyplane/cozyplane/pkg/manager"
	"github.com/cozyplane/cozyplane/pkg/testenv"
)

// Env is what the tests of one package share.
type Env struct {
	// K8s is uncached: the tests' own reads and writes.
	K8s client.Client
	// Cached is the manager's client: the reconciler's reads.
	Cached client.Client
	// APIReader reads past the cache, as the manager's does.
	APIReader client.Reader
	// Indexer registers the cache's field indexes, as a controller's
	// SetupWithManager does.
	Indexer client.FieldIndexer
}

// Run starts an API server with crds, a manager called name (the
// controller's field manager) whose scheme holds client-go's types and
// those of schemes, calls setup with them, runs the package's tests and
// stops everything. It returns the exit code for os.Exit: m.Run's, or 1 when
// the set-up failed (saying why).
func Run(m *testing.M, name string, crds []*apiextensionsv1.CustomResourceDefinition, schemes []func(*runtime.Scheme) error, setup func(Env)) int {
	ctrl.SetLogger(logr.Discard())
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	env, err := testenv.Start(crds...)
	if err != nil {
		return fail(err)
	}
	defer func() { _ = env.Stop() }()

	scheme := runtime.NewScheme()
	for _, add := range append([]func(*runtime.Scheme) error{clientgoscheme.AddToScheme}, schemes...) {
		if err := add(scheme); err != nil {
			return fail(err)
		}
	}
	k8s, err := client.New(env.Config, client.Options{Scheme: scheme})
	if err != nil {
		return fail(err)
	}
	opts := manager.NewOptions(name)
	opts.MetricsAddr, opts.ProbeAddr = "0", "0"
	mgr, err := manager.NewWithConfig(opts, env.Config, scheme)
	if err != nil {
		return fail(err)
	}
	setup(Env{K8s: k8s, Cached: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Indexer: mgr.GetFieldIndexer()})

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

// StoredCondition reads obj as the API server stores it and returns its
// condition typ (conds reads an object's conditions), failing the test when
// there is none; a condition set for another generation is an error too.
func StoredCondition[T client.Object](t *testing.T, c client.Reader, obj T, conds func(T) []metav1.Condition, typ string) *metav1.Condition {
	t.Helper()
	live := obj.DeepCopyObject().(T)
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(obj), live); err != nil {
		t.Fatal(err)
	}
	cond := meta.FindStatusCondition(conds(live), typ)
	if cond == nil {
		t.Fatalf("%T %s/%s has no %s: %+v", obj, obj.GetNamespace(), obj.GetName(), typ, conds(live))
	}
	if cond.ObservedGeneration != live.GetGeneration() {
		t.Errorf("%s observedGeneration %d, want %d", cond.Type, cond.ObservedGeneration, live.GetGeneration())
	}
	return cond
}
