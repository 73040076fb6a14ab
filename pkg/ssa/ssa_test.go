package ssa

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestContains(t *testing.T) {
	tests := []struct {
		name       string
		have, want any
		ok         bool
	}{
		{"equal scalars", "a", "a", true},
		{"different scalars", "a", "b", false},
		{"numbers across types", int64(3), float64(3), true},
		{"different numbers", int64(3), float64(3.5), false},
		{"extra keys in have are fine", map[string]any{"a": "1", "b": "2"}, map[string]any{"a": "1"}, true},
		{"missing key", map[string]any{"b": "2"}, map[string]any{"a": "1"}, false},
		{"empty map wanted and absent", map[string]any{}, map[string]any{"a": map[string]any{}}, true},
		{"nested difference", map[string]any{"a": map[string]any{"x": true}}, map[string]any{"a": map[string]any{"x": false}}, false},
		{"lists are atomic: extra element", []any{"a", "b"}, []any{"a"}, false},
		{"lists compare in order", []any{"b", "a"}, []any{"a", "b"}, false},
		{"list of maps with extra server fields", []any{map[string]any{"k": "v", "d": 1}}, []any{map[string]any{"k": "v"}}, true},
		{"type mismatch", "1", int64(1), false},
		{"null wanted", nil, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Contains(tt.have, tt.want); got != tt.ok {
				t.Fatalf("Contains(%v, %v) = %v, want %v", tt.have, tt.want, got, tt.ok)
			}
		})
	}
}

// TestContainsObject: the owner references and finalizers of metadata are
// merged by key on apply, so another writer's entries are no difference.
func TestContainsObject(t *testing.T) {
	ours := map[string]any{"apiVersion": "v1", "kind": "Widget", "name": "a", "uid": "u1", "controller": true}
	theirs := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "anchor", "uid": "u2"}
	object := func(meta map[string]any) map[string]any {
		return map[string]any{"kind": "ConfigMap", "metadata": meta, "data": map[string]any{"k": "v"}}
	}
	want := object(map[string]any{"name": "x", "ownerReferences": []any{ours}, "finalizers": []any{"ours"}})
	tests := []struct {
		name string
		have map[string]any
		ok   bool
	}{
		{"the same", object(map[string]any{"name": "x", "ownerReferences": []any{ours}, "finalizers": []any{"ours"}}), true},
		{"another owner too, before ours", object(map[string]any{"name": "x", "ownerReferences": []any{theirs, ours}, "finalizers": []any{"ours"}}), true},
		{"another finalizer too", object(map[string]any{"name": "x", "ownerReferences": []any{ours}, "finalizers": []any{"flux", "ours"}}), true},
		{"our owner reference gone", object(map[string]any{"name": "x", "ownerReferences": []any{theirs}, "finalizers": []any{"ours"}}), false},
		{"our owner reference no longer the controller", object(map[string]any{"name": "x", "ownerReferences": []any{
			map[string]any{"apiVersion": "v1", "kind": "Widget", "name": "a", "uid": "u1"}}, "finalizers": []any{"ours"}}), false},
		{"our finalizer gone", object(map[string]any{"name": "x", "ownerReferences": []any{ours}}), false},
		{"no metadata lists at all", object(map[string]any{"name": "x"}), false},
		{"another field differs", map[string]any{"kind": "ConfigMap", "metadata": map[string]any{"name": "x", "ownerReferences": []any{ours}, "finalizers": []any{"ours"}},
			"data": map[string]any{"k": "w"}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ContainsObject(tt.have, want); got != tt.ok {
				t.Fatalf("ContainsObject = %v, want %v", got, tt.ok)
			}
		})
	}
}

func obj(labels map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "x", "namespace": "y", "labels": labels},
		"data":     map[string]any{"k": "v"},
	}}
}

func TestIntentHash(t *testing.T) {
	a, err := IntentHash(obj(map[string]any{"a": "1"}))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := IntentHash(obj(map[string]any{"a": "1", "b": "2"}))
	if a == b {
		t.Fatal("different intents hash the same")
	}
	withHash := obj(map[string]any{"a": "1"})
	withHash.SetAnnotations(map[string]string{AnnotationAppliedHashPrefix + "m": "whatever"})
	withHash.SetResourceVersion("42")
	c, _ := IntentHash(withHash)
	if a != c {
		t.Fatal("the hash annotation or resourceVersion changed the intent hash")
	}
}

