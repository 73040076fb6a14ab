// Package compactcache keeps large numbers of cached unstructured objects
// small.
//
// A decoded unstructured object is a tree of maps: each small map costs about
// 340 bytes before its keys and values, and a map of more than eight entries
// twice that, so an instance of a few hundred bytes of JSON takes 4 to 6 KiB
// in an informer's store, and a backend controller caching 10,000 instances
// and their 10,000 backing objects holds some 100 MiB of maps. Informers and
// event handlers read a few metadata fields only (names, labels, versions:
// see Decoded for the list and who reads each); the rest is read by a
// reconcile, a few times per change.
//
// Transform therefore stores each object of a packed kind as an Object: its
// apiVersion, kind and the Decoded metadata fields in the structs typed
// objects use (no maps but the labels), and everything else (spec, status,
// annotations, owner references, creation time, ...) as one packed string.
// Reader, wrapped around the cache a client reads from, reads those kinds
// from the informers' stores and turns each Object back into the
// unstructured object on every Get and List: the caller sees the object
// exactly as the API server sent it. Numbers decode as the API machinery
// decodes them (int64 when integral, float64 otherwise), so comparisons
// with what the server stores keep working. The packed string is JSON
// compressed against a dictionary of the object's kind (dict.go): objects
// of one kind are much alike, and their packed fields shrink to a tenth or
// less.
//
// What stays decoded is kept with shared strings: the apiVersion and kind,
// namespaces, label keys and values and finalizers repeat across thousands
// of objects, and the JSON decoder allocates each of them anew for every
// object. Names, uids and versions are the object's own and are kept as
// they are.
package compactcache

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Match selects the kinds whose cached objects are packed.
type Match func(schema.GroupVersionKind) bool

// Transform returns a cache transform that packs unstructured objects of the
// matched kinds into Objects after next (may be nil) has run on them. An
// object already packed, or of another kind, is returned as it is.
func Transform(match Match, next toolscache.TransformFunc) toolscache.TransformFunc {
	return func(obj any) (any, error) {
		if next != nil {
			var err error
			if obj, err = next(obj); err != nil {
				return nil, err
			}
		}
		u, ok := obj.(*unstructured.Unstructured)
		if !ok || !match(u.GroupVersionKind()) {
			return obj, nil
		}
		if _, ok := u.Object["metadata"].(map[string]any); !ok {
			return u, nil // nothing to key it by; the store rejects it as it would anyway
		}
		return Pack(u)
	}
}

// Pack returns u as an Object: apiVersion, kind and the Decoded metadata
// fields decoded, with repeated strings shared, and every other field,
// metadata fields included, in Packed. u is not changed.
func Pack(u *unstructured.Unstructured) (*Object, error) {
	o := &Object{TypeMeta: metav1.TypeMeta{APIVersion: intern(u.GetAPIVersion()), Kind: intern(u.GetKind())}}
	rest := map[string]any{}
	for k, v := range u.Object {
		switch k {
		case "apiVersion", "kind":
		case "metadata":
			if packed := metadataRest(v); len(packed) > 0 {
				rest[k] = packed
			}
		default:
			rest[k] = v
		}
	}
	o.name = u.GetName()
	o.namespace = intern(u.GetNamespace())
	o.uid = u.GetUID()
	o.resourceVersion = u.GetResourceVersion()
	o.generation = u.GetGeneration()
	o.deletionTimestamp = u.GetDeletionTimestamp()
	o.labels = labelList(u.GetLabels())
	for _, f := range u.GetFinalizers() {
		o.finalizers = append(o.finalizers, intern(f))
	}
	if len(rest) > 0 {
		b, err := json.Marshal(rest)
		if err != nil {
			return nil, fmt.Errorf("packing %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
		}
		o.Packed = string(dicts.compress(u.GroupVersionKind(), b))
	}
	return o, nil
}

// Decoded are the metadata fields an Object keeps decoded: those the
// informers and the event handlers of the controllers read from the cached
// object itself, before any reconcile unpacks it.
//
//   - name and namespace: the store's keys, the namespace index, the
//     requests handlers enqueue, field selectors on them;
//   - labels: label selectors of cached lists, the handlers' filters and
//     maps, the owner index of backing objects (pkg/instance);
//   - resourceVersion: the informer tells a resync from a change by it;
//   - uid, generation, deletionTimestamp, finalizers: what predicates
//     commonly compare; small.
//
// Everything else (creationTimestamp, annotations, ownerReferences,
// generateName, deletionGracePeriodSeconds, managedFields when they are kept)
// is read by a reconcile only, through Reader. An event handler or index on a
// packed kind that reads one of those must add it here (and to Pack, Parse and
// Unpack).
var Decoded = []string{"name", "namespace", "uid", "resourceVersion", "generation", "deletionTimestamp", "labels", "finalizers"}

// decodedField holds Decoded for lookups.
var decodedField = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range Decoded {
		m[k] = true
	}
	return m
}()

