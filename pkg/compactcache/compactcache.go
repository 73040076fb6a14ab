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
// Transform therefore keeps apiVersion, kind and the Decoded metadata fields
// decoded and stores everything else (spec, status, annotations, owner
// references, creation time, ...) as one packed string under Key, and
// Reader, wrapped around the cache a client reads from, turns it back into
// the tree on every Get and List: the caller sees the object exactly as the
// API server sent it. Numbers decode as the API machinery decodes them (int64
// when integral, float64 otherwise), so comparisons with what the server
// stores keep working. The packed string is JSON compressed against a
// dictionary of the object's kind (dict.go): objects of one kind are much
// alike, and their packed fields shrink to a tenth or less.
//
// What stays decoded is rebuilt with shared strings: the field names, the
// apiVersion and kind, namespaces, label keys and values and finalizers
// repeat across thousands of objects, and the JSON decoder allocates each of
// them anew for every object (and boxes each value in an interface of its
// own: the shared strings are shared boxed). Names, uids and versions are the
// object's own and are kept as they are.
package compactcache

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Key holds the packed fields in a cached object. It cannot collide with a
// field of a Kubernetes object (field names are JSON identifiers).
const Key = "$packed"

// Match selects the kinds whose cached objects are packed.
type Match func(schema.GroupVersionKind) bool

// Transform returns a cache transform that packs unstructured objects of the
// matched kinds after next (may be nil) has run on them.
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
		if err := Pack(u); err != nil {
			return nil, err
		}
		return u, nil
	}
}

// Pack moves every top-level field of u but apiVersion, kind and metadata,
// and every metadata field but those in Decoded, into one JSON string under
// Key (the metadata fields under "metadata" in it). Packing a packed object
// changes nothing.
func Pack(u *unstructured.Unstructured) error {
	if _, packed := u.Object[Key]; packed {
		return nil
	}
	kept, rest := make(map[string]any, 4), map[string]any{}
	for k, v := range u.Object {
		switch k {
		case "apiVersion", "kind":
			kept[intern(k)] = internValue(v)
		case "metadata":
			md, ok := v.(map[string]any)
			if !ok {
				kept[intern(k)] = v
				continue
			}
			decoded, packed := splitMetadata(md)
			kept[intern(k)] = decoded
			if len(packed) > 0 {
				rest[k] = packed
			}
		default:
			rest[k] = v
		}
	}
	if len(rest) > 0 {
		b, err := json.Marshal(rest)
		if err != nil {
			return fmt.Errorf("packing %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
		}
		kept[Key] = string(dicts.compress(u.GroupVersionKind(), b))
	}
	u.Object = kept
	return nil
}

// Decoded are the metadata fields a packed object keeps decoded: those the
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
// packed kind that reads one of those must add it here.
var Decoded = []string{"name", "namespace", "uid", "resourceVersion", "generation", "deletionTimestamp", "labels", "finalizers"}

// decodedField holds Decoded for lookups.
var decodedField = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range Decoded {
		m[k] = true
	}
	return m
}()

// splitMetadata returns the Decoded fields of md, with repeated strings
// shared, and the others (nil when there are none).
func splitMetadata(md map[string]any) (decoded, packed map[string]any) {
	decoded = make(map[string]any, len(md))
	for k, v := range md {
		if !decodedField[k] {
			if packed == nil {
				packed = map[string]any{}
			}
			packed[k] = v
			continue
		}
		decoded[intern(k)] = compactMetadata(k, v)
	}
	return decoded, packed
}

// compactMetadata shares the repeated strings of one decoded metadata field:
// the namespace, label keys and values, finalizers. Names, uids and versions
// are the object's own and are kept as they are.
func compactMetadata(k string, v any) any {
	switch k {
	case "namespace":
		return internValue(v)
	case "labels":
		return rebuild(v, func(_ string, x any) any { return internValue(x) })
	case "finalizers":
		return eachItem(v, internValue)
	}
	return v
}

// rebuild returns a map like v with shared keys and each value passed through
// value; v is returned as it is when it is not a map.
func rebuild(v any, value func(k string, v any) any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := make(map[string]any, len(m))
	for k, x := range m {
		out[intern(k)] = value(k, x)
	}
	return out
}

// eachItem replaces each item of a list in place with f's result.
func eachItem(v any, f func(any) any) any {
	if l, ok := v.([]any); ok {
		for i := range l {
			l[i] = f(l[i])
		}
	}
	return v
}

func intern(s string) string { return shared.intern(s).(string) }

// shared holds the one copy of each repeated string. It is bounded: a fleet
// of 10,000 instances and their backing objects, with a label value of their
// own each, fills about a third of it.
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
	t.mu.RLock()
	c, ok := t.m[s]
	t.mu.RUnlock()
	if ok {
		return c
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if c, ok := t.m[s]; ok {
		return c
	}
	if len(t.m) >= t.limit {
		t.m = make(map[string]any, t.limit/4)
	}
	// A copy of its own, so the table never pins a larger buffer s was cut from.
	cs := strings.Clone(s)
	c = cs
	t.m[cs] = c
	return c
}

// internValue returns a string value as its shared box; other values as
// they are.
func internValue(v any) any {
	if s, ok := v.(string); ok {
		return shared.intern(s)
	}
	return v
}

// Unpack restores the fields Pack moved; an object that is not packed is left
// as it is. The metadata map of u is filled in place: u must be a copy of
// the cached object (as a cache's Get and List return), never the cached
// object itself.
func Unpack(u *unstructured.Unstructured) error {
	s, ok := u.Object[Key].(string)
	if !ok {
		return nil
	}
	b, err := dicts.decompress(s)
	if err != nil {
		return fmt.Errorf("unpacking %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	rest := map[string]any{}
	if err := utiljson.Unmarshal(b, &rest); err != nil {
		return fmt.Errorf("unpacking %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	delete(u.Object, Key)
	for k, v := range rest {
		packed, isMap := v.(map[string]any)
		md, hasMD := u.Object[k].(map[string]any)
		if k != "metadata" || !isMap || !hasMD {
			u.Object[k] = v
			continue
		}
		for mk, mv := range packed {
			md[mk] = mv
		}
	}
	return nil
}

// Reader unpacks what the wrapped reader (a cache) returns.
type Reader struct {
	client.Reader
}

// Get implements client.Reader.
func (r Reader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := r.Reader.Get(ctx, key, obj, opts...); err != nil {
		return err
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return Unpack(u)
	}
	return nil
}

// List implements client.Reader.
func (r Reader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := r.Reader.List(ctx, list, opts...); err != nil {
		return err
	}
	if ul, ok := list.(*unstructured.UnstructuredList); ok {
		for i := range ul.Items {
			if err := Unpack(&ul.Items[i]); err != nil {
				return err
			}
		}
	}
	return nil
}
