// Package ssa writes objects with server-side apply, one field manager per
// controller, and skips the write when nothing would change.
//
// A settled system must make no API writes. A plain server-side apply always
// costs a request, even when it changes nothing, so Apply first compares the
// desired object with the live one: when every field we set already has the
// value we want, and the set of fields we manage has not changed since our
// last apply, nothing is sent. The second half is tracked with a hash of the
// applied intent in an annotation, so that removing a field from the desired
// state (say, a label the definition no longer asks for) still triggers an
// apply, which then drops that field.
//
// Fields that other managers own (another controller's labels) are never in
// our intent, so server-side apply leaves them alone.
//
// An Applier may create absent objects with a plain create instead (see
// Applier.Creates): cheaper for the API server, and it never takes over an
// object the caller did not see.
//
// A few fields are first set by us and then owned by someone else at run time
// (a shard operator moving an object between controller shards through a
// label). We cannot leave such a field out of our intent once we have set it
// (server-side apply deletes a field its last applier stops applying), nor
// keep applying our first value (that reverts the other actor, forcibly, on
// every write). Such a field is applied with the live value (see
// LiveLabels): we then share its ownership with whoever moved it, never
// change it, and never write merely because it moved.
package ssa

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// AnnotationAppliedHash records the hash of the last applied intent of a
// field manager: <prefix>/applied-<manager>.
const AnnotationAppliedHashPrefix = "cozystack.io/applied-hash."

// Applier applies objects as one field manager.
type Applier struct {
	Client client.Client
	// FieldManager names the controller, e.g. "cozystack-helm".
	FieldManager string
	// Creates, when set, makes Apply create an absent object (live nil)
	// with a plain create instead of an apply, and is the uncached reader
	// Apply then needs. On a busy API server a create costs about a third
	// of an apply that creates (no apply patch parsed as YAML, no merge),
	// and it fails with AlreadyExists where an apply would take over an
	// object the caller did not see: a caller may then pass nil on a
	// cache miss without first asking the API server, and look only when
	// the create says the object exists.
	//
	// A create records its fields under an entry of operation Update, named
	// CreateManager(FieldManager); server-side apply removes a field only
	// when its last owner lets it go, so before the first apply to an
	// object that still has that entry, Apply makes the entry its apply
	// entry (reading the object's managed fields through Creates, since a
	// cache usually drops them). Its other Update entries (a patch of one
	// field) are left as they are.
	//
	// That hand-over is needed only for an apply that stops setting a field
	// the create set. A create therefore marks the object with the shape of
	// what it wrote (ShapeAnnotation: which fields, not their values; see
	// IntentShape), and an apply of the same shape leaves the create's entry
	// where it is and needs no read. It is sent as a JSON merge patch of
	// the fields that differ, under the create's manager, whose entry
	// holds the fields of that shape: the API server spends some 30% less
	// CPU on it than on an apply (an apply is sent instead when a
	// list differs, which an apply would merge and a patch replace, or the
	// intent sets a null). The first apply of another shape hands the entry
	// over; it does not apply the mark, so the mark goes with it. Creates
	// may implement CreateEntries to learn which objects have no create
	// entry left.
	Creates client.Reader
}

// CreateEntries is an optional interface of Applier.Creates: a reader that
// remembers which objects have no create entry left spares the read of the
// API server before each later apply to them (HandOvers is one).
type CreateEntries interface {
	// MayHaveCreateEntry says that the object at key may have a create
	// entry: Apply just created it, or it carries the create's mark.
	MayHaveCreateEntry(client.ObjectKey)
	// HasNoCreateEntry says that an apply to the object at key succeeded
	// after the hand-over: no create entry is left.
	HasNoCreateEntry(client.ObjectKey)
	// HandedOver says whether the object at key was told HasNoCreateEntry
	// and not MayHaveCreateEntry since: an apply to it without the create's
	// mark then hands nothing over and reads nothing first.
	HandedOver(client.ObjectKey) bool
}

// CreateManager is the field manager under which an Applier of field manager
// fieldManager creates objects (see Applier.Creates).
func CreateManager(fieldManager string) string { return fieldManager + "-create" }

// Result says what Apply did.
type Result int