func TestIntentShape(t *testing.T) {
	base := func() *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "x", "namespace": "y",
				"labels":      map[string]any{"app": "a"},
				"annotations": map[string]any{AnnotationAppliedHashPrefix + "m": "h1"}},
			"spec": map[string]any{
				"chart":  map[string]any{"name": "c", "version": "1.0"},
				"values": map[string]any{"replicas": int64(2), "tls": true, "empty": map[string]any{}},
				"ports":  []any{map[string]any{"name": "http", "port": int64(80)}},
			},
		}}
	}
	with := func(edit func(o map[string]any)) *unstructured.Unstructured {
		u := base()
		edit(u.Object)
		return u
	}
	spec := func(o map[string]any) map[string]any { return o["spec"].(map[string]any) }
	values := func(o map[string]any) map[string]any { return spec(o)["values"].(map[string]any) }
	cases := []struct {
		name string
		u    *unstructured.Unstructured
		same bool
	}{
		{"the same object", base(), true},
		{"other values of the same fields", with(func(o map[string]any) {
			spec(o)["chart"] = map[string]any{"name": "d", "version": "2.0"}
			values(o)["replicas"] = 3.5
			values(o)["tls"] = false
			o["metadata"].(map[string]any)["labels"] = map[string]any{"app": "b"}
		}), true},
		{"another applied hash, a version, managed fields and a create mark", with(func(o map[string]any) {
			m := o["metadata"].(map[string]any)
			m["annotations"] = map[string]any{AnnotationAppliedHashPrefix + "m": "h2", AnnotationCreatedShapePrefix + "m": "s"}
			m["resourceVersion"] = "42"
			m["managedFields"] = []any{map[string]any{"manager": "m"}}
		}), true},
		{"a field less", with(func(o map[string]any) { delete(values(o), "tls") }), false},
		{"a field more", with(func(o map[string]any) { values(o)["extra"] = "x" }), false},
		{"a label more", with(func(o map[string]any) {
			o["metadata"].(map[string]any)["labels"] = map[string]any{"app": "a", "tier": "t"}
		}), false},
		{"an empty map filled", with(func(o map[string]any) { values(o)["empty"] = map[string]any{"k": "v"} }), false},
		{"a value of another type", with(func(o map[string]any) { values(o)["replicas"] = "2" }), false},
		{"a value made null", with(func(o map[string]any) { values(o)["tls"] = nil }), false},
		// A list's items name their fields through their values (a key, or
		// the item itself in a set): a list is its whole content.
		{"a list item's value", with(func(o map[string]any) {
			spec(o)["ports"] = []any{map[string]any{"name": "http", "port": int64(81)}}
		}), false},
		{"a list item's key", with(func(o map[string]any) {
			spec(o)["ports"] = []any{map[string]any{"name": "web", "port": int64(80)}}
		}), false},
	}
	want, err := IntentShape(base())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := IntentShape(tc.u)
			if err != nil {
				t.Fatal(err)
			}
			if (got == want) != tc.same {
				t.Fatalf("shape %s against %s: same = %v, want %v", got, want, got == want, tc.same)
			}
		})
	}
	if _, err := IntentShape(with(func(o map[string]any) { values(o)["bad"] = struct{}{} })); err == nil {
		t.Fatal("a value JSON cannot hold was given a shape")
	}
}

// recorder records the objects an Applier sends.
type recorder struct {
	client.Client
	sent []*unstructured.Unstructured
}

func (r *recorder) Apply(_ context.Context, obj runtime.ApplyConfiguration, _ ...client.ApplyOption) error {
	b, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(b); err != nil {
		return err
	}
	r.sent = append(r.sent, u)
	return nil
}

