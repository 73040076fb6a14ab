package manager

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cozyplane/cozyplane/pkg/compactcache"
)

// mark is a transform that labels what it saw.
func mark(obj any) (any, error) {
	o, ok := obj.(client.Object)
	if !ok {
		return obj, nil
	}
	o.SetLabels(map[string]string{"seen": "yes"})
	return o, nil
}

func TestPagedListOptions(t *testing.T) {
	for _, tc := range []struct {
		name     string
		in, want metav1.ListOptions
	}{
		{"a paged first list from the watch cache is asked at the latest version",
			metav1.ListOptions{ResourceVersion: "0", Limit: 500},
			metav1.ListOptions{Limit: 500}},
		{"the match goes with the version",
			metav1.ListOptions{ResourceVersion: "0", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, Limit: 500},
			metav1.ListOptions{Limit: 500}},
		{"an unpaged list is left alone",
			metav1.ListOptions{ResourceVersion: "0"},
			metav1.ListOptions{ResourceVersion: "0"}},
		{"a relist at a known version is left alone",
			metav1.ListOptions{ResourceVersion: "42", Limit: 500},
			metav1.ListOptions{ResourceVersion: "42", Limit: 500}},
		{"a later page is left alone",
			metav1.ListOptions{Limit: 500, Continue: "token"},
			metav1.ListOptions{Limit: 500, Continue: "token"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got metav1.ListOptions
			list := pagedList(func(_ context.Context, o metav1.ListOptions) (runtime.Object, error) {
				got = o
				return &corev1.ConfigMapList{}, nil
			}, nil)
			if _, err := list(context.Background(), tc.in); err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("listed with %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestPagedListTransformsEveryItem(t *testing.T) {
	pages := map[string]runtime.Object{
		"unstructured": &unstructured.UnstructuredList{Items: []unstructured.Unstructured{
			{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a"}}},
			{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "b"}}},
		}},
		"typed": &corev1.ConfigMapList{Items: []corev1.ConfigMap{
			{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, {ObjectMeta: metav1.ObjectMeta{Name: "b"}},
		}},
	}
	for name, page := range pages {
		t.Run(name, func(t *testing.T) {
			list := pagedList(func(context.Context, metav1.ListOptions) (runtime.Object, error) { return page, nil }, mark)
			out, err := list(context.Background(), metav1.ListOptions{Limit: 2})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			err = apimeta.EachListItem(out, func(item runtime.Object) error {
				o := item.(client.Object)
				if o.GetLabels()["seen"] != "yes" {
					t.Errorf("%s was returned untransformed", o.GetName())
				}
				names = append(names, o.GetName())
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(names) != "[a b]" {
				t.Fatalf("items %v, want [a b] in order", names)
			}
		})
	}

	t.Run("a transform that changes the items' type", func(t *testing.T) {
		page := &unstructured.UnstructuredList{Items: []unstructured.Unstructured{
			{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a"}, "data": map[string]any{"k": "v"}}},
			{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "b"}}},
		}}
		page.SetResourceVersion("42")
		page.SetContinue("next")
		pack := compactcache.Transform(func(schema.GroupVersionKind) bool { return true }, nil)
		out, err := pagedList(func(context.Context, metav1.ListOptions) (runtime.Object, error) { return page, nil }, pack)(
			context.Background(), metav1.ListOptions{Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		lm, err := apimeta.ListAccessor(out)
		if err != nil || lm.GetResourceVersion() != "42" || lm.GetContinue() != "next" {
			t.Fatalf("list metadata %+v (%v), want the page's version and continue", lm, err)
		}
		var names []string
		err = apimeta.EachListItem(out, func(item runtime.Object) error {
			o, ok := item.(*compactcache.Object)
			if !ok {
				return fmt.Errorf("item %T, want a packed object", item)
			}
			names = append(names, o.GetName())
			return nil
		})
		if err != nil || fmt.Sprint(names) != "[a b]" {
			t.Fatalf("items %v (%v), want [a b] packed, in order", names, err)
		}
	})
	t.Run("a transform error fails the page", func(t *testing.T) {
		boom := errors.New("boom")
		list := pagedList(func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			return &corev1.ConfigMapList{Items: []corev1.ConfigMap{{}}}, nil
		}, func(any) (any, error) { return nil, boom })
		if _, err := list(context.Background(), metav1.ListOptions{}); !errors.Is(err, boom) {
			t.Fatalf("got %v, want the transform's error", err)
		}
	})
	t.Run("a list error is returned as it is", func(t *testing.T) {
		gone := apierrors.NewGone("expired")
		list := pagedList(func(context.Context, metav1.ListOptions) (runtime.Object, error) { return nil, gone }, mark)
		if _, err := list(context.Background(), metav1.ListOptions{}); !apierrors.IsGone(err) {
			t.Fatalf("got %v, want Gone", err)
		}
	})
}

func TestObjectTransforms(t *testing.T) {
	if objectTransforms(map[client.Object]cache.ByObject{&corev1.ConfigMap{}: {}}) {
		t.Fatal("a kind without a transform of its own was reported")
	}
	if !objectTransforms(map[client.Object]cache.ByObject{&corev1.ConfigMap{}: {Transform: mark}}) {
		t.Fatal("a kind with a transform of its own was not reported")
	}
}

// TestPagedInformerFallback fills an informer over 1,200 objects on a real API
// server through the list an informer falls back to when it cannot stream
// (the watch refuses WatchList requests here, as an etcd without progress
// notifications makes the API server do): the list comes in pages, and every
// page is packed before the next is asked for.
func TestPagedInformerFallback(t *testing.T) {
	env := apiServer(t)
	dc, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	cms := dc.Resource(gvr).Namespace("default")
	const n = 1200
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
					"metadata": map[string]any{"name": fmt.Sprintf("cm-%04d", i)}, "data": map[string]any{"k": "v"}}}
				if _, err := cms.Create(ctx, u, metav1.CreateOptions{}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	var mu sync.Mutex
	var pages []metav1.ListOptions
	packed := 0
	lw := &toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			mu.Lock()
			pages = append(pages, o)
			mu.Unlock()
			return cms.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			if o.SendInitialEvents != nil && *o.SendInitialEvents {
				return nil, apierrors.NewBadRequest("streaming lists are not served here")
			}
			return cms.Watch(ctx, o)
		},
	}
	isCM := func(gvk schema.GroupVersionKind) bool { return gvk.Kind == "ConfigMap" }
	transform := compactcache.Transform(isCM, func(obj any) (any, error) {
		// Count what reaches the informer's transform already packed.
		if _, ok := obj.(*compactcache.Object); ok {
			mu.Lock()
			packed++
			mu.Unlock()
		}
		return obj, nil
	})
	inf := pagedInformers(transform)(lw, &unstructured.Unstructured{}, 0, toolscache.Indexers{})
	if err := inf.SetTransform(transform); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	go inf.Run(stop)
	sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if !toolscache.WaitForCacheSync(sctx.Done(), inf.HasSynced) {
		t.Fatal("the informer never synced")
	}

	mu.Lock()
	defer mu.Unlock()
	if len(pages) < 3 {
		t.Fatalf("listed in %d requests (%+v), want at least 3 pages of at most 500", len(pages), pages)
	}
	if pages[0].ResourceVersion != "" || pages[0].Limit == 0 {
		t.Fatalf("first page asked with %+v, want the latest version and a limit", pages[0])
	}
	// Every object the list brought reached the informer packed.
	if packed < n {
		t.Fatalf("%d of %d objects reached the informer's transform packed", packed, n)
	}
	items := inf.GetStore().List()
	if len(items) < n {
		t.Fatalf("the cache holds %d objects, want %d", len(items), n)
	}
	for _, it := range items {
		if o, ok := it.(*compactcache.Object); !ok || o.Packed == "" {
			t.Fatalf("the cache holds %#v, want it packed", it)
		}
	}
}
