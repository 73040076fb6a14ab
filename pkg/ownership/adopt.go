package ownership

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Verdict is what a controller may do with the object at a derived name.
type Verdict int

const (
	// Absent: nothing has the name yet; create it.
	Absent Verdict = iota
	// Controlled: the owner already controls it; manage it.
	Controlled
	// Adopt: the owner did not create it but holds the proof that it may
	// take it over (see Claim); manage it from now on.
	Adopt
	// Foreign: it belongs to someone else; leave it untouched and report
	// the *NotOwnedError.
	Foreign
)

func (v Verdict) String() string {
	return [...]string{"absent", "controlled", "adopt", "foreign"}[v]
}

// Claim is what an owner asserts about the object at the name it derives.
type Claim struct {
	Owner Owner
	// AdoptUID is the metadata.uid of the one existing object the owner may
	// take over although it did not create it ("" means none). Taking over by
	// uid, not by name, means a proof written for one object can never hand
	// over another that later takes the same name.
	AdoptUID string
	// AdoptLabels must all be on the object, with these values, for it to be
	// adopted: they say which owner the object was written for.
	AdoptLabels map[string]string
	// Hint is appended to the refusal message: what the user can do to hand
	// the object over (for instance, the command that writes the proof).
	Hint string
}

// Decide says what the owner of claim may do with existing, the object that
// has the derived name (nil when there is none). It adopts only an object
// whose uid is the claim's AdoptUID, that carries every AdoptLabels entry,
// and that no controller holds: an object controlled by someone else is
// never taken, whatever the proof says. The error is non-nil exactly when
// the verdict is Foreign, and says why the object was not adopted.
func Decide(kind string, existing metav1.Object, claim Claim) (Verdict, error) {
	if existing == nil || reflect.ValueOf(existing).IsNil() {
		return Absent, nil
	}
	ref := metav1.GetControllerOfNoCopy(existing)
	if ref != nil && claim.Owner.Is(*ref) {
		return Controlled, nil
	}
	e := &NotOwnedError{
		Kind: kind, Namespace: existing.GetNamespace(), Name: existing.GetName(),
		OwnerKind: claim.Owner.GVK.Kind, OwnerName: claim.Owner.Name, Hint: claim.Hint,
	}
	if ref != nil {
		e.Controller = ref.Kind + " " + ref.Name
		if ref.UID != "" && string(ref.UID) == claim.Owner.UID {
			e.Controller = fmt.Sprintf("%s %s (apiVersion %s)", ref.Kind, ref.Name, ref.APIVersion)
			e.Mismatch = mismatch(*ref, claim.Owner)
		}
	}
	if claim.AdoptUID == "" {
		return Foreign, e
	}
	switch uid := string(existing.GetUID()); {
	case ref != nil:
		e.Refusal = "it has a controller, so the adoption proof does not apply"
	case uid != claim.AdoptUID:
		e.Refusal = fmt.Sprintf("the adoption proof names uid %s but this object's uid is %s", claim.AdoptUID, uid)
	default:
		if wrong := mismatchedLabels(existing.GetLabels(), claim.AdoptLabels); len(wrong) > 0 {
			e.Refusal = "its labels do not name this owner: " + strings.Join(wrong, ", ")
			return Foreign, e
		}
		return Adopt, nil
	}
	return Foreign, e
}

// mismatch says how ref, which carries owner's uid, fails to name owner.
func mismatch(ref metav1.OwnerReference, owner Owner) string {
	var wrong []string
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	switch {
	case err != nil:
		wrong = append(wrong, fmt.Sprintf("apiVersion %q cannot be parsed", ref.APIVersion))
	case gv.Group != owner.GVK.Group:
		wrong = append(wrong, fmt.Sprintf("API group %q (want %q)", gv.Group, owner.GVK.Group))
	}
	if ref.Kind != owner.GVK.Kind {
		wrong = append(wrong, fmt.Sprintf("kind %q (want %q)", ref.Kind, owner.GVK.Kind))
	}
	if ref.Name != owner.Name {
		wrong = append(wrong, fmt.Sprintf("name %q (want %q)", ref.Name, owner.Name))
	}
	return "its controller reference carries the uid of " + owner.GVK.Kind + " " + owner.Name +
		" but does not name the owner: " + strings.Join(wrong, ", ")
}

func mismatchedLabels(have, want map[string]string) []string {
	var out []string
	for k, v := range want {
		got, ok := have[k]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s is missing (want %q)", k, v))
		case got != v:
			out = append(out, fmt.Sprintf("%s is %q (want %q)", k, got, v))
		}
	}
	sort.Strings(out)
	return out
}