const (
	// Unchanged: the live object already matched; nothing was sent.
	Unchanged Result = iota
	// Created: the object did not exist.
	Created
	// Updated: the desired state changed since the last apply and the live
	// object was brought to it.
	Updated
	// Corrected: the desired state did not change, but someone changed the
	// live object; our fields were put back.
	Corrected
)

func (r Result) String() string {
	return [...]string{"unchanged", "created", "updated", "corrected"}[r]
}

// HashAnnotation is the annotation key that carries this manager's hash.
func (a Applier) HashAnnotation() string { return AnnotationAppliedHashPrefix + a.FieldManager }

// AnnotationCreatedShapePrefix starts the annotation that marks an object a
// plain create of an Applier wrote (Applier.Creates) and whose create entry
// has not been handed over yet: <prefix><manager>, the IntentShape of what
// the create wrote.
const AnnotationCreatedShapePrefix = "cozystack.io/created-shape."

// ShapeAnnotation is the annotation key of this manager's create mark.
func (a Applier) ShapeAnnotation() string { return AnnotationCreatedShapePrefix + a.FieldManager }

// Option tunes one Apply.
type Option func(*options)

type options struct {
	liveLabels   []string
	precondition bool
}

// LiveLabels names labels whose desired value was copied from the live object
// because another actor owns them at run time. They are left out of the
// intent hash, so a change made by their owner never causes a write of ours,
// and an apply that carries one of them is sent with the live object's
// resourceVersion as a precondition: if the object moved on since it was read
// (say, the label was changed again), the API server answers Conflict
// instead of letting a stale value win, and the caller retries on a fresh
// read.
func LiveLabels(keys ...string) Option {
	return func(o *options) { o.liveLabels = append(o.liveLabels, keys...) }
}

// IfUnchanged sends the apply with the live object's resourceVersion as a
// precondition: it fails with Conflict when the object changed since live was
// read. Use it when the decision to write depended on what live looked like
// (taking over an object after checking who controls it).
func IfUnchanged() Option {
	return func(o *options) { o.precondition = true }
}

// Apply makes the live object match desired for the fields desired sets.
// live is the current object (nil when it does not exist), typically read from
// a cache; desired must carry apiVersion, kind, name and namespace. Apply adds
// the intent hash annotation to desired before sending it.
func (a Applier) Apply(ctx context.Context, desired, live *unstructured.Unstructured, opts ...Option) (Result, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	hash, err := IntentHash(withoutLabels(desired, o.liveLabels))
	if err != nil {
		return Unchanged, err
	}
	key := a.HashAnnotation()
	if live != nil && live.GetAnnotations()[key] == hash && ContainsObject(live.Object, withoutHash(desired, key).Object) {
		return Unchanged, nil
	}
	precondition := ""
	if live != nil && (o.precondition || carriesAny(live, o.liveLabels)) {
		precondition = live.GetResourceVersion()
	}
	ann := desired.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[key] = hash
	desired.SetAnnotations(ann)
	desired.SetManagedFields(nil)
	desired.SetResourceVersion("")
	entries, _ := a.Creates.(CreateEntries)
	objKey := client.ObjectKeyFromObject(desired)
	if live == nil && a.Creates != nil {
		shape, err := IntentShape(desired)
		if err != nil {
			return Unchanged, err
		}
		ann[a.ShapeAnnotation()] = shape
		desired.SetAnnotations(ann)
		if entries != nil {
			entries.MayHaveCreateEntry(objKey)
		}
		if err := a.Client.Create(ctx, desired, client.FieldOwner(CreateManager(a.FieldManager))); err != nil {
			return Unchanged, err
		}
		return Created, nil
	}
	handOver, patched := false, false
	if live != nil && a.Creates != nil {
		mark, marked := live.GetAnnotations()[a.ShapeAnnotation()]
		handOver = true
		switch {
		case marked:
			if entries != nil {
				entries.MayHaveCreateEntry(objKey) // read it past any cache
			}
			shape, err := IntentShape(desired)
			if err != nil {
				return Unchanged, err
			}
			handOver = mark != shape
		case entries != nil && entries.HandedOver(objKey):
			handOver = false
		}
		switch {
		case handOver:
			rv, err := a.upgradeCreated(ctx, desired, live, precondition)
			if err != nil {
				return Unchanged, err
			}
			precondition = rv
		case marked:
			var err error
			if patched, err = a.patchCreated(ctx, desired, live, precondition); err != nil {
				return Unchanged, err
			}
		}
	}
	if !patched {
		desired.SetResourceVersion(precondition)
		if err := a.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(desired), client.FieldOwner(a.FieldManager), client.ForceOwnership); err != nil {
			return Unchanged, err
		}
	}
	if handOver && entries != nil {
		entries.HasNoCreateEntry(objKey)
	}
	switch {
	case live == nil:
		return Created, nil
	case live.GetAnnotations()[key] == hash:
		return Corrected, nil
	}
	return Updated, nil
}

