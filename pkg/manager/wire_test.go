package manager

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/cozyplane/cozyplane/pkg/compactcache"
	"github.com/cozyplane/cozyplane/pkg/testenv"
)

var gadgetGVK = schema.GroupVersionKind{Group: "answers.test", Version: "v1", Kind: "Gadget"}

func isGadget(gvk schema.GroupVersionKind) bool { return gvk == gadgetGVK }

func TestWireSelector(t *testing.T) {
	shard := labels.SelectorFromSet(labels.Set{"shard": "a"})
	own := labels.SelectorFromSet(labels.Set{"own": "yes"})
	byGadget := func(by cache.ByObject) map[client.Object]cache.ByObject {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gadgetGVK)
		return map[client.Object]cache.ByObject{u: by}
	}
	for name, tc := range map[string]struct {
		opts  cache.Options
		label labels.Selector
		ok    bool
	}{
		"cluster-wide, no selector":           {opts: cache.Options{}, ok: true},
		"the cache's label selector":          {opts: cache.Options{DefaultLabelSelector: shard}, label: shard, ok: true},
		"the kind's own label selector":       {opts: cache.Options{DefaultLabelSelector: shard, ByObject: byGadget(cache.ByObject{Label: own})}, label: own, ok: true},
		"the kind's options without a label":  {opts: cache.Options{DefaultLabelSelector: shard, ByObject: byGadget(cache.ByObject{})}, label: shard, ok: true},
		"namespaces":                          {opts: cache.Options{DefaultNamespaces: map[string]cache.Config{"a": {}}}},
		"a field selector":                    {opts: cache.Options{DefaultFieldSelector: fields.OneTermEqualSelector("metadata.name", "a")}},
		"the kind's namespaces":               {opts: cache.Options{ByObject: byGadget(cache.ByObject{Namespaces: map[string]cache.Config{"a": {}}})}},
		"the kind's field selector":           {opts: cache.Options{ByObject: byGadget(cache.ByObject{Field: fields.Everything()})}},
		"the kind's own transform":            {opts: cache.Options{ByObject: byGadget(cache.ByObject{Transform: func(o any) (any, error) { return o, nil }})}},
		"another kind's options do not count": {opts: cache.Options{ByObject: map[client.Object]cache.ByObject{&unstructured.Unstructured{}: {Label: own}}}, ok: true},
	} {
		t.Run(name, func(t *testing.T) {
			label, ok := wireSelector(tc.opts, gadgetGVK)
			if ok != tc.ok || fmt.Sprint(label) != fmt.Sprint(tc.label) {
				t.Errorf("wireSelector = %v, %v; want %v, %v", label, ok, tc.label, tc.ok)
			}
		})
	}
}

// refusingListWatch fails the test when an informer uses it: the packed
// kinds' informers make their own requests.
func refusingListWatch(t *testing.T) *toolscache.ListWatch {
	return &toolscache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			t.Error("the informer listed through client-go's list")
			return nil, fmt.Errorf("refused")
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			t.Error("the informer watched through client-go's watch")
			return nil, fmt.Errorf("refused")
		},
	}
}

