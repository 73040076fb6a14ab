package manager

import (
	"context"
	"fmt"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/cozyplane/cozyplane/pkg/compactcache"
)

// The informers of the packed kinds (Options.Compact) read the API server's
// JSON themselves: each listed or watched object goes straight from its bytes
// into a compactcache.Object (compactcache.Parse), with its managed fields
// left out as StripManagedFields leaves them out, instead of being decoded
// into maps by client-go and encoded again by compactcache.Pack. The rest of
// the informer is client-go's: its reflector, WatchList and resumes, its
// store and indexes, the cache transforms (which find those objects already
// packed). A backend controller restarting over 100,000 instances spent more
// than half of its CPU decoding the two streams the other way.
//
// An informer gets its own requests only where the cache's options say all
// it asks for: cluster-wide, with at most a label selector (the kind's own,
// or the cache's default). Any other informer, of a packed kind or not, is
// client-go's as before.

// wire builds the informers of a manager's caches.
type wire struct {
	compact compactcache.Match
	// transform is the cache's default transform, run on each page of a
	// first list (pagedInformers).
	transform toolscache.TransformFunc
	// enabled: the caches' informers are built here (NewWithConfig).
	enabled bool
}

// informers returns the cache.Options.NewInformer of a cache with opts
// (Mapper and HTTPClient set, as controller-runtime's cluster sets them
// before it makes its cache).
func (w *wire) informers(cfg *rest.Config, opts cache.Options) func(toolscache.ListerWatcher, runtime.Object, time.Duration, toolscache.Indexers) toolscache.SharedIndexInformer {
	paged := pagedInformers(w.transform)
	if w.compact == nil || opts.Mapper == nil {
		return paged
	}
	client, err := wireClient(cfg, opts.HTTPClient)
	if err != nil {
		ctrllog.Log.WithName("cache").Error(err, "reading the packed kinds' JSON through client-go instead")
		return paged
	}
	bookmarks := ptr.Deref(opts.DefaultEnableWatchBookmarks, true)
	return func(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok || !w.compact(u.GroupVersionKind()) {
			return paged(lw, obj, resync, indexers)
		}
		gvk := u.GroupVersionKind()
		label, ok := wireSelector(opts, gvk)
		if !ok {
			return paged(lw, obj, resync, indexers)
		}
		mapping, err := opts.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			ctrllog.Log.WithName("cache").Error(err, "reading the kind's JSON through client-go instead", "kind", gvk)
			return paged(lw, obj, resync, indexers)
		}
		example := &compactcache.Object{TypeMeta: metav1.TypeMeta{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind}}
		return paged(packedListWatch(client, mapping.Resource, example.TypeMeta, label, bookmarks), example, resync, indexers)
	}
}

// wireSelector is the label selector the cache with opts lists gvk with,
// and whether that is all it asks of the API server (no namespaces, no
// field selector).
func wireSelector(opts cache.Options, gvk schema.GroupVersionKind) (labels.Selector, bool) {
	label := opts.DefaultLabelSelector
	if len(opts.DefaultNamespaces) > 0 || opts.DefaultFieldSelector != nil {
		return nil, false
	}
	for o, by := range opts.ByObject {
		ou, ok := o.(*unstructured.Unstructured)
		if !ok || ou.GroupVersionKind() != gvk {
			continue
		}
		if len(by.Namespaces) > 0 || by.Field != nil || by.Transform != nil {
			return nil, false
		}
		if by.Label != nil {
			label = by.Label
		}
	}
	return label, true
}

// wireClient is a REST client that reads JSON and decodes nothing itself,
// as the dynamic client is (its errors are the API server's Status).
func wireClient(cfg *rest.Config, hc *http.Client) (rest.Interface, error) {
	c := dynamic.ConfigFor(cfg)
	c.GroupVersion = nil
	c.APIPath = ""
	if hc == nil {
		return rest.UnversionedRESTClientFor(c)
	}
	return rest.UnversionedRESTClientForConfigAndClient(c, hc)
}

// dropped are the metadata fields the packed informers leave out of every
// object, as the manager's StripManagedFields does.
var dropped = []string{"managedFields"}

// parameterVersion is the version the list options are encoded at, as the
// dynamic client encodes them.
var parameterVersion = schema.GroupVersion{Version: "v1"}

// packedListWatch lists and watches resource cluster-wide, with label (may
// be nil) as its label selector and bookmarks asked for or not, as
// controller-runtime's informers do, and gives each object as a
// compactcache.Object of kind.
func packedListWatch(c rest.Interface, resource schema.GroupVersionResource, kind metav1.TypeMeta, label labels.Selector, bookmarks bool) *toolscache.ListWatch {
	path := []string{"apis", resource.Group, resource.Version, resource.Resource}
	if resource.Group == "" {
		path = []string{"api", resource.Version, resource.Resource}
	}
	// get is the request of opts, with the cache's selector.
	get := func(opts metav1.ListOptions) *rest.Request {
		if label != nil {
			opts.LabelSelector = label.String()
		}
		return c.Get().AbsPath(path...).SpecificallyVersionedParams(&opts, metav1.ParameterCodec, parameterVersion)
	}
	return &toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			body, err := get(opts).DoRaw(ctx)
			if err != nil {
				return nil, err
			}
			meta, items, err := compactcache.ParseList(body, dropped...)
			if err != nil {
				return nil, fmt.Errorf("listing %s: %w", resource, err)
			}
			list := &metainternalversion.List{ListMeta: meta, Items: make([]runtime.Object, len(items))}
			for i, o := range items {
				if o.Kind == "" { // the items of a built-in kind's list name no kind
					o.TypeMeta = kind
				}
				list.Items[i] = o
			}
			return list, nil
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.Watch = true
			opts.AllowWatchBookmarks = bookmarks
			body, err := get(opts).Stream(ctx)
			if err != nil {
				return nil, err
			}
			return watch.NewStreamWatcher(compactcache.NewWatchDecoder(body, dropped...),
				// As client-go reports an event it cannot decode.
				apierrors.NewClientErrorReporter(http.StatusInternalServerError, http.MethodGet, "ClientWatchDecoding")), nil
		},
	}
}