// upgradeCreated makes the create's managed-fields entry of an object this
// Applier created its apply entry, before the first apply (see
// Applier.Creates). The object is read uncached; nothing is written when it
// has no such entry. The patch carries the version read as a precondition.
// precondition is the version the caller's apply must find (empty: none); the
// returned one replaces it: the version the patch wrote when the caller's
// read was current, Conflict when the object had moved on since.
func (a Applier) upgradeCreated(ctx context.Context, desired, live *unstructured.Unstructured, precondition string) (string, error) {
	fresh, err := Get(ctx, a.Creates, desired)
	if err != nil {
		return "", err
	}
	if fresh == nil {
		return "", conflict(desired, "it was deleted since it was read")
	}
	creator := CreateManager(a.FieldManager)
	handing := func(err error) error {
		return fmt.Errorf("handing %s's fields of %s %s to %s: %w", creator, desired.GetKind(), desired.GetName(), a.FieldManager, err)
	}
	patch, err := HandOverPatch(fresh, a.FieldManager, TakeManagers(creator))
	if err != nil {
		return "", handing(err)
	}
	if patch == nil {
		return precondition, nil
	}
	if precondition != "" && fresh.GetResourceVersion() != precondition {
		return "", conflict(desired, "it changed since it was read")
	}
	if err := a.Client.Patch(ctx, fresh, client.RawPatch(types.JSONPatchType, patch)); err != nil {
		return "", handing(err)
	}
	if precondition != "" {
		precondition = fresh.GetResourceVersion()
	}
	return precondition, nil
}

// patchCreated writes desired to an object that still has the create's
// entry and the create's shape, when a JSON merge patch of the fields live
// does not hold yet does what the apply would (mergePatch). It is sent as
// the create's manager, whose entry holds the fields of that shape: the
// values it sets become that entry's, as they would become the apply's, and
// the first write of another shape hands the whole entry over, so a field
// the intent drops then is removed unless another manager owns it, as after
// the apply. The API server spends some 30% less CPU on it. It reports
// whether it wrote; desired is then the object as the API server returned
// it. The patch carries precondition (a resourceVersion) when it is not
// empty.
func (a Applier) patchCreated(ctx context.Context, desired, live *unstructured.Unstructured, precondition string) (bool, error) {
	patch, ok := mergePatch(live.Object, desired.Object)
	if !ok {
		return false, nil
	}
	if precondition != "" {
		if err := unstructured.SetNestedField(patch, precondition, "metadata", "resourceVersion"); err != nil {
			return false, err
		}
	}
	b, err := json.Marshal(patch)
	if err != nil {
		return false, fmt.Errorf("patching %s %s: %w", desired.GetKind(), desired.GetName(), err)
	}
	if err := a.Client.Patch(ctx, desired, client.RawPatch(types.MergePatchType, b), client.FieldOwner(CreateManager(a.FieldManager))); err != nil {
		return false, err
	}
	return true, nil
}