// TestPackedInformer runs the informer of a packed kind against a real API
// server: it lists and watches with the cache's label selector, stores each
// object packed as Pack would have (managed fields dropped), and follows
// creates, updates and deletes.
func TestPackedInformer(t *testing.T) {
	env := apiServer(t)
	plain, err := client.New(env.Config, client.Options{})
	testenv.Check(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	mine := func(name string) *unstructured.Unstructured {
		g := gadget(name)
		g.SetLabels(map[string]string{"wire": "a"})
		g.Object["spec"].(map[string]any)["extra"] = map[string]any{"ratio": 0.5, "n": int64(7), "list": []any{"x", true, nil}}
		return g
	}
	// One before the informer starts (its first list), one not its own.
	testenv.Check(t, plain.Create(ctx, mine("wire-before")))
	other := gadget("wire-other")
	other.SetLabels(map[string]string{"wire": "b"})
	testenv.Check(t, plain.Create(ctx, other))

	hc, err := rest.HTTPClientFor(env.Config)
	testenv.Check(t, err)
	mapper, err := apiutil.NewDynamicRESTMapper(env.Config, hc)
	testenv.Check(t, err)
	w := &wire{compact: isGadget, transform: compactcache.Transform(isGadget, StripManagedFields), enabled: true}
	opts := cache.Options{Mapper: mapper, HTTPClient: hc, DefaultLabelSelector: labels.SelectorFromSet(labels.Set{"wire": "a"})}
	example := &unstructured.Unstructured{}
	example.SetGroupVersionKind(gadgetGVK)
	inf := w.informers(env.Config, opts)(refusingListWatch(t), example, 10*time.Hour, toolscache.Indexers{})
	testenv.Check(t, inf.SetTransform(w.transform))
	go inf.RunWithContext(ctx)
	if !toolscache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("the informer did not sync")
	}

	// stored waits until the informer holds name as the API server has it
	// (deleted: holds nothing).
	stored := func(name string, deleted bool) {
		t.Helper()
		testenv.Eventually(t, time.Minute, func() (bool, string, error) {
			item, exists, err := inf.GetStore().GetByKey("default/" + name)
			if err != nil || deleted || !exists {
				return err == nil && exists != deleted, fmt.Sprintf("%s held: %v", name, exists), err
			}
			o, ok := item.(*compactcache.Object)
			if !ok {
				return false, "", fmt.Errorf("the store holds a %T", item)
			}
			got, err := o.Unpack()
			if err != nil {
				return false, "", err
			}
			want := &unstructured.Unstructured{}
			want.SetGroupVersionKind(gadgetGVK)
			if err := plain.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, want); err != nil {
				return false, "", err
			}
			want.SetManagedFields(nil)
			if !equality.Semantic.DeepEqual(got.Object, want.Object) {
				return false, fmt.Sprintf("stored %v\nserver %v", got.Object, want.Object), nil
			}
			acc, err := meta.Accessor(item)
			return err == nil && acc.GetResourceVersion() == want.GetResourceVersion(), "", err
		})
	}
	stored("wire-before", false)
	stored("wire-other", true)

	after := mine("wire-after")
	testenv.Check(t, plain.Create(ctx, after))
	stored("wire-after", false)
	testenv.Check(t, plain.Patch(ctx, after, client.RawPatch("application/merge-patch+json",
		[]byte(`{"metadata":{"annotations":{"a":"b"},"finalizers":["test/hold"]},"spec":{"color":"blue"}}`))))
	stored("wire-after", false)
	testenv.Check(t, plain.Delete(ctx, after))
	stored("wire-after", false) // held by its finalizer, now with a deletion time
	testenv.Check(t, plain.Patch(ctx, after, client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`))))
	stored("wire-after", true)
	for _, g := range []*unstructured.Unstructured{mine("wire-before"), other} {
		testenv.Check(t, client.IgnoreNotFound(plain.Delete(ctx, g)))
	}
}

// TestPackedInformersOfAShard runs a sharded manager whose packed kind's
// informers make their own requests: the shard's cache holds its own
// objects only, and the manager's client reads them whole.
func TestPackedInformersOfAShard(t *testing.T) {
	env := apiServer(t)
	plain, err := client.New(env.Config, client.Options{})
	testenv.Check(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for name, shard := range map[string]string{"shard-mine": "a", "shard-theirs": "b"} {
		g := gadget(name)
		g.SetLabels(map[string]string{"shard": shard})
		testenv.Check(t, plain.Create(ctx, g))
		defer func() { _ = plain.Delete(context.Background(), g) }()
	}
	o := NewOptions("wire-shard-test")
	o.MetricsAddr, o.ProbeAddr, o.WatchLabelSelector = "0", "0", "shard=a"
	o.Compact, o.Sharded = isGadget, isGadget
	mgr, err := NewWithConfig(o, env.Config, runtime.NewScheme())
	testenv.Check(t, err)
	go func() { _ = mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		t.Fatal("the cache did not sync")
	}
	get := func(name string) error {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gadgetGVK)
		return mgr.GetClient().Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, u)
	}
	testenv.Eventually(t, time.Minute, func() (bool, string, error) {
		err := get("shard-mine")
		return err == nil, fmt.Sprint(err), nil
	})
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gadgetGVK)
	testenv.Check(t, mgr.GetClient().Get(ctx, client.ObjectKey{Namespace: "default", Name: "shard-mine"}, u))
	if u.Object["spec"].(map[string]any)["size"] != int64(3) || u.GetLabels()["shard"] != "a" {
		t.Errorf("read %v, want the whole object", u.Object)
	}
	if err := get("shard-theirs"); err == nil {
		t.Error("the shard's cache holds another shard's object")
	}
	// The informer is the manager's: its store holds packed objects.
	inf, err := mgr.GetCache().GetInformer(ctx, u)
	testenv.Check(t, err)
	indexed, ok := inf.(interface{ GetIndexer() toolscache.Indexer })
	if !ok {
		t.Fatalf("the informer %T has no store", inf)
	}
	for _, item := range indexed.GetIndexer().List() {
		if _, ok := item.(*compactcache.Object); !ok {
			t.Errorf("the store holds a %T", item)
		}
	}
}
