package compactcache

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const instanceJSON = `{
  "apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Postgres",
  "metadata": {"name": "db", "namespace": "tenant-a", "labels": {"team": "a", "tier": "gold"}, "resourceVersion": "7",
               "uid": "6f1c1f0e-2b1a-4c5e-9d1e-0a5b7c9e1f20", "generateName": "d", "creationTimestamp": "2026-11-26T18:00:00Z",
               "deletionTimestamp": "2026-11-26T19:00:00Z", "deletionGracePeriodSeconds": 0,
               "annotations": {"note": "n", "empty": ""}, "finalizers": ["cozystack.io/f"], "generation": 2,
               "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": "u1", "controller": true}],
               "managedFields": [{"manager": "m", "operation": "Apply", "apiVersion": "apps.cozystack.io/v1alpha1",
                                  "time": "2026-11-26T18:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}}}}]},
  "spec": {"replicas": 3, "ratio": 0.5, "big": 9007199254740993, "flag": false, "none": null,
           "list": [1, "two", {"three": 3.25}], "empty": {}},
  "status": {"conditions": [{"type": "Ready", "status": "True", "observedGeneration": 2}]}
}`

// decoded is what a client gets from the API server for the JSON above.
func decoded(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	return decodedJSON(t, instanceJSON)
}

// decodedJSON is what a client gets from the API server for data.
func decodedJSON(t *testing.T, data string) *unstructured.Unstructured {
	t.Helper()
	m := map[string]any{}
	if err := utiljson.Unmarshal([]byte(data), &m); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

func TestPackUnpackRoundTrip(t *testing.T) {
	want := decoded(t)
	u := want.DeepCopy()
	o, err := Pack(u)
	if err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(u.Object, want.Object) {
		t.Fatal("Pack changed the object it packed")
	}
	if o.Packed == "" || o.GetName() != "db" || o.GetLabels()["team"] != "a" || o.Kind != "Postgres" {
		t.Fatalf("metadata or type lost by Pack: %+v", o)
	}
	// Packing a packed object changes nothing.
	tr := Transform(func(schema.GroupVersionKind) bool { return true }, nil)
	if again, err := tr(o); err != nil || again != o {
		t.Fatalf("Transform of a packed object returned %v, %v; want it as it is", again, err)
	}
	got, err := o.Unpack()
	if err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(got.Object, want.Object) {
		t.Fatalf("round trip changed the object:\n got %#v\nwant %#v", got.Object, want.Object)
	}
	// Integral numbers stay int64 (exactly, past float64's precision).
	if got, _, _ := unstructured.NestedFieldNoCopy(got.Object, "spec", "big"); got != int64(9007199254740993) {
		t.Fatalf("spec.big = %#v, want int64 9007199254740993", got)
	}
	if got, _, _ := unstructured.NestedFieldNoCopy(got.Object, "spec", "ratio"); got != 0.5 {
		t.Fatalf("spec.ratio = %#v, want float64 0.5", got)
	}
	if got, _, _ := unstructured.NestedFieldNoCopy(got.Object, "metadata", "deletionGracePeriodSeconds"); got != int64(0) {
		t.Fatalf("metadata.deletionGracePeriodSeconds = %#v, want int64 0", got)
	}
	// Each unpack is an object of its own.
	got.SetLabels(map[string]string{"changed": "yes"})
	if again, _ := o.Unpack(); again.GetLabels()["team"] != "a" || o.GetLabels()["changed"] != "" {
		t.Fatal("changing an unpacked object changed the packed one")
	}
}

// packedMetadata is the metadata kept in o.Packed.
func packedMetadata(t *testing.T, o *Object) map[string]any {
	t.Helper()
	if o.Packed == "" {
		return nil
	}
	b, err := dicts.decompress(o.Packed)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]any{}
	if err := utiljson.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	md, _ := m["metadata"].(map[string]any)
	return md
}

