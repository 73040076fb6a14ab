package dynamicwatch

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/cozyplane/cozyplane/pkg/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	var err error
	env, err = testenv.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	_ = env.Stop()
	os.Exit(code)
}

func crd(kind, plural string) *apiextensionsv1.CustomResourceDefinition {
	return testenv.NamespacedCRD("test.cozystack.io", "v1",
		apiextensionsv1.CustomResourceDefinitionNames{Kind: kind, Plural: plural, ListKind: kind + "List", Singular: plural[:len(plural)-1]}, nil, false)
}

// recorder is a reconciler that remembers what it was asked to reconcile.
type recorder struct {
	mu   sync.Mutex
	seen map[Request]int
}

func (r *recorder) Reconcile(_ context.Context, req Request) (reconcile.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen[req]++
	return reconcile.Result{}, nil
}

func (r *recorder) count(req Request) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen[req]
}

// eventually waits up to 20 seconds for cond; on a timeout the test fails
// naming what it waited for.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testenv.Eventually(t, 20*time.Second, func() (bool, string, error) {
		return cond(), "waiting for " + what, nil
	})
}

func TestWatchAndUnwatchAtRuntime(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = apiextensionsv1.AddToScheme(scheme)
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{seen: map[Request]int{}}
	c, err := controller.NewTyped[Request]("dyn", mgr, controller.TypedOptions[Request]{Reconciler: rec, SkipNameValidation: ptr(true)})
	if err != nil {
		t.Fatal(err)
	}
	set := New(mgr.GetCache())
	if err := c.Watch(set); err != nil {
		t.Fatal(err)
	}
	go func() { _ = mgr.Start(ctx) }()
	cl := mgr.GetClient()

	// A kind whose CRD appears after the controller started.
	if err := cl.Create(ctx, crd("Widget", "widgets")); err != nil {
		t.Fatal(err)
	}
	gvk := schema.GroupVersionKind{Group: "test.cozystack.io", Version: "v1", Kind: "Widget"}
	eventually(t, "the Widget CRD to be served", func() bool {
		_, err := mgr.GetRESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
		return err == nil
	})
	if err := set.Watch(gvk, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := set.Watch(gvk, Options{}); err != nil { // idempotent
		t.Fatal(err)
	}
	if got := set.Watched(); len(got) != 1 || got[0] != gvk {
		t.Fatalf("Watched() = %v", got)
	}

	w := &unstructured.Unstructured{}
	w.SetGroupVersionKind(gvk)
	w.SetNamespace("default")
	w.SetName("one")
	if err := cl.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	one := Request{GVK: gvk, NamespacedName: types.NamespacedName{Namespace: "default", Name: "one"}}
	eventually(t, "a request for Widget one", func() bool { return rec.count(one) > 0 })
	eventually(t, "the Widget informer to sync", func() bool { return set.HasSynced(gvk) })

	// A mapped watch: ConfigMaps labelled widget=<name> enqueue that Widget.
	cmGVK := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	err = set.Watch(cmGVK, Options{MetadataOnly: true, Map: func(o client.Object) []Request {
		if n := o.GetLabels()["widget"]; n != "" {
			return []Request{{GVK: gvk, NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: n}}}
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	cm := &unstructured.Unstructured{}
	cm.SetGroupVersionKind(cmGVK)
	cm.SetNamespace("default")
	cm.SetName("cfg")
	cm.SetLabels(map[string]string{"widget": "two"})
	if err := cl.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	two := Request{GVK: gvk, NamespacedName: types.NamespacedName{Namespace: "default", Name: "two"}}
	eventually(t, "a mapped request for Widget two", func() bool { return rec.count(two) > 0 })

	// After Unwatch, new Widgets enqueue nothing.
	if err := set.Unwatch(ctx, gvk); err != nil {
		t.Fatal(err)
	}
	if set.IsWatched(gvk) || set.HasSynced(gvk) {
		t.Fatal("still watched after Unwatch")
	}
	w2 := w.DeepCopy()
	w2.SetResourceVersion("")
	w2.SetName("three")
	if err := cl.Create(ctx, w2); err != nil {
		t.Fatal(err)
	}
	// Prove the queue is alive by triggering the mapped watch again, then
	// check Widget three was never seen.
	four := Request{GVK: gvk, NamespacedName: types.NamespacedName{Namespace: "default", Name: "four"}}
	cm.SetLabels(map[string]string{"widget": "four"})
	if err := cl.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a mapped request for Widget four", func() bool { return rec.count(four) > 0 })
	three := Request{GVK: gvk, NamespacedName: types.NamespacedName{Namespace: "default", Name: "three"}}
	if n := rec.count(three); n != 0 {
		t.Fatalf("Widget three reconciled %d times after Unwatch", n)
	}

	// Watching again picks up existing objects.
	if err := set.Watch(gvk, Options{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "Widget three after re-watching", func() bool { return rec.count(three) > 0 })
}

func ptr[T any](v T) *T { return &v }

// TestDeletedHook: the Deleted hook hears of deletions only, the ones an
// informer missed included, before their requests are enqueued; filtered
// events reach neither.
func TestDeletedHook(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "test.cozystack.io", Version: "v1", Kind: "Widget"}
	obj := func(name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		u.SetNamespace("default")
		u.SetName(name)
		u.SetUID(types.UID("uid-" + name))
		return u
	}
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[Request]())
	defer q.ShutDown()
	var heard []string
	h := handler{q: q, opts: Options{
		Map:    Self(gvk),
		Filter: func(o client.Object) bool { return o.GetName() != "ignored" },
		Deleted: func(o client.Object) {
			heard = append(heard, fmt.Sprintf("%s %s queued=%d", o.GetName(), o.GetUID(), q.Len()))
		},
	}}
	h.OnAdd(obj("added"), false)
	h.OnUpdate(obj("updated"), obj("updated"))
	h.OnDelete(obj("deleted"))
	h.OnDelete(toolscache.DeletedFinalStateUnknown{Key: "default/missed", Obj: obj("missed")})
	h.OnDelete(obj("ignored"))

	want := []string{"deleted uid-deleted queued=2", "missed uid-missed queued=3"}
	if !slices.Equal(heard, want) {
		t.Errorf("Deleted heard %q, want %q", heard, want)
	}
	if q.Len() != 4 {
		t.Errorf("%d requests queued, want 4 (every event but the filtered one)", q.Len())
	}
}

// TestObserveHook: Observe hears of every event, filtered ones included (an
// update that drops what the filter looks for must still reach an index),
// with the old and new objects, tombstones unwrapped, before the event's
// requests are enqueued.
func TestObserveHook(t *testing.T) {
	gvk, obj, q := widgetEvents(t)
	var heard []string
	name := func(o client.Object) string {
		if o == nil {
			return "-"
		}
		return o.GetName() + "@" + o.GetResourceVersion()
	}
	h := handler{q: q, opts: Options{
		Map:    Self(gvk),
		Filter: func(o client.Object) bool { return o.GetName() != "ignored" },
		Observe: func(old, new client.Object) {
			heard = append(heard, fmt.Sprintf("%s>%s queued=%d", name(old), name(new), q.Len()))
		},
	}}
	h.OnAdd(obj("added", "1"), false)
	h.OnUpdate(obj("added", "1"), obj("added", "2"))
	h.OnUpdate(obj("ignored", "1"), obj("ignored", "2"))
	h.OnDelete(toolscache.DeletedFinalStateUnknown{Key: "default/added", Obj: obj("added", "2")})

	want := []string{"->added@1 queued=0", "added@1>added@2 queued=1", "ignored@1>ignored@2 queued=1", "added@2>- queued=1"}
	if !slices.Equal(heard, want) {
		t.Errorf("Observe heard %q, want %q", heard, want)
	}
}

// TestEchoHook: an add or update that Echo calls the controller's own write's
// echo is observed but enqueues nothing; a deletion is never asked about.
func TestEchoHook(t *testing.T) {
	gvk, obj, q := widgetEvents(t)
	var observed, asked []string
	h := handler{q: q, opts: Options{
		Map:     Self(gvk),
		Observe: func(_, new client.Object) { observed = append(observed, fmt.Sprint(new != nil)) },
		// The write made version 2 of each object.
		Echo: func(o client.Object) bool {
			asked = append(asked, o.GetName()+"@"+o.GetResourceVersion())
			return o.GetResourceVersion() == "2"
		},
	}}
	h.OnAdd(obj("created", "2"), false)
	h.OnUpdate(obj("patched", "1"), obj("patched", "2"))
	if q.Len() != 0 {
		t.Fatalf("%d requests queued for the echoes of our writes, want 0", q.Len())
	}
	h.OnUpdate(obj("patched", "2"), obj("patched", "3"))
	if q.Len() != 1 {
		t.Fatalf("%d requests queued after someone else's update, want 1", q.Len())
	}
	h.OnDelete(obj("created", "2"))
	if want := []string{"created@2", "patched@2", "patched@3"}; !slices.Equal(asked, want) {
		t.Errorf("Echo asked of %q, want %q (never of a deletion)", asked, want)
	}
	if len(observed) != 4 {
		t.Errorf("Observe heard %d events, want all 4", len(observed))
	}
	if q.Len() != 2 {
		t.Errorf("%d requests queued, want 2 (the update of another and the deletion)", q.Len())
	}
}

// widgetEvents is what a handler's test needs: a kind, a maker of its
// objects at a name and version, and a queue, shut down with the test.
func widgetEvents(t *testing.T) (schema.GroupVersionKind, func(name, rv string) *unstructured.Unstructured, workqueue.TypedRateLimitingInterface[Request]) {
	gvk := schema.GroupVersionKind{Group: "test.cozystack.io", Version: "v1", Kind: "Widget"}
	obj := func(name, rv string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		u.SetNamespace("default")
		u.SetName(name)
		u.SetResourceVersion(rv)
		return u
	}
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[Request]())
	t.Cleanup(q.ShutDown)
	return gvk, obj, q
}