// metadataRest returns the metadata fields of md not in Decoded (nil when
// there are none or md is not a map).
func metadataRest(md any) map[string]any {
	m, _ := md.(map[string]any)
	var packed map[string]any
	for k, v := range m {
		if decodedField[k] {
			continue
		}
		if packed == nil {
			packed = map[string]any{}
		}
		packed[k] = v
	}
	return packed
}

// Intern returns the one shared copy of s (see shared): for a cache
// transform that makes the strings repeated across cached objects share
// their bytes.
func Intern(s string) string { return intern(s) }

func intern(s string) string {
	if s == "" {
		return ""
	}
	return shared.intern(s).(string)
}

// shared holds the one copy of each repeated string. It is bounded; the
// values of a label key that names the object it is on (one per instance)
// stay out of it once the key is judged (labelValues).
var shared = newStringTable(1 << 16)

// stringTable maps a string to its shared copy, held in an interface: a
// string stored in a map[string]any is boxed, a 16-byte allocation per value
// unless the box itself is shared. unique.Make alone would not
// do: its table forgets a string at the first collection after the last
// Handle to it is gone, and a packed object keeps the string, not the Handle,
// so sharing would end at every GC. When the table is full it starts again
// from empty; strings shared so far stay shared, and the next objects share
// the first copy seen after that.
type stringTable struct {
	mu    sync.RWMutex
	m     map[string]any
	limit int
}

func newStringTable(limit int) *stringTable {
	return &stringTable{m: map[string]any{}, limit: limit}
}

func (t *stringTable) intern(s string) any {
	c, _ := t.internNew(s)
	return c
}

// internNew is intern, and whether s was new to the table.
func (t *stringTable) internNew(s string) (any, bool) {
	t.mu.RLock()
	c, ok := t.m[s]
	t.mu.RUnlock()
	if ok {
		return c, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if c, ok := t.m[s]; ok {
		return c, false
	}
	if len(t.m) >= t.limit {
		t.m = make(map[string]any, t.limit/4)
	}
	// A copy of its own, so the table never pins a larger buffer s was cut from.
	cs := strings.Clone(s)
	c = cs
	t.m[cs] = c
	return c, true
}

// Unpack returns the object o packs, as the API server sent it (but the
// managed fields the cache's transforms dropped): a new object every call,
// which the caller may change.
func (o *Object) Unpack() (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	if o.Packed != "" {
		b, err := dicts.decompress(o.Packed)
		if err != nil {
			return nil, fmt.Errorf("unpacking %s %s/%s: %w", o.Kind, o.namespace, o.name, err)
		}
		if err := utiljson.Unmarshal(b, &u.Object); err != nil {
			return nil, fmt.Errorf("unpacking %s %s/%s: %w", o.Kind, o.namespace, o.name, err)
		}
	}
	u.SetAPIVersion(o.APIVersion)
	u.SetKind(o.Kind)
	u.SetName(o.name)
	u.SetNamespace(o.namespace)
	u.SetUID(o.uid)
	u.SetResourceVersion(o.resourceVersion)
	if o.generation != 0 {
		u.SetGeneration(o.generation)
	}
	u.SetDeletionTimestamp(o.deletionTimestamp)
	if l := o.GetLabels(); len(l) > 0 {
		u.SetLabels(l)
	}
	if len(o.finalizers) > 0 {
		u.SetFinalizers(o.finalizers)
	}
	return u, nil
}

// Reader reads the packed kinds (Match) of the informers' stores of the
// cache it wraps, giving every object whole, as an unstructured.Unstructured
// (Object.Unpack); other reads go to the cache itself. It serves what
// controller-runtime's cache reader serves (reads by key; lists by
// namespace, label selector, exact-match field selectors on the cache's
// indexes, and limit) from the informers that cache runs, which hold
// Objects that reader would refuse to return as unstructured ones.
type Reader struct {
	client.Reader
	// Match selects the kinds Reader reads itself: those Transform packs
	// (nil: none).
	Match Match
}

// informerSource is the cache Reader wraps.
type informerSource interface {
	GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error)
}

// store is the store of the informer of gvk, started and synced.
func (r Reader) store(ctx context.Context, gvk schema.GroupVersionKind) (toolscache.Indexer, error) {
	src, ok := r.Reader.(informerSource)
	if !ok {
		return nil, fmt.Errorf("reading %s from the cache: %T runs no informers", gvk.Kind, r.Reader)
	}
	probe := &unstructured.Unstructured{}
	probe.SetGroupVersionKind(gvk)
	inf, err := src.GetInformer(ctx, probe)
	if err != nil {
		return nil, err
	}
	indexed, ok := inf.(interface{ GetIndexer() toolscache.Indexer })
	if !ok {
		return nil, fmt.Errorf("reading %s from the cache: its informer %T has no store to read", gvk.Kind, inf)
	}
	return indexed.GetIndexer(), nil
}