// Every metadata field comes back exactly, each on its own (no other field
// beside it): the Decoded ones from the struct, the others from Packed.
func TestPackUnpackEachMetadataField(t *testing.T) {
	full := decoded(t)
	md := full.Object["metadata"].(map[string]any)
	for field := range md {
		if field == "name" || field == "namespace" {
			continue
		}
		t.Run(field, func(t *testing.T) {
			want := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Postgres",
				"metadata": map[string]any{"name": "db", "namespace": "tenant-a", field: k8sruntime.DeepCopyJSONValue(md[field])}}}
			o, err := Pack(want)
			if err != nil {
				t.Fatal(err)
			}
			if _, packed := packedMetadata(t, o)[field]; packed == decodedField[field] {
				t.Fatalf("metadata.%s packed: %v, want %v", field, packed, !decodedField[field])
			}
			got, err := o.Unpack()
			if err != nil {
				t.Fatal(err)
			}
			if !equality.Semantic.DeepEqual(got.Object, want.Object) {
				t.Fatalf("round trip changed the object:\n got %#v\nwant %#v", got.Object, want.Object)
			}
		})
	}
}

// The informers' stores, their indexes and the controllers' event handlers
// read the cached object itself: what they read is on the packed object,
// through the accessors they use.
func TestPackKeepsWhatHandlersRead(t *testing.T) {
	o, err := Pack(decoded(t))
	if err != nil {
		t.Fatal(err)
	}
	acc, err := meta.Accessor(o)
	if err != nil {
		t.Fatal(err)
	}
	if key, err := toolscache.MetaNamespaceKeyFunc(o); err != nil || key != "tenant-a/db" {
		t.Fatalf("store key %q, %v", key, err)
	}
	if got := labels.Set(acc.GetLabels()); !labels.SelectorFromSet(labels.Set{"tier": "gold"}).Matches(got) {
		t.Fatalf("labels %v", got)
	}
	if acc.GetName() != "db" || acc.GetNamespace() != "tenant-a" || acc.GetResourceVersion() != "7" || acc.GetGeneration() != 2 ||
		acc.GetUID() != "6f1c1f0e-2b1a-4c5e-9d1e-0a5b7c9e1f20" || acc.GetDeletionTimestamp().IsZero() ||
		len(acc.GetFinalizers()) != 1 || acc.GetFinalizers()[0] != "cozystack.io/f" {
		t.Fatalf("decoded metadata lost by Pack: %+v", o)
	}
	if o.GetObjectKind().GroupVersionKind() != (schema.GroupVersionKind{Group: "apps.cozystack.io", Version: "v1alpha1", Kind: "Postgres"}) {
		t.Fatalf("type lost by Pack: %v", o.GetObjectKind().GroupVersionKind())
	}
	// What a reconcile alone reads is packed, and only there.
	for _, f := range []string{"annotations", "ownerReferences", "creationTimestamp", "managedFields"} {
		if _, ok := packedMetadata(t, o)[f]; !ok {
			t.Errorf("metadata.%s is not packed", f)
		}
	}
	if acc.GetAnnotations() != nil || acc.GetOwnerReferences() != nil || acc.GetCreationTimestamp() != (metav1.Time{}) || acc.GetManagedFields() != nil {
		t.Errorf("metadata a reconcile alone reads is kept decoded: %+v", o)
	}
	// A copy is an object of its own, but for the packed string.
	c := o.DeepCopyObject().(*Object)
	c.SetLabels(map[string]string{"team": "b"})
	c.GetFinalizers()[0] = "changed"
	c.GetDeletionTimestamp().Time = c.GetDeletionTimestamp().AddDate(1, 0, 0)
	if o.GetLabels()["team"] != "a" || o.GetFinalizers()[0] != "cozystack.io/f" || o.GetDeletionTimestamp().Year() != 2026 ||
		c.Packed != o.Packed || c.GetName() != "db" || c.Kind != "Postgres" {
		t.Fatal("DeepCopyObject shares what it must copy, or lost a field")
	}
	// Setting a packed field on a cached object does nothing.
	o.SetAnnotations(map[string]string{"a": "b"})
	if o.GetAnnotations() != nil {
		t.Fatal("a packed field was set on the cached object")
	}
}