// mergePatch is the JSON merge patch that gives have every field of want
// that it does not hold with want's value, maps merged key by key as an
// apply merges them. ok is false when such a patch would not do what an
// apply of want does: when a list differs (an apply merges a keyed list, such
// as the owner references, with the items other managers set; a merge patch
// replaces it) or want sets a null where have differs (a null deletes in a
// merge patch).
func mergePatch(have, want map[string]any) (patch map[string]any, ok bool) {
	patch = map[string]any{}
	for k, w := range want {
		h, found := have[k]
		switch wv := w.(type) {
		case map[string]any:
			if hv, isMap := h.(map[string]any); isMap {
				sub, ok := mergePatch(hv, wv)
				if !ok {
					return nil, false
				}
				if len(sub) > 0 {
					patch[k] = sub
				}
				continue
			}
			if !plain(wv) {
				return nil, false
			}
			patch[k] = wv
		case []any:
			if !found || !reflect.DeepEqual(h, wv) {
				return nil, false
			}
		case nil:
			if !found || h != nil {
				return nil, false
			}
		default:
			if !found || !reflect.DeepEqual(h, wv) {
				patch[k] = wv
			}
		}
	}
	return patch, true
}

// plain reports whether v holds no list and no null: a merge patch sets it
// as an apply would on an object that has none of it.
func plain(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			if !plain(e) {
				return false
			}
		}
		return true
	case []any, nil:
		return false
	}
	return true
}

func conflict(u *unstructured.Unstructured, why string) error {
	gr := schema.GroupResource{Group: u.GroupVersionKind().Group, Resource: strings.ToLower(u.GetKind())}
	return apierrors.NewConflict(gr, u.GetName(), errors.New(why))
}

// Get reads the live object named like desired through reader, returning nil
// when it does not exist.
func Get(ctx context.Context, reader client.Reader, desired *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(desired.GroupVersionKind())
	err := reader.Get(ctx, client.ObjectKeyFromObject(desired), live)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s %s: %w", desired.GetKind(), client.ObjectKeyFromObject(desired), err)
	}
	return live, nil
}

// IntentHash hashes what a manager asks for, minus the hash annotation
// itself, so the same intent always hashes the same.
func IntentHash(desired *unstructured.Unstructured) (string, error) {
	b, err := json.Marshal(intent(desired, AnnotationAppliedHashPrefix)) // map keys are sorted by encoding/json
	if err != nil {
		return "", fmt.Errorf("hashing %s: %w", desired.GetName(), err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12]), nil
}

// IntentShape hashes which fields desired sets, not their values: the keys
// of its maps, the type of each value, and every list whole (the fields of a
// list's items depend on their values, through their keys), less the
// version, the managed fields and the create's own mark. Two intents of the
// same shape set the same fields (see Applier.Creates).
func IntentShape(desired *unstructured.Unstructured) (string, error) {
	h := sha256.New()
	if err := writeShape(h, intent(desired, AnnotationCreatedShapePrefix)); err != nil {
		return "", fmt.Errorf("the shape of %s: %w", desired.GetName(), err)
	}
	return hex.EncodeToString(h.Sum(nil)[:12]), nil
}

// intent is desired's object less what no intent asks for: its version, its
// managed fields, and the annotations whose keys extend prefix (the
// annotations dropped whole when none is left). It copies the maps it
// changes and shares the rest with desired: read it, never change it.
func intent(desired *unstructured.Unstructured, prefix string) map[string]any {
	obj := maps.Clone(desired.Object)
	meta, ok := obj["metadata"].(map[string]any)
	if !ok {
		return obj
	}
	meta = maps.Clone(meta)
	delete(meta, "resourceVersion")
	delete(meta, "managedFields")
	if ann, ok := meta["annotations"].(map[string]any); ok {
		ann = maps.Clone(ann)
		maps.DeleteFunc(ann, func(k string, _ any) bool { return len(k) > len(prefix) && strings.HasPrefix(k, prefix) })
		if len(ann) == 0 {
			delete(meta, "annotations")
		} else {
			meta["annotations"] = ann
		}
	}
	obj["metadata"] = meta
	return obj
}

// writeShape writes v's shape to w: a map as its sorted keys and their
// values' shapes, a list as its JSON, anything else as its type.
func writeShape(w io.Writer, v any) error {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		_, _ = io.WriteString(w, "{")
		for _, k := range keys {
			b, _ := json.Marshal(k) // a string always marshals
			_, _ = w.Write(b)
			_, _ = io.WriteString(w, ":")
			if err := writeShape(w, x[k]); err != nil {
				return err
			}
			_, _ = io.WriteString(w, ",")
		}
		_, _ = io.WriteString(w, "}")
		return nil
	case []any:
		b, err := json.Marshal(x)
		if err != nil {
			return err
		}
		_, _ = w.Write(b)
		return nil
	case nil:
		_, _ = io.WriteString(w, "null")
	case string:
		_, _ = io.WriteString(w, "s")
	case bool:
		_, _ = io.WriteString(w, "b")
	default:
		if _, ok := number(v); !ok {
			return fmt.Errorf("a value of type %T", v)
		}
		_, _ = io.WriteString(w, "n")
	}
	return nil
}

