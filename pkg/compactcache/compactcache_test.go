package compactcache

import (
	"context"
	"runtime"
	"testing"
	"unsafe"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const instanceJSON = `{
  "apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Postgres",
  "metadata": {"name": "db", "namespace": "tenant-a", "labels": {"team": "a", "tier": "gold"}, "resourceVersion": "7",
               "annotations": {"note": "n"}, "finalizers": ["cozystack.io/f"], "generation": 2,
               "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": "u1", "controller": true}]},
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
	same("the label key", key(mdA["labels"].(map[string]any), "team"), key(mdB["labels"].(map[string]any), "team"))
	same("the label value", mdA["labels"].(map[string]any)["tier"].(string), mdB["labels"].(map[string]any)["tier"].(string))
	same("the namespace", mdA["namespace"].(string), mdB["namespace"].(string))
	same("the kind", a.Object["kind"].(string), b.Object["kind"].(string))
	refA := mdA["ownerReferences"].([]any)[0].(map[string]any)
	refB := mdB["ownerReferences"].([]any)[0].(map[string]any)
	same("the owner's kind", refA["kind"].(string), refB["kind"].(string))
	same("the finalizer", mdA["finalizers"].([]any)[0].(string), mdB["finalizers"].([]any)[0].(string))
	if len(lb) != 2 {
		t.Fatalf("labels %v", lb)
	}
}

func TestStringTableIsBounded(t *testing.T) {
	tab := newStringTable(4)
	first := tab.intern(string([]byte("a")))
	if got := tab.intern(string([]byte("a"))); unsafe.StringData(got) != unsafe.StringData(first) {
		t.Fatal("a string interned twice has two copies")
	}
	for _, s := range []string{"b", "c", "d", "e"} {
		tab.intern(s)
	}
	if n := len(tab.m); n != 1 {
		t.Fatalf("a full table of 4 given a fifth string holds %d strings, want 1 (started again)", n)
	}
	if got := tab.intern("a"); got != "a" || unsafe.StringData(got) == unsafe.StringData(first) {
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