func TestPackSharesRepeatedStrings(t *testing.T) {
	a, err := Pack(decoded(t))
	if err != nil {
		t.Fatal(err)
	}
	// A collection between two packs (an informer packs objects over
	// minutes) must not end the sharing.
	runtime.GC()
	runtime.GC()
	b, err := Pack(decoded(t))
	if err != nil {
		t.Fatal(err)
	}
	// Two decodes of the same JSON: separate strings, until Pack shares them.
	key := func(l []string, want string) string {
		for i := 0; i < len(l); i += 2 {
			if l[i] == want {
				return l[i]
			}
		}
		t.Fatalf("no key %q in %v", want, l)
		return ""
	}
	value := func(l []string, k string) string {
		for i := 0; i < len(l); i += 2 {
			if l[i] == k {
				return l[i+1]
			}
		}
		t.Fatalf("no key %q in %v", k, l)
		return ""
	}
	same := func(what, x, y string) {
		if unsafe.StringData(x) != unsafe.StringData(y) {
			t.Errorf("%s %q is not shared between the two objects", what, x)
		}
	}
	same("the label key", key(a.labels, "team"), key(b.labels, "team"))
	same("the label value", value(a.labels, "tier"), value(b.labels, "tier"))
	same("the namespace", a.namespace, b.namespace)
	same("the kind", a.Kind, b.Kind)
	same("the apiVersion", a.APIVersion, b.APIVersion)
	same("the finalizer", a.finalizers[0], b.finalizers[0])
}

func TestStringTableIsBounded(t *testing.T) {
	tab := newStringTable(4)
	first := tab.intern(string([]byte("a"))).(string)
	if got := tab.intern(string([]byte("a"))).(string); unsafe.StringData(got) != unsafe.StringData(first) {
		t.Fatal("a string interned twice has two copies")
	}
	for _, s := range []string{"b", "c", "d", "e"} {
		tab.intern(s)
	}
	if n := len(tab.m); n != 1 {
		t.Fatalf("a full table of 4 given a fifth string holds %d strings, want 1 (started again)", n)
	}
	if got := tab.intern("a").(string); got != "a" || unsafe.StringData(got) == unsafe.StringData(first) {
		t.Fatal("a string interned before the table started again is still shared from the old table")
	}
}

func TestTransformPacksMatchedKindsOnly(t *testing.T) {
	calls := 0
	next := func(obj any) (any, error) { calls++; return obj, nil }
	tr := Transform(func(gvk schema.GroupVersionKind) bool { return gvk.Group == "apps.cozystack.io" }, next)

	out, err := tr(decoded(t))
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := out.(*Object); !ok || o.Packed == "" {
		t.Fatalf("a matched kind was not packed: %T", out)
	}
	other := decoded(t)
	other.SetAPIVersion("v1")
	out, err = tr(other)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := out.(*unstructured.Unstructured).Object["spec"]; !ok {
		t.Fatal("a kind that does not match was packed")
	}
	if calls != 2 {
		t.Fatalf("the chained transform ran %d times, want 2", calls)
	}
	// An object with no metadata map is left as it is.
	odd := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Postgres", "metadata": "x"}}
	if out, err := tr(odd); err != nil || out != odd {
		t.Fatalf("an object without metadata: %v, %v", out, err)
	}
}

// informers is a cache of one informer: a store with the namespace index
// and a field index as controller-runtime's cache names them, and an inner
// reader that serves other kinds.
type informers struct {
	client.Reader
	store toolscache.Indexer
	asked []schema.GroupVersionKind
}

type storeInformer struct {
	cache.Informer
	store toolscache.Indexer
}

func (i storeInformer) GetIndexer() toolscache.Indexer { return i.store }

func (c *informers) GetInformer(_ context.Context, obj client.Object, _ ...cache.InformerGetOption) (cache.Informer, error) {
	c.asked = append(c.asked, obj.GetObjectKind().GroupVersionKind())
	return storeInformer{store: c.store}, nil
}

// elsewhere is the inner reader's answer to kinds Reader does not read.
var elsewhere = errors.New("read elsewhere")

type inner struct{}

func (inner) Get(context.Context, client.ObjectKey, client.Object, ...client.GetOption) error {
	return elsewhere
}

func (inner) List(context.Context, client.ObjectList, ...client.ListOption) error { return elsewhere }