func TestApplyLiveLabels(t *testing.T) {
	const shard = "sharding.fluxcd.io/key"
	ctx := context.Background()
	desiredWith := func(labels map[string]any) *unstructured.Unstructured { return obj(labels) }

	rec := &recorder{}
	a := Applier{Client: rec, FieldManager: "m"}
	// Created with the definition's shard; the live object as the server
	// stored it.
	first := desiredWith(map[string]any{"app": "x", shard: "tenants"})
	if res, err := a.Apply(ctx, first, nil, LiveLabels(shard)); err != nil || res != Created {
		t.Fatalf("create: %v %v", res, err)
	}
	if rv := rec.sent[0].GetResourceVersion(); rv != "" {
		t.Fatalf("a create carries no precondition, got resourceVersion %q", rv)
	}
	live := rec.sent[0].DeepCopy()
	live.SetResourceVersion("7")

	// The shard operator moves it: the desired state follows the live value,
	// and that is no reason to write.
	live.SetLabels(map[string]string{"app": "x", shard: "shard3"})
	if res, err := a.Apply(ctx, desiredWith(map[string]any{"app": "x", shard: "shard3"}), live, LiveLabels(shard)); err != nil || res != Unchanged {
		t.Fatalf("after a move: %v %v, want unchanged", res, err)
	}
	// A real change is sent with the followed value and a precondition on
	// the version it was read from.
	if res, err := a.Apply(ctx, desiredWith(map[string]any{"app": "y", shard: "shard3"}), live, LiveLabels(shard)); err != nil || res != Updated {
		t.Fatalf("after a change: %v %v, want updated", res, err)
	}
	sent := rec.sent[len(rec.sent)-1]
	if sent.GetLabels()[shard] != "shard3" || sent.GetResourceVersion() != "7" {
		t.Fatalf("sent labels %v resourceVersion %q, want shard3 under precondition 7", sent.GetLabels(), sent.GetResourceVersion())
	}
	// Without followed labels on the live object there is no precondition.
	live2 := live.DeepCopy()
	live2.SetLabels(map[string]string{"app": "x"})
	if _, err := a.Apply(ctx, desiredWith(map[string]any{"app": "z"}), live2, LiveLabels(shard)); err != nil {
		t.Fatal(err)
	}
	if rv := rec.sent[len(rec.sent)-1].GetResourceVersion(); rv != "" {
		t.Fatalf("unexpected precondition %q", rv)
	}
	// IfUnchanged asks for one explicitly.
	if _, err := a.Apply(ctx, desiredWith(map[string]any{"app": "w"}), live2, IfUnchanged()); err != nil {
		t.Fatal(err)
	}
	if rv := rec.sent[len(rec.sent)-1].GetResourceVersion(); rv != "7" {
		t.Fatalf("IfUnchanged sent resourceVersion %q, want 7", rv)
	}
}

func TestMergePatch(t *testing.T) {
	have := map[string]any{
		"metadata": map[string]any{"name": "x", "labels": map[string]any{"app": "x", "theirs": "y"},
			"ownerReferences": []any{map[string]any{"uid": "1"}}},
		"spec": map[string]any{"chart": "a", "replicas": int64(1), "values": map[string]any{"k": "v"}, "gone": nil},
	}
	for _, tc := range []struct {
		name string
		want map[string]any
		// patch is the patch expected; nil when an apply must be sent.
		patch map[string]any
	}{
		{"nothing differs", map[string]any{"metadata": map[string]any{"name": "x"}, "spec": map[string]any{"chart": "a"}}, map[string]any{}},
		{"a value differs", map[string]any{"metadata": map[string]any{"name": "x", "labels": map[string]any{"app": "z"}}, "spec": map[string]any{"chart": "b", "replicas": int64(1)}},
			map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "z"}}, "spec": map[string]any{"chart": "b"}}},
		{"a field have lacks", map[string]any{"spec": map[string]any{"install": map[string]any{"timeout": "5m"}, "new": "1"}},
			map[string]any{"spec": map[string]any{"install": map[string]any{"timeout": "5m"}, "new": "1"}}},
		{"a scalar where have has a map", map[string]any{"spec": map[string]any{"values": "flat"}}, map[string]any{"spec": map[string]any{"values": "flat"}}},
		{"the same list", map[string]any{"metadata": map[string]any{"ownerReferences": []any{map[string]any{"uid": "1"}}}}, map[string]any{}},
		{"a list differs", map[string]any{"metadata": map[string]any{"ownerReferences": []any{map[string]any{"uid": "2"}}}}, nil},
		{"a list have lacks", map[string]any{"spec": map[string]any{"list": []any{"a"}}}, nil},
		{"a list in a map have lacks", map[string]any{"spec": map[string]any{"install": map[string]any{"l": []any{}}}}, nil},
		{"a null have holds too", map[string]any{"spec": map[string]any{"gone": nil}}, map[string]any{}},
		{"a null where have has a value", map[string]any{"spec": map[string]any{"chart": nil}}, nil},
		{"a null have lacks", map[string]any{"spec": map[string]any{"other": nil}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			patch, ok := mergePatch(have, tc.want)
			if ok != (tc.patch != nil) || !reflect.DeepEqual(patch, tc.patch) {
				t.Fatalf("mergePatch = %v, %v; want %v", patch, ok, tc.patch)
			}
		})
	}
}
