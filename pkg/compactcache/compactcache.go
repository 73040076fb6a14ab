// Package compactcache keeps large numbers of cached unstructured objects
// small.
//
// A decoded unstructured object is a tree of maps: each small map costs about
// 300 bytes before its keys and values, so an instance of a few hundred bytes
// of JSON takes 4 to 6 KiB in an informer's store, and a backend controller
// caching 10,000 instances and their 10,000 backing objects holds some
// 100 MiB of maps. Informers need only an object's metadata (names, labels,
// namespaces for their indexes and selectors); the rest is read by a
// reconcile, a few times per change.
//
// Transform therefore stores everything but apiVersion, kind and metadata as
// one compact JSON string (under Key), and Reader, wrapped around the cache a
// client reads from, turns it back into the tree on every Get and List: the
// caller sees the object exactly as the API server sent it. Numbers decode as
// the API machinery decodes them (int64 when integral, float64 otherwise),
// so comparisons with what the server stores keep working.
//
// What stays decoded is rebuilt with shared strings: the field names, the
// apiVersion and kind, label keys and values, annotation keys, owner
// references' kinds and finalizers repeat across thousands of objects, and
// the JSON decoder allocates each of them anew for every object. Names, uids
// and versions are the object's own and are kept as they are.
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

// Pack moves every top-level field of u but apiVersion, kind and metadata into
// one JSON string under Key. Packing a packed object changes nothing.
func Pack(u *unstructured.Unstructured) error {
	if _, packed := u.Object[Key]; packed {
		return nil
	}
	kept, rest := map[string]any{}, map[string]any{}
	for k, v := range u.Object {
		if k == "apiVersion" || k == "kind" || k == "metadata" {
			kept[k] = v
		} else {
			rest[k] = v
		}
	}
	kept = compactTop(kept)
	if len(rest) > 0 {
		b, err := json.Marshal(rest)
		if err != nil {
			return fmt.Errorf("packing %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
		}
		kept[Key] = string(b)
	}
	u.Object = kept
	return nil
}

// compactTop returns apiVersion, kind and metadata with repeated strings
// shared.
func compactTop(obj map[string]any) map[string]any {
	return rebuild(obj, func(k string, v any) any {
		switch k {
		case "apiVersion", "kind":
			return internValue(v)
		case "metadata":
			return rebuild(v, compactMetadata)
		}
		return v
	}).(map[string]any)
}

// compactMetadata shares the repeated strings of one metadata field: the
// namespace, label keys and values, annotation keys, owner references but
// their name and uid, finalizers.
func compactMetadata(k string, v any) any {
	switch k {
	case "namespace":
		return internValue(v)
	case "labels":
		return rebuild(v, func(_ string, x any) any { return internValue(x) })
	case "annotations":
		return rebuild(v, func(_ string, x any) any { return x })
	case "finalizers":
		return eachItem(v, internValue)
	case "ownerReferences":
		return eachItem(v, func(ref any) any {
			return rebuild(ref, func(k string, x any) any {
				if k == "apiVersion" || k == "kind" {
					return internValue(x)
				}
				return x
			})
		})
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

func intern(s string) string { return shared.intern(s) }

// shared holds the one copy of each repeated string. It is bounded: a fleet
// of 10,000 instances and their backing objects, with a label value of their
// own each, fills about a third of it.
var shared = newStringTable(1 << 16)

// stringTable maps a string to its shared copy. unique.Make alone would not
// do: its table forgets a string at the first collection after the last
// Handle to it is gone, and a packed object keeps the string, not the Handle,
// so sharing would end at every GC. When the table is full it starts again
// from empty; strings shared so far stay shared, and the next objects share
// the first copy seen after that.
type stringTable struct {
	mu    sync.RWMutex
	m     map[string]string
	limit int
}

func newStringTable(limit int) *stringTable {
	return &stringTable{m: map[string]string{}, limit: limit}
}

func (t *stringTable) intern(s string) string {
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
		t.m = make(map[string]string, t.limit/4)
	}
	// A copy of its own, so the table never pins a larger buffer s was cut from.
	c = strings.Clone(s)
	t.m[c] = c
	return c
}

func internValue(v any) any {
	if s, ok := v.(string); ok {
		return intern(s)
	}
	return v
}

// Unpack restores the fields Pack moved; an object that is not packed is left
// as it is.
func Unpack(u *unstructured.Unstructured) error {
	s, ok := u.Object[Key].(string)
	if !ok {
		return nil
	}
	rest := map[string]any{}
	if err := utiljson.Unmarshal([]byte(s), &rest); err != nil {
		return fmt.Errorf("unpacking %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	delete(u.Object, Key)
	for k, v := range rest {
		u.Object[k] = v
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
