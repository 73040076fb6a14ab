package compactcache

import (
	"context"
	"runtime"
	"testing"
	"unsafe"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	toolscache "k8s.io/client-go/tools/cache"
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
	m := map[string]any{}
	if err := utiljson.Unmarshal([]byte(instanceJSON), &m); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

func TestPackUnpackRoundTrip(t *testing.T) {
	want := decoded(t)
	u := want.DeepCopy()
	if err := Pack(u); err != nil {
		t.Fatal(err)
	}
	if _, ok := u.Object["spec"]; ok {
		t.Fatalf("spec still decoded after Pack: %v", u.Object)
	}
	if u.GetName() != "db" || u.GetLabels()["team"] != "a" || u.GetKind() != "Postgres" {
		t.Fatalf("metadata or type lost by Pack: %v", u.Object)
	}
	if err := Pack(u); err != nil { // packing twice changes nothing
		t.Fatal(err)
	}
	if err := Unpack(u); err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(u.Object, want.Object) {
		t.Fatalf("round trip changed the object:\n got %#v\nwant %#v", u.Object, want.Object)
	}
	// Integral numbers stay int64 (exactly, past float64's precision).
	if got, _, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "big"); got != int64(9007199254740993) {
		t.Fatalf("spec.big = %#v, want int64 9007199254740993", got)
	}
	if got, _, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "ratio"); got != 0.5 {
		t.Fatalf("spec.ratio = %#v, want float64 0.5", got)
	}
	if got, _, _ := unstructured.NestedFieldNoCopy(u.Object, "metadata", "deletionGracePeriodSeconds"); got != int64(0) {
		t.Fatalf("metadata.deletionGracePeriodSeconds = %#v, want int64 0", got)
	}
}

// Every metadata field moved into the packed string comes back exactly, each
// on its own (no other field beside it), and so do the object's other fields.
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
			u := want.DeepCopy()
			if err := Pack(u); err != nil {
				t.Fatal(err)
			}
			_, stays := u.Object["metadata"].(map[string]any)[field]
			if stays != decodedField[field] {
				t.Fatalf("metadata.%s decoded after Pack: %v, want %v", field, stays, decodedField[field])
			}
			if err := Unpack(u); err != nil {
				t.Fatal(err)
			}
			if !equality.Semantic.DeepEqual(u.Object, want.Object) {
				t.Fatalf("round trip changed the object:\n got %#v\nwant %#v", u.Object, want.Object)
			}
		})
	}
}

// The informers' stores, their indexes and the controllers' event handlers
// read the cached object itself: what they read stays on the packed object,
// through the accessors they use.
func TestPackKeepsWhatHandlersRead(t *testing.T) {
	u := decoded(t)
	if err := Pack(u); err != nil {
		t.Fatal(err)
	}
	acc, err := meta.Accessor(u)
	if err != nil {
		t.Fatal(err)
	}
	if key, err := toolscache.MetaNamespaceKeyFunc(u); err != nil || key != "tenant-a/db" {
		t.Fatalf("store key %q, %v", key, err)
	}
	if got := labels.Set(acc.GetLabels()); !labels.SelectorFromSet(labels.Set{"tier": "gold"}).Matches(got) {
		t.Fatalf("labels %v", got)
	}
	if acc.GetName() != "db" || acc.GetNamespace() != "tenant-a" || acc.GetResourceVersion() != "7" || acc.GetGeneration() != 2 ||
		acc.GetUID() != "6f1c1f0e-2b1a-4c5e-9d1e-0a5b7c9e1f20" || acc.GetDeletionTimestamp().IsZero() ||
		len(acc.GetFinalizers()) != 1 || acc.GetFinalizers()[0] != "cozystack.io/f" {
		t.Fatalf("decoded metadata lost by Pack: %v", u.Object["metadata"])
	}
	if u.GroupVersionKind() != (schema.GroupVersionKind{Group: "apps.cozystack.io", Version: "v1alpha1", Kind: "Postgres"}) {
		t.Fatalf("type lost by Pack: %v", u.GroupVersionKind())
	}
	// What a reconcile alone reads is packed.
	for _, f := range []string{"annotations", "ownerReferences", "creationTimestamp", "managedFields"} {
		if _, ok := u.Object["metadata"].(map[string]any)[f]; ok {
			t.Errorf("metadata.%s is still decoded", f)
		}
	}
}

