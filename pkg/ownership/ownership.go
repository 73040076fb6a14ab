// Package ownership guards objects we did not create.
//
// Our controllers derive the names of the objects they own (a HelmRelease
// named <prefix><instance>, a Gateway named after its TenantGateway). An
// object with such a name that is not controlled by the expected owner belongs
// to someone else: it is never overwritten, adopted or deleted. The guard
// returns a typed error that the caller turns into a status condition naming
// the object and what to do.
package ownership

import (
	"errors"
	"fmt"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// NotOwnedError says that Object exists but is not controlled by Owner.
type NotOwnedError struct {
	// Kind and Namespace/Name identify the existing object.
	Kind      string
	Namespace string
	Name      string
	// Controller describes the object's current controller, if any.
	Controller string
	// OwnerKind and OwnerName identify who expected to own it.
	OwnerKind string
	OwnerName string
}

func (e *NotOwnedError) Error() string {
	held := "has no controller owner"
	if e.Controller != "" {
		held = "is controlled by " + e.Controller
	}
	obj := e.Name
	if e.Namespace != "" {
		obj = e.Namespace + "/" + e.Name
	}
	return fmt.Sprintf("%s %s already exists and %s, so it was left untouched: delete or rename it, "+
		"or add a controller ownerReference to %s %s to let it be managed", e.Kind, obj, held, e.OwnerKind, e.OwnerName)
}

// IsNotOwned reports whether err is (or wraps) a *NotOwnedError.
func IsNotOwned(err error) bool {
	var e *NotOwnedError
	return errors.As(err, &e)
}

// Owner identifies the expected controller of an object.
type Owner struct {
	GVK  schema.GroupVersionKind
	Name string
	UID  string
}

// Check returns nil when existing is nil (nothing there yet) or controlled by
// owner, and a *NotOwnedError otherwise. kind names existing's kind for the
// message.
func Check(kind string, existing metav1.Object, owner Owner) error {
	if existing == nil || reflect.ValueOf(existing).IsNil() {
		return nil
	}
	ref := metav1.GetControllerOfNoCopy(existing)
	if ref != nil && string(ref.UID) == owner.UID {
		return nil
	}
	e := &NotOwnedError{
		Kind: kind, Namespace: existing.GetNamespace(), Name: existing.GetName(),
		OwnerKind: owner.GVK.Kind, OwnerName: owner.Name,
	}
	if ref != nil {
		e.Controller = ref.Kind + " " + ref.Name
	}
	return e
}

// ControllerRef returns the controller ownerReference that marks an object as
// owned by owner; garbage collection deletes the object with its owner.
func ControllerRef(owner Owner) metav1.OwnerReference {
	t := true
	return metav1.OwnerReference{
		APIVersion:         owner.GVK.GroupVersion().String(),
		Kind:               owner.GVK.Kind,
		Name:               owner.Name,
		UID:                types.UID(owner.UID),
		Controller:         &t,
		BlockOwnerDeletion: &t,
	}
}
