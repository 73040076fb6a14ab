package instance

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestBehindOwnWrite(t *testing.T) {
	r := &Reconciler{}
	inst := func(rv string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetKind("Widget")
		u.SetNamespace("t")
		u.SetName("a")
		u.SetResourceVersion(rv)
		return u
	}
	if r.behindOwnWrite(inst("5")) {
		t.Fatal("no write yet: nothing to wait for")
	}
	r.written.Wrote(writtenKeyOf(inst("5")), "5", struct{}{}) // a status write replaced version 5
	if !r.behindOwnWrite(inst("5")) {
		t.Fatal("the cache still shows the replaced version: it is behind")
	}
	if r.behindOwnWrite(inst("6")) {
		t.Fatal("a newer version: not behind")
	}
	if r.behindOwnWrite(inst("5")) {
		t.Fatal("the wait ended with the newer version; it is not resumed")
	}
}
