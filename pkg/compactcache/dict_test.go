package compactcache

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// object is an object of kind with a spec of its own and, when conditions >
// 0, a status of that many conditions.
func object(kind string, i, conditions int) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": fmt.Sprintf("o-%d", i), "namespace": "ns", "creationTimestamp": "2026-11-26T18:00:00Z"},
		"spec":     map[string]any{"replicas": int64(i), "image": "registry.example.com/team/app:1." + fmt.Sprint(i), "size": strings.Repeat("x", 200)},
	}}
	u.SetGroupVersionKind(schema.GroupVersionKind{Group: "apps.cozystack.io", Version: "v1alpha1", Kind: kind})
	var conds []any
	for c := range conditions {
		conds = append(conds, map[string]any{"type": fmt.Sprintf("Condition%d", c), "status": "True", "reason": "Succeeded",
			"message": fmt.Sprintf("the object o-%d: %s", i, noise[c*64:(c+1)*64]), "observedGeneration": int64(1)})
	}
	if conditions > 0 {
		u.Object["status"] = map[string]any{"conditions": conds}
	}
	return u
}

// noise is text that does not repeat itself: what compresses it is a
// dictionary holding it.
var noise = func() string {
	var b strings.Builder
	x := uint32(1)
	for b.Len() < 64*64 {
		x = x*1664525 + 1013904223
		b.WriteByte("abcdefghijklmnopqrstuvwxyz0123456789"[x>>16%36])
	}
	return b.String()
}()

func roundTrip(t *testing.T, want *unstructured.Unstructured) string {
	t.Helper()
	o, err := Pack(want)
	if err != nil {
		t.Fatal(err)
	}
	u, err := o.Unpack()
	if err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(u.Object, want.Object) {
		t.Fatalf("round trip changed the object:\n got %#v\nwant %#v", u.Object, want.Object)
	}
	return o.Packed
}

func TestPackCompressesAgainstTheKindsDictionary(t *testing.T) {
	// Too short for a first dictionary: stored as JSON.
	small := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"a": "b"}}}
	small.SetGroupVersionKind(schema.GroupVersionKind{Group: "apps.cozystack.io", Version: "v1alpha1", Kind: "Compress"})
	small.SetName("s")
	if s := roundTrip(t, small); s[0] != '{' {
		t.Fatalf("a short first object was compressed: %q", s)
	}
	first := object("Compress", 1, 0)
	s1 := roundTrip(t, first)
	if s1[0] != compressed {
		t.Fatalf("the first long object was not compressed: %q", s1)
	}
	second := object("Compress", 2, 0)
	s2 := roundTrip(t, second)
	if len(s2) > 80 {
		t.Fatalf("an object much like the first takes %d bytes compressed", len(s2))
	}
	// A status the dictionary lacks: the kind's dictionary is made again,
	// from the first and this object, once.
	withStatus := object("Compress", 3, 6)
	s3 := roundTrip(t, withStatus)
	if s3[1] == s1[1] {
		t.Fatal("an object that compresses badly did not make a new dictionary")
	}
	s4 := roundTrip(t, object("Compress", 4, 6))
	if s4[1] != s3[1] || len(s4) > 100 {
		t.Fatalf("the next object with a status: dictionary %d (want %d), %d bytes", s4[1], s3[1], len(s4))
	}
	if s5 := roundTrip(t, object("Compress", 5, 60)); s5[1] != s4[1] {
		t.Fatal("a kind's dictionary was made a third time")
	}
	// Objects packed with the first dictionary still unpack.
	u, err := (&Object{TypeMeta: metav1.TypeMeta{Kind: "Compress"}, Packed: s2}).Unpack()
	if err != nil {
		t.Fatal(err)
	}
	if u.Object["spec"].(map[string]any)["replicas"] != int64(2) {
		t.Fatalf("unpacked with the first dictionary: %v", u.Object)
	}
}

func TestUnpackRejectsAnUnknownDictionary(t *testing.T) {
	if _, err := (&Object{Packed: string([]byte{compressed, 0xff, 0xff, 0x03, 1, 2})}).Unpack(); err == nil {
		t.Fatal("a value naming a dictionary that does not exist unpacked")
	}
	if _, err := (&Object{Packed: string([]byte{compressed})}).Unpack(); err == nil {
		t.Fatal("a value naming no dictionary unpacked")
	}
	if _, err := (&Object{Packed: "{not json"}).Unpack(); err == nil {
		t.Fatal("a corrupt packed value unpacked")
	}
}

// Informers pack objects of one kind from several goroutines, reconciles
// unpack them from others (go test -race).
func TestPackConcurrently(t *testing.T) {
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				roundTrip(t, object("Concurrent", g*100+i, i%3))
			}
		}()
	}
	wg.Wait()
}