func TestReader(t *testing.T) {
	store := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{
		toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc,
		fieldIndexName("tier"): func(obj any) ([]string, error) {
			o := obj.(client.Object)
			v := o.GetLabels()["tier"]
			return []string{fieldIndexKey("", v), fieldIndexKey(o.GetNamespace(), v)}, nil
		},
	})
	objects := map[string]*unstructured.Unstructured{}
	for _, tc := range []struct{ ns, name, tier string }{{"tenant-a", "db", "gold"}, {"tenant-a", "cache", "silver"}, {"tenant-b", "db", "gold"}} {
		u := decoded(t)
		u.SetNamespace(tc.ns)
		u.SetName(tc.name)
		u.SetLabels(map[string]string{"tier": tc.tier})
		o, err := Pack(u)
		if err != nil {
			t.Fatal(err)
		}
		if err := store.Add(o); err != nil {
			t.Fatal(err)
		}
		objects[tc.ns+"/"+tc.name] = u
	}
	// One the transform left unpacked.
	plain := decoded(t)
	plain.SetNamespace("tenant-c")
	plain.SetName("plain")
	plain.SetLabels(map[string]string{"tier": "bronze"})
	if err := store.Add(plain.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	objects["tenant-c/plain"] = plain
	gvk := schema.GroupVersionKind{Group: "apps.cozystack.io", Version: "v1alpha1", Kind: "Postgres"}
	src := &informers{Reader: inner{}, store: store}
	r := Reader{Reader: src, Match: func(g schema.GroupVersionKind) bool { return g.Group == gvk.Group }}
	ctx := context.Background()

	for key, want := range objects {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(gvk)
		ns, name, _ := strings.Cut(key, "/")
		if err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, got); err != nil {
			t.Fatal(err)
		}
		if !equality.Semantic.DeepEqual(got.Object, want.Object) {
			t.Fatalf("Get %s returned %v, want %v", key, got.Object, want.Object)
		}
		got.Object["spec"] = "changed"
	}
	if src.asked[0] != gvk {
		t.Fatalf("asked the cache for the informer of %v, want %v", src.asked[0], gvk)
	}
	missing := &unstructured.Unstructured{}
	missing.SetGroupVersionKind(gvk)
	if err := r.Get(ctx, client.ObjectKey{Namespace: "tenant-a", Name: "none"}, missing); !apierrors.IsNotFound(err) {
		t.Fatalf("Get of a missing object: %v, want NotFound", err)
	}

	list := func(opts ...client.ListOption) []string {
		t.Helper()
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(gvk.GroupVersion().WithKind("PostgresList"))
		if err := r.List(ctx, l, opts...); err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, u := range l.Items {
			key := u.GetNamespace() + "/" + u.GetName()
			want := objects[key].DeepCopy()
			if !equality.Semantic.DeepEqual(u.Object, want.Object) {
				t.Fatalf("List returned %v, want %v", u.Object, want.Object)
			}
			keys = append(keys, key)
		}
		slices.Sort(keys)
		return keys
	}
	for _, tc := range []struct {
		name string
		opts []client.ListOption
		want string
	}{
		{"everything", nil, "[tenant-a/cache tenant-a/db tenant-b/db tenant-c/plain]"},
		{"a namespace", []client.ListOption{client.InNamespace("tenant-a")}, "[tenant-a/cache tenant-a/db]"},
		{"a label selector", []client.ListOption{client.MatchingLabels{"tier": "gold"}}, "[tenant-a/db tenant-b/db]"},
		{"an indexed field", []client.ListOption{client.MatchingFields{"tier": "gold"}}, "[tenant-a/db tenant-b/db]"},
		{"an indexed field in a namespace", []client.ListOption{client.MatchingFields{"tier": "gold"}, client.InNamespace("tenant-b")}, "[tenant-b/db]"},
		{"two fields of one index", []client.ListOption{client.MatchingFieldsSelector{Selector: fields.AndSelectors(
			fields.OneTermEqualSelector("tier", "gold"), fields.OneTermEqualSelector("tier", "silver"))}}, "[]"},
		{"a limit", []client.ListOption{client.InNamespace("tenant-a"), client.Limit(1)}, "1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := list(tc.opts...)
			if tc.want == "1" {
				if len(got) != 1 {
					t.Fatalf("listed %v, want one", got)
				}
				return
			}
			if fmt.Sprint(got) != tc.want {
				t.Fatalf("listed %v, want %s", got, tc.want)
			}
		})
	}
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(gvk.GroupVersion().WithKind("PostgresList"))
	if err := r.List(ctx, l, client.MatchingFieldsSelector{Selector: fields.OneTermNotEqualSelector("tier", "gold")}); err == nil {
		t.Fatal("a non-exact field selector was served")
	}
	if err := r.List(ctx, l, client.MatchingFields{"unindexed": "x"}); err == nil {
		t.Fatal("a field without an index was served")
	}
	// The stored objects are as they were.
	if o, _, _ := store.GetByKey("tenant-a/db"); o.(*Object).Packed == "" {
		t.Fatal("reading changed the stored object")
	}
	// Other kinds, and typed objects, are read by the cache itself.
	other := &unstructured.Unstructured{}
	other.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"})
	if err := r.Get(ctx, client.ObjectKey{Name: "x"}, other); !errors.Is(err, elsewhere) {
		t.Fatalf("Get of another kind: %v, want it read by the cache", err)
	}
	otherList := &unstructured.UnstructuredList{}
	otherList.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMapList"})
	if err := r.List(ctx, otherList); !errors.Is(err, elsewhere) {
		t.Fatalf("List of another kind: %v, want it read by the cache", err)
	}
	if err := r.Get(ctx, client.ObjectKey{Name: "x"}, &metav1.PartialObjectMetadata{}); !errors.Is(err, elsewhere) {
		t.Fatalf("Get of metadata: %v, want it read by the cache", err)
	}
}