// packed reports whether Reader reads gvk itself.
func (r Reader) packed(gvk schema.GroupVersionKind) bool { return r.Match != nil && r.Match(gvk) }

// Get implements client.Reader.
func (r Reader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || !r.packed(u.GroupVersionKind()) {
		return r.Reader.Get(ctx, key, obj, opts...)
	}
	gvk := u.GroupVersionKind()
	idx, err := r.store(ctx, gvk)
	if err != nil {
		return err
	}
	item, exists, err := idx.GetByKey(toolscache.ObjectName{Namespace: key.Namespace, Name: key.Name}.String())
	if err != nil {
		return err
	}
	if !exists {
		return apierrors.NewNotFound(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, key.Name)
	}
	got, err := whole(item, gvk)
	if err != nil {
		return err
	}
	u.Object = got.Object
	return nil
}

// List implements client.Reader.
func (r Reader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	ul, ok := list.(*unstructured.UnstructuredList)
	gvk := list.GetObjectKind().GroupVersionKind()
	gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	if !ok || !r.packed(gvk) {
		return r.Reader.List(ctx, list, opts...)
	}
	lo := client.ListOptions{}
	lo.ApplyOptions(opts)
	if lo.Continue != "" {
		return errors.New("continue list option is not supported by the cache")
	}
	idx, err := r.store(ctx, gvk)
	if err != nil {
		return err
	}
	var items []any
	switch {
	case lo.FieldSelector != nil:
		items, err = byFields(idx, lo.FieldSelector, lo.Namespace)
	case lo.Namespace != "":
		items, err = idx.ByIndex(toolscache.NamespaceIndex, lo.Namespace)
	default:
		items = idx.List()
	}
	if err != nil {
		return err
	}
	ul.Items = make([]unstructured.Unstructured, 0, len(items))
	for _, item := range items {
		if lo.Limit > 0 && int64(len(ul.Items)) >= lo.Limit {
			break
		}
		acc, err := meta.Accessor(item)
		if err != nil {
			return err
		}
		if lo.LabelSelector != nil && !lo.LabelSelector.Matches(labels.Set(acc.GetLabels())) {
			continue
		}
		u, err := whole(item, gvk)
		if err != nil {
			return err
		}
		ul.Items = append(ul.Items, *u)
	}
	return nil
}

// whole is a stored item of kind gvk as a new unstructured object.
func whole(item any, gvk schema.GroupVersionKind) (*unstructured.Unstructured, error) {
	switch o := item.(type) {
	case *Object:
		return o.Unpack()
	case *unstructured.Unstructured: // one Transform left as it was
		c := o.DeepCopy()
		c.SetGroupVersionKind(gvk)
		return c, nil
	}
	return nil, fmt.Errorf("the cache of %s holds a %T", gvk.Kind, item)
}

// The names controller-runtime's cache gives the indexes of
// client.FieldIndexer and their keys (its cache/internal package: an index
// "field:<field>", each value keyed by "<namespace>/<value>" and
// "__all_namespaces/<value>").
func fieldIndexName(field string) string { return "field:" + field }

func fieldIndexKey(namespace, value string) string {
	if namespace == "" {
		namespace = "__all_namespaces"
	}
	return namespace + "/" + value
}

// byFields returns the items whose indexes hold every value sel asks for
// (exact matches only, as controller-runtime's cache serves them).
func byFields(idx toolscache.Indexer, sel fields.Selector, namespace string) ([]any, error) {
	reqs := sel.Requirements()
	if len(reqs) == 0 {
		return idx.List(), nil
	}
	for _, req := range reqs {
		if req.Operator != selection.Equals && req.Operator != selection.DoubleEquals {
			return nil, errors.New("non-exact field matches are not supported by the cache")
		}
	}
	items, err := idx.ByIndex(fieldIndexName(reqs[0].Field), fieldIndexKey(namespace, reqs[0].Value))
	if err != nil {
		return nil, err
	}
	indexers := idx.GetIndexers()
	for _, req := range reqs[1:] {
		fn, ok := indexers[fieldIndexName(req.Field)]
		if !ok {
			return nil, fmt.Errorf("index with name %s does not exist", fieldIndexName(req.Field))
		}
		want := fieldIndexKey(namespace, req.Value)
		kept := items[:0:0]
		for _, item := range items {
			vals, err := fn(item)
			if err != nil {
				return nil, err
			}
			if slices.Contains(vals, want) {
				kept = append(kept, item)
			}
		}
		items = kept
	}
	return items, nil
}
