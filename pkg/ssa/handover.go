package ssa

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/csaupgrade"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// HandOverPolicy says which fields other managers of an object hand over to
// a field manager, before or after its apply. Server-side apply removes a
// field only when its last owner lets it go: a field the manager stops
// applying stays for as long as a former writer still owns it too.
type HandOverPolicy struct {
	managers    []string
	keep        []fieldpath.Path
	subresource string
}

// TakeManagers hands over every field the named managers own through full
// updates of the main resource (operation Update; OfSubresource for
// another), and removes their entries: the apply that follows alone decides those fields (client-go's
// csaupgrade). For an object someone else created and we now apply whole.
func TakeManagers(names ...string) HandOverPolicy { return HandOverPolicy{managers: names} }

// TakeOwnFields hands over, from every entry of a full update of the main
// resource, the fields the manager's own apply entry already owns, except
// those under keep; an entry left with nothing is removed. Fields the
// manager does not apply stay with their writers. For an object adopted
// from a writer that also sets fields we never set.
func TakeOwnFields(keep ...fieldpath.Path) HandOverPolicy {
	return HandOverPolicy{keep: keep}
}

// OfSubresource is p for the entries of a subresource (TakeManagers only):
// "status" takes what former writers of the status own.
func (p HandOverPolicy) OfSubresource(sub string) HandOverPolicy {
	p.subresource = sub
	return p
}

// LabelPaths are the field paths of the labels named.
func LabelPaths(labels ...string) []fieldpath.Path {
	out := make([]fieldpath.Path, 0, len(labels))
	for _, l := range labels {
		out = append(out, fieldpath.MakePathOrDie("metadata", "labels", l))
	}
	return out
}

// HandOver returns obj's managed-fields entries after the hand-over of
// policy to manager, and whether they changed. Pure.
func HandOver(obj *unstructured.Unstructured, manager string, policy HandOverPolicy) ([]metav1.ManagedFieldsEntry, bool, error) {
	before := obj.GetManagedFields()
	if len(policy.managers) > 0 {
		c := obj.DeepCopy()
		if err := csaupgrade.UpgradeManagedFields(c, sets.New(policy.managers...), manager, csaupgrade.Subresource(policy.subresource)); err != nil {
			return nil, false, err
		}
		after := c.GetManagedFields()
		return after, !reflect.DeepEqual(before, after), nil
	}
	return takeOwnFields(before, manager, policy.keep)
}

// HandOverPatch is the JSON patch that makes obj's managed fields what
// HandOver returns, nil when nothing changes. It replaces only
// metadata.managedFields, and carries the version read (a changed object
// is a Conflict).
func HandOverPatch(obj *unstructured.Unstructured, manager string, policy HandOverPolicy) ([]byte, error) {
	entries, changed, err := HandOver(obj, manager, policy)
	if err != nil || !changed {
		return nil, err
	}
	return json.Marshal([]map[string]any{
		{"op": "replace", "path": "/metadata/managedFields", "value": entries},
		// replace, not test: the API server's storage refuses a changed
		// object with a Conflict, not an invalid patch.
		{"op": "replace", "path": "/metadata/resourceVersion", "value": obj.GetResourceVersion()},
	})
}

// takeOwnFields is TakeOwnFields: the set difference of each full-update
// entry and the manager's apply entry (less keep).
func takeOwnFields(entries []metav1.ManagedFieldsEntry, manager string, keep []fieldpath.Path) ([]metav1.ManagedFieldsEntry, bool, error) {
	var ours *fieldpath.Set
	for _, e := range entries {
		if e.Manager == manager && e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == "" && e.FieldsV1 != nil {
			ours = &fieldpath.Set{}
			if err := ours.FromJSON(bytes.NewReader(e.FieldsV1.Raw)); err != nil {
				return nil, false, fmt.Errorf("reading the fields of %s: %w", manager, err)
			}
		}
	}
	if ours == nil {
		return entries, false, nil
	}
	take := ours.Difference(fieldpath.NewSet(keep...))

	out := make([]metav1.ManagedFieldsEntry, 0, len(entries))
	changed := false
	for _, e := range entries {
		if e.Operation != metav1.ManagedFieldsOperationUpdate || e.Subresource != "" || e.FieldsV1 == nil {
			out = append(out, e)
			continue
		}
		theirs := &fieldpath.Set{}
		if err := theirs.FromJSON(bytes.NewReader(e.FieldsV1.Raw)); err != nil {
			return nil, false, fmt.Errorf("reading the fields of %s: %w", e.Manager, err)
		}
		left := theirs.Difference(take)
		if left.Equals(theirs) {
			out = append(out, e)
			continue
		}
		changed = true
		if left.Empty() {
			continue
		}
		raw, err := left.ToJSON()
		if err != nil {
			return nil, false, err
		}
		e.FieldsV1 = &metav1.FieldsV1{Raw: raw}
		out = append(out, e)
	}
	return out, changed, nil
}
