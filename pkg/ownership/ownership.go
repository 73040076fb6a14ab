// Package ownership guards objects we did not create.
//
// Our controllers derive the names of the objects they own (a HelmRelease
// named <prefix><instance>, a Gateway named after its TenantGateway). An
// object with such a name that is not controlled by the expected owner belongs
// to someone else: it is never overwritten or deleted, and adopted only when
// the owner holds explicit proof naming that very object (Decide, Claim). The
// guard returns a typed error that the caller turns into a status condition
// naming the object and what to do.
package ownership

import (
	"errors"
	"fmt"

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
	// Mismatch says how a controller reference that carries the owner's uid
	// fails to name the owner (another API group, kind or name); "" when the
	// controller, if any, has another uid.
	Mismatch string
	// Refusal says why an adoption proof was not honoured ("" when there
	// was none).
	Refusal string
	// Hint is the caller's advice on handing the object over, appended to
	// the message.
	Hint string
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
	msg := fmt.Sprintf("%s %s already exists and %s, so it was left untouched", e.Kind, obj, held)
	if e.Mismatch != "" {
		msg += " (" + e.Mismatch + ")"
	}
	if e.Refusal != "" {
		msg += " (not adopted: " + e.Refusal + ")"
	}
	msg += fmt.Sprintf(": delete or rename it, or add a controller ownerReference to %s %s to let it be managed", e.OwnerKind, e.OwnerName)
	if e.Hint != "" {
		msg += "; " + e.Hint
	}
	return msg
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

// Is reports whether ref names owner: the same API group (parsed from
// apiVersion; the version may differ, as an owner is served in several), kind,
// name and uid. The uid alone is not enough: anyone who can write an object
// can copy an owner's uid into a reference under another apiVersion, kind or
// name, which no garbage collector and no reader of the reference would take
// for that owner.
func (o Owner) Is(ref metav1.OwnerReference) bool {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	return err == nil && ref.UID != "" && string(ref.UID) == o.UID &&
		gv.Group == o.GVK.Group && ref.Kind == o.GVK.Kind && ref.Name == o.Name
}

// IsControlledBy reports whether obj's controller reference names owner (Is).
func IsControlledBy(obj metav1.Object, owner Owner) bool {
	ref := metav1.GetControllerOfNoCopy(obj)
	return ref != nil && owner.Is(*ref)
}

// Check returns nil when existing is nil (nothing there yet) or controlled by
// owner, and a *NotOwnedError otherwise. kind names existing's kind for the
// message. It is Decide without an adoption proof.
func Check(kind string, existing metav1.Object, owner Owner) error {
	_, err := Decide(kind, existing, Claim{Owner: owner})
	return err
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