// withoutLabels returns u without the named labels (u itself when there are
// none to drop).
func withoutLabels(u *unstructured.Unstructured, keys []string) *unstructured.Unstructured {
	if !carriesAny(u, keys) {
		return u
	}
	c := u.DeepCopy()
	l := c.GetLabels()
	for _, k := range keys {
		delete(l, k)
	}
	c.SetLabels(l)
	return c
}

func carriesAny(u *unstructured.Unstructured, labelKeys []string) bool {
	l := u.GetLabels()
	for _, k := range labelKeys {
		if _, ok := l[k]; ok {
			return true
		}
	}
	return false
}

func withoutHash(u *unstructured.Unstructured, key string) *unstructured.Unstructured {
	c := u.DeepCopy()
	unstructured.RemoveNestedField(c.Object, "metadata", "annotations", key)
	return c
}

// ContainsObject is Contains for whole objects, with the two lists of
// metadata that server-side apply merges by key rather than replaces:
// metadata.ownerReferences (keyed by uid) and metadata.finalizers (a set).
// Another writer's owner reference or finalizer is not a difference, since an
// apply would leave it where it is; each wanted entry must be present, and an
// owner reference must hold the wanted fields.
func ContainsObject(have, want map[string]any) bool {
	wmeta, _ := want["metadata"].(map[string]any)
	hmeta, _ := have["metadata"].(map[string]any)
	if wmeta == nil {
		return Contains(have, want)
	}
	rest := make(map[string]any, len(want))
	for k, v := range want {
		rest[k] = v
	}
	meta := make(map[string]any, len(wmeta))
	for k, v := range wmeta {
		meta[k] = v
	}
	delete(meta, "ownerReferences")
	delete(meta, "finalizers")
	rest["metadata"] = meta
	if !Contains(have, rest) {
		return false
	}
	return containsKeyed(hmeta["ownerReferences"], wmeta["ownerReferences"], func(e any) any {
		m, _ := e.(map[string]any)
		return m["uid"]
	}) && containsKeyed(hmeta["finalizers"], wmeta["finalizers"], func(e any) any { return e })
}

// containsKeyed reports whether every element of the wanted list has an
// element of the same key in have that contains it, whatever the order and
// whatever else have holds.
func containsKeyed(have, want any, key func(any) any) bool {
	w, _ := want.([]any)
	h, _ := have.([]any)
	for _, we := range w {
		found := false
		for _, he := range h {
			if key(he) == key(we) && Contains(he, we) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// Contains reports whether every field set in want has the same value in
// have. Maps are compared key by key (have may hold more keys); lists are
// atomic and must be equal element by element (with the same rule inside
// each element); numbers compare by value whatever their Go type.
func Contains(have, want any) bool {
	switch w := want.(type) {
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			return false
		}
		for k, wv := range w {
			hv, ok := h[k]
			if !ok {
				if isEmpty(wv) {
					continue
				}
				return false
			}
			if !Contains(hv, wv) {
				return false
			}
		}
		return true
	case []any:
		h, ok := have.([]any)
		if !ok {
			return len(w) == 0 && have == nil
		}
		if len(h) != len(w) {
			return false
		}
		for i := range w {
			if !Contains(h[i], w[i]) {
				return false
			}
		}
		return true
	case nil:
		return have == nil
	default:
		if wn, ok := number(want); ok {
			hn, ok := number(have)
			return ok && hn == wn
		}
		return reflect.DeepEqual(have, want)
	}
}

// isEmpty reports values the API server drops or never stores (an empty map
// or list, or null), so their absence on the live object is not a difference.
func isEmpty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	return false
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int32:
		return float64(n), true
	case int64:
		return float64(n), true
	case float32:
		return float64(n), true
	case float64:
		return n, true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}
