package ssa

import (
	"context"
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// HandOvers is an Applier.Creates for objects of one kind that remembers,
// by namespace and name, which of them have no create entry left.
//
// Before the first apply of another shape than a plain create's, the
// Applier hands the create's fields to its apply entry, reading the object's
// managed fields past any cache (Reader). An object without the create's
// mark may still hold such an entry (made before a restart, or by a create
// whose mark someone removed), so without a record every apply to it would
// read it first. Once an apply has succeeded after the hand-over there is no
// create entry left: HandOvers records that (CreateEntries), and the
// Applier then applies such an object without the read. A create of the
// name (an object made anew), or the create's mark still on the object,
// forgets it; after a restart each object is read once, at its first apply
// of a new shape.
//
// Objects of different kinds that may share a namespace and name need a
// HandOvers each.
type HandOvers struct {
	// Reader reads the objects past any cache: the API server.
	Reader client.Reader
	done   sync.Map // client.ObjectKey -> struct{}
}

// NewHandOvers is a HandOvers reading through reader (the API server).
func NewHandOvers(reader client.Reader) *HandOvers { return &HandOvers{Reader: reader} }

var _ CreateEntries = (*HandOvers)(nil)

// Get reads through Reader.
func (h *HandOvers) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return h.Reader.Get(ctx, key, obj, opts...)
}

// List reads through Reader.
func (h *HandOvers) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return h.Reader.List(ctx, list, opts...)
}

// MayHaveCreateEntry implements CreateEntries.
func (h *HandOvers) MayHaveCreateEntry(key client.ObjectKey) { h.done.Delete(key) }

// HasNoCreateEntry implements CreateEntries.
func (h *HandOvers) HasNoCreateEntry(key client.ObjectKey) { h.done.Store(key, struct{}{}) }

// HandedOver implements CreateEntries.
func (h *HandOvers) HandedOver(key client.ObjectKey) bool {
	_, ok := h.done.Load(key)
	return ok
}

// Forget drops what is remembered of the object at key, once it is gone.
func (h *HandOvers) Forget(key client.ObjectKey) { h.done.Delete(key) }
