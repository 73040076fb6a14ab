// Package ownerref decides whether an owner reference names an object: the
// CLI's copy of the rule the controllers follow (pkg/ownership, Owner.Is),
// which this module does not import.
package ownerref

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Points reports whether ref points at the object of group and kind gvk
// named name: the API group parsed from its apiVersion (the version may
// differ) and the kind and name compared exactly. The uid is not looked at.
func Points(ref metav1.OwnerReference, gvk schema.GroupVersionKind, name string) bool {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	return err == nil && gv.Group == gvk.Group && ref.Kind == gvk.Kind && ref.Name == name
}

// Names reports whether ref names the object of group and kind gvk, name and
// uid: Points and the same, non-empty uid. A reference that only carries the
// uid (under another group, kind or name) does not name it.
func Names(ref metav1.OwnerReference, gvk schema.GroupVersionKind, name string, uid types.UID) bool {
	return uid != "" && ref.UID == uid && Points(ref, gvk, name)
}

// IsController reports whether ref is a controller reference.
func IsController(ref metav1.OwnerReference) bool {
	return ref.Controller != nil && *ref.Controller
}