func TestLabelValuesNamingTheirObjectAreNotShared(t *testing.T) {
	tab := newStringTable(1 << 16)
	v := &valueSharing{keys: map[string]*valueCount{}}
	fresh := func(s string) string { return string([]byte(s)) } // a copy of its own, as a decode makes
	var kinds []string
	for i := range valueSample + 100 {
		kinds = append(kinds, v.share(tab, "apps.cozystack.io/application.kind", fresh("Bench")))
		v.share(tab, "apps.cozystack.io/application.name", fresh(fmt.Sprintf("app-%05d", i)))
	}
	for _, k := range kinds[1:] {
		if unsafe.StringData(k) != unsafe.StringData(kinds[0]) {
			t.Fatal("a value every object repeats is not shared")
		}
	}
	if n := len(tab.m); n != valueSample+1 {
		t.Errorf("the table holds %d strings, want %d: the kind, and the names looked at before the key was judged", n, valueSample+1)
	}
	name := fresh("app-99999")
	if got := v.share(tab, "apps.cozystack.io/application.name", name); got != name || unsafe.StringData(got) != unsafe.StringData(name) {
		t.Error("a value of a key whose values name their object was not kept as the object has it")
	}
	if _, ok := tab.m[name]; ok {
		t.Error("a value of a key whose values name their object went into the table")
	}
	// A key whose values repeat half the time or more keeps being shared.
	for i := range 2 * valueSample {
		v.share(tab, "team", fresh(fmt.Sprintf("team-%d", i/2)))
	}
	a, b := v.share(tab, "team", fresh("team-3")), v.share(tab, "team", fresh("team-3"))
	if unsafe.StringData(a) != unsafe.StringData(b) {
		t.Error("the values of a key that repeat half the time are not shared")
	}
}

func TestLabelValuesFollowBoundedKeys(t *testing.T) {
	tab := newStringTable(1 << 16)
	v := &valueSharing{keys: map[string]*valueCount{}}
	for i := range maxJudgedKeys + 10 {
		v.share(tab, fmt.Sprintf("key-%d", i), "x")
	}
	if n := len(v.keys); n != maxJudgedKeys {
		t.Fatalf("%d keys followed, want at most %d", n, maxJudgedKeys)
	}
	a, b := v.share(tab, "key-beyond", string([]byte("y"))), v.share(tab, "key-beyond", string([]byte("y")))
	if unsafe.StringData(a) != unsafe.StringData(b) {
		t.Error("the values of a key beyond the bound are not shared, as every key's were")
	}
}
