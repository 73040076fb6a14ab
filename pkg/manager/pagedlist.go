package manager

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// An informer fills its cache with a streamed watch (WatchList) where the API
// server and its etcd support it: each object is transformed as it arrives.
// Otherwise (etcd before 3.4.31 or 3.5.13 lacks the progress notifications
// WatchList needs) it falls back to one list with resourceVersion "0", which
// the API server answers from its watch cache in a single page whatever the
// limit: every object of the kind is decoded whole and held at once until the
// informer's transform runs on it. For a backend controller restarting over
// 10,000 instances and their 10,000 HelmReleases that is some 100 MiB of
// decoded maps, above the steady state of the cache it is filling.
//
// pagedInformers bounds that fallback: the first list is asked at the latest
// version instead (a consistent read, which the API server pages), and each
// page is transformed as soon as it is decoded, so the list being gathered
// holds transformed objects and one page of decoded ones. The manager's
// transforms (managed fields dropped, compactcache.Pack) are idempotent, so
// the informer's own transform running again on those objects changes
// nothing.
//
// The pages are not asked of the watch cache, although it pages a list asked
// "not older than" a version other than "0", and serves it twice as fast as
// etcd: it serves the later pages from its snapshot at the first page's
// version, and an etcd compaction drops every snapshot older than the
// compacted revision. On a kind with no write since the last compaction the
// second page then goes to etcd at a compacted version, fails as expired, and
// client-go's pager falls back to one list without a limit, which the watch
// cache answers whole: a helm controller restarted over 100,000 quiet
// instances that way peaked at 1.5 GiB.

// pagedInformers returns a cache.Options.NewInformer that lists in
// transformed pages (see above). transform may be nil.
func pagedInformers(transform toolscache.TransformFunc) func(toolscache.ListerWatcher, runtime.Object, time.Duration, toolscache.Indexers) toolscache.SharedIndexInformer {
	return func(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
		if l, ok := lw.(*toolscache.ListWatch); ok && l.ListWithContextFunc != nil && !l.DisableChunking {
			paged := *l
			paged.ListWithContextFunc = pagedList(l.ListWithContextFunc, transform)
			lw = &paged
		}
		return toolscache.NewSharedIndexInformer(lw, obj, resync, indexers)
	}
}

// objectTransforms reports whether a kind has a transform of its own: its
// pages would get the default transform before its own.
func objectTransforms(byObject map[client.Object]cache.ByObject) bool {
	for _, bo := range byObject {
		if bo.Transform != nil {
			return true
		}
	}
	return false
}

// pagedList wraps a list function: a paged first list from the watch cache
// (resourceVersion "0", which the cache answers unpaged) is asked at the
// latest version instead, and every item of each page goes through
// transform before the page is returned.
func pagedList(list toolscache.ListWithContextFunc, transform toolscache.TransformFunc) toolscache.ListWithContextFunc {
	return func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		if opts.Limit > 0 && opts.Continue == "" && opts.ResourceVersion == "0" {
			opts.ResourceVersion = ""
			opts.ResourceVersionMatch = ""
		}
		page, err := list(ctx, opts)
		if err != nil || transform == nil {
			return page, err
		}
		return transformItems(page, transform)
	}
}

// transformItems runs transform on every item of list and returns the list
// of the transformed items: list itself, or, when the transform turned its
// items into objects of another type (compactcache.Pack turns unstructured
// objects into compactcache.Objects, which an UnstructuredList cannot hold),
// a list of any objects with list's metadata, which the informer reads the
// same way.
func transformItems(list runtime.Object, transform toolscache.TransformFunc) (runtime.Object, error) {
	items, err := meta.ExtractListWithAlloc(list)
	if err != nil {
		return nil, fmt.Errorf("listing %T in pages: %w", list, err)
	}
	sameType := true
	for i, item := range items {
		out, err := transform(item)
		if err != nil {
			return nil, err
		}
		o, ok := out.(runtime.Object)
		if !ok {
			return nil, fmt.Errorf("listing %T in pages: the cache transform returned %T, not an object", list, out)
		}
		sameType = sameType && reflect.TypeOf(o) == reflect.TypeOf(item)
		items[i] = o
	}
	if sameType {
		return list, meta.SetList(list, items)
	}
	lm, err := meta.ListAccessor(list)
	if err != nil {
		return nil, fmt.Errorf("listing %T in pages: %w", list, err)
	}
	return &metainternalversion.List{
		ListMeta: metav1.ListMeta{ResourceVersion: lm.GetResourceVersion(), Continue: lm.GetContinue(), RemainingItemCount: lm.GetRemainingItemCount()},
		Items:    items,
	}, nil
}