func TestPackSharesRepeatedStrings(t *testing.T) {
	a, b := decoded(t), decoded(t)
	if err := Pack(a); err != nil {
		t.Fatal(err)
	}
	// A collection between two packs (an informer packs objects over
	// minutes) must not end the sharing.
	runtime.GC()
	runtime.GC()
	if err := Pack(b); err != nil {
		t.Fatal(err)
	}
	// Two decodes of the same JSON: separate strings, until Pack shares them.
	key := func(m map[string]any, want string) string {
		for k := range m {
			if k == want {
				return k
			}
		}
		t.Fatalf("no key %q in %v", want, m)
		return ""
	}
	same := func(what, x, y string) {
		if unsafe.StringData(x) != unsafe.StringData(y) {
			t.Errorf("%s %q is not shared between the two objects", what, x)
		}
	}
	lb, _, _ := unstructured.NestedMap(b.Object, "metadata", "labels")
	mdA := a.Object["metadata"].(map[string]any)
	mdB := b.Object["metadata"].(map[string]any)
	same("the field name", key(mdA, "resourceVersion"), key(mdB, "resourceVersion"))
	same("the top-level field name", key(a.Object, "metadata"), key(b.Object, "metadata"))
	same("the label key", key(mdA["labels"].(map[string]any), "team"), key(mdB["labels"].(map[string]any), "team"))
	same("the label value", mdA["labels"].(map[string]any)["tier"].(string), mdB["labels"].(map[string]any)["tier"].(string))
	same("the namespace", mdA["namespace"].(string), mdB["namespace"].(string))
	same("the kind", a.Object["kind"].(string), b.Object["kind"].(string))
	same("the finalizer", mdA["finalizers"].([]any)[0].(string), mdB["finalizers"].([]any)[0].(string))
	if len(lb) != 2 {
		t.Fatalf("labels %v", lb)
	}
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

func TestUnpackLeavesPlainObjects(t *testing.T) {
	u := decoded(t)
	want := u.DeepCopy()
	if err := Unpack(u); err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(u.Object, want.Object) {
		t.Fatal("Unpack changed an object that was not packed")
	}
	bad := &unstructured.Unstructured{Object: map[string]any{"kind": "X", Key: "{not json"}}
	if err := Unpack(bad); err == nil {
		t.Fatal("Unpack of a corrupt packed value: want an error")
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
	if _, ok := out.(*unstructured.Unstructured).Object[Key]; !ok {
		t.Fatal("a matched kind was not packed")
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
}

// store is a reader returning copies of packed objects, as a cache does.
type store struct {
	client.Reader
	objs []*unstructured.Unstructured
}

func (s store) Get(_ context.Context, _ client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	s.objs[0].DeepCopyInto(obj.(*unstructured.Unstructured))
	return nil
}

func (s store) List(_ context.Context, list client.ObjectList, _ ...client.ListOption) error {
	ul := list.(*unstructured.UnstructuredList)
	for _, o := range s.objs {
		ul.Items = append(ul.Items, *o.DeepCopy())
	}
	return nil
}

func TestReaderUnpacks(t *testing.T) {
	want := decoded(t)
	packed := want.DeepCopy()
	if err := Pack(packed); err != nil {
		t.Fatal(err)
	}
	r := Reader{Reader: store{objs: []*unstructured.Unstructured{packed, packed}}}

	got := &unstructured.Unstructured{}
	if err := r.Get(context.Background(), client.ObjectKey{Name: "db"}, got); err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(got.Object, want.Object) {
		t.Fatalf("Get returned %v, want %v", got.Object, want.Object)
	}
	list := &unstructured.UnstructuredList{}
	if err := r.List(context.Background(), list); err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		if !equality.Semantic.DeepEqual(list.Items[i].Object, want.Object) {
			t.Fatalf("List item %d is %v, want %v", i, list.Items[i].Object, want.Object)
		}
	}
	if _, ok := packed.Object[Key]; !ok {
		t.Fatal("reading unpacked the stored object itself")
	}
}
