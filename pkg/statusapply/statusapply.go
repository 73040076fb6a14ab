// Package statusapply is the one way a controller writes status: server-side
// apply of the status subresource as the controller's field manager,
// carrying only the part of the status that controller owns, and nothing at
// all when that part is already as desired. A controller that owns the whole
// status may write it as a merge patch of what differs instead
// (Writer.Patch), which costs the API server less.
//
// A controller declares its part (Part): the conditions it owns, every one of
// them every time (server-side apply removes a type the manager applied
// before and leaves out now), and its other status fields by JSON name. Two
// controllers that write conditions of the same object (the gateway family
// on a TenantGateway) never overwrite each other's: each applies its own
// types, and the conditions list is a map keyed by type. A controller that
// owns the whole status (appdef on an ApplicationDefinition, the backends on
// their instances) declares every field of it.
//
// Its own write is read past a cache that has not caught up with it yet
// (pkg/ownwrite): nothing is written or told twice. After a write the
// controller is told which conditions changed (Writer.Changed), to record
// its events (pkg/record).
package statusapply

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/cozyplane/cozyplane/pkg/conditions"
	"github.com/cozyplane/cozyplane/pkg/ownwrite"
	"github.com/cozyplane/cozyplane/pkg/ssa"
)

// Part is the part of an object's status one controller owns, as it should
// be.
type Part struct {
	// Conditions are every condition type the controller owns, with their
	// observedGeneration and lastTransitionTime set (Stamp, or the helpers
	// of pkg/conditions).
	Conditions []metav1.Condition
	// AllConditions says the controller owns every condition of the status:
	// a condition of another type in the live status is out of date.
	AllConditions bool
	// Absent are condition types the controller owns that are left out of
	// Conditions when they do not hold (Reconciling and Stalled, present
	// only while True): a live condition of such a type is out of date, and
	// the apply, which leaves it out, removes it.
	Absent []string
	// Fields are the other status fields the controller owns, by JSON name,
	// in unstructured form (ToFields); a nil value is a field owned and
	// absent. An empty value (0, "", an empty list or map) is the same as
	// an absent one.
	Fields map[string]any
}

// Writer writes one controller's part of status.
type Writer struct {
	// Client writes to the API server; its scheme names a typed object's
	// kind.
	Client       client.Client
	FieldManager string
	// Changed, when set, is called after each write with the conditions
	// before it (what the controller last wrote when the cache has not
	// caught up with it yet) and as written: the controller tells the
	// transitions it cares about as events.
	Changed func(obj client.Object, have, written []metav1.Condition)
	// Precondition sends the object's resourceVersion with the apply: a
	// status decided on a version someone has changed since is refused
	// with a Conflict.
	Precondition bool
	// Held, when set, is called with obj after a write during which a
	// watch event of obj was held (Echo) that showed another version than
	// the write's: the caller enqueues it, as the event did not.
	Held func(obj client.Object)
	// Patch writes a part that holds every condition (AllConditions) as a
	// JSON merge patch of what differs from the status read (PatchOf),
	// sent as FieldManager at the version read, so that a status decided
	// on a version someone has changed since is refused with a Conflict,
	// Precondition or not. It is for a controller that owns the whole
	// status (the backends on their instances): the API server merges no
	// apply configuration, and spends less CPU on the write (see
	// docs/performance.md). The manager's entry is then an update of the
	// status subresource; a condition or field the part leaves out is
	// removed by a null in the patch, whoever owned it. A part without
	// AllConditions is applied.
	Patch bool
}

// Write brings the part of obj's status this controller owns to part.
// status is obj's status as read (Of), the cache's copy. It reports whether
// it wrote; an object deleted meanwhile is not an error.
func (w Writer) Write(ctx context.Context, obj client.Object, status map[string]any, part Part) (bool, error) {
	gvk, err := w.kind(obj)
	if err != nil {
		return false, err
	}
	live := Conditions(status)
	key := keyOf(w.FieldManager, gvk, obj)
	if UpToDate(live, status, part) {
		// Nothing to write. A write remembered for the object is kept
		// while the cache has not caught up with it and forgotten once it
		// has: what a controller remembers of its writes does not grow
		// with the objects it settled.
		written.Behind(key, obj.GetResourceVersion())
		return false, nil
	}
	print := fingerprint(part, obj.GetGeneration())
	have := live
	if last, behind := written.Behind(key, obj.GetResourceVersion()); behind {
		if last.fingerprint == print {
			// The cache has not caught up with this controller's own
			// write over this very version: writing again would change
			// nothing. The write's watch event brings the next reconcile.
			return false, nil
		}
		// What was written, not the stale cache, is what this change is
		// told against: a transition is never told twice.
		have = last.conditions
	}
	patching := w.Patch && part.AllConditions
	send := func() (*unstructured.Unstructured, error) { return w.apply(ctx, gvk, obj, part) }
	if patching {
		diff, err := PatchOf(status, part)
		if err != nil {
			return false, err
		}
		if len(diff) == 0 {
			return false, nil // nothing differs but what UpToDate overlooks
		}
		send = func() (*unstructured.Unstructured, error) { return w.patch(ctx, gvk, obj, diff) }
	}
	written.Writing(key)
	answer, err := send()
	if err != nil {
		w.held(obj, written.Unsent(key))
	}
	if apierrors.IsNotFound(err) {
		return false, nil // deleted meanwhile: nothing left to report on
	}
	if err != nil {
		return false, fmt.Errorf("writing the status of %s %s: %w", gvk.Kind, client.ObjectKeyFromObject(obj), err)
	}
	// answer is the object as the API server answered: the version the
	// write made, which a cache showing another writer's version in between
	// has not reached yet either.
	w.held(obj, written.Wrote(key, obj.GetResourceVersion(), answer.GetResourceVersion(), writtenPart{fingerprint: print, conditions: part.Conditions}))
	if w.Changed != nil {
		w.Changed(obj, have, part.Conditions)
	}
	if part.AllConditions && !patching {
		if err := w.takeStatus(ctx, answer); err != nil {
			return true, err
		}
	}
	return true, nil
}

// apply sends part as a server-side apply of obj's status and returns the
// object as the API server answered.
func (w Writer) apply(ctx context.Context, gvk schema.GroupVersionKind, obj client.Object, part Part) (*unstructured.Unstructured, error) {
	apply, err := applied(gvk, obj, part)
	if err != nil {
		return nil, err
	}
	if w.Precondition {
		apply.SetResourceVersion(obj.GetResourceVersion())
	}
	return apply, w.Client.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(apply),
		client.FieldOwner(w.FieldManager), client.ForceOwnership)
}

// patch sends diff, a merge patch of obj's status (PatchOf), at obj's
// version, and returns the object as the API server answered.
func (w Writer) patch(ctx context.Context, gvk schema.GroupVersionKind, obj client.Object, diff map[string]any) (*unstructured.Unstructured, error) {
	body, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": obj.GetResourceVersion()},
		"status":   diff,
	})
	if err != nil {
		return nil, err
	}
	answer := &unstructured.Unstructured{}
	answer.SetGroupVersionKind(gvk)
	answer.SetNamespace(obj.GetNamespace())
	answer.SetName(obj.GetName())
	return answer, w.Client.Status().Patch(ctx, answer, client.RawPatch(types.MergePatchType, body), client.FieldOwner(w.FieldManager))
}

// PatchOf is the JSON merge patch of a status that brings status, as read,
// to part, which holds every condition: the conditions list whole when it
// differs, each owned field that differs (a map key by key, with a null for
// a key the part leaves out), and nothing of a field the part does not own.
// Absent and empty are the same, as in UpToDate. Pure.
func PatchOf(status map[string]any, part Part) (map[string]any, error) {
	patch := map[string]any{}
	list, err := conditionList(part.Conditions)
	if err != nil {
		return nil, err
	}
	if have := status["conditions"]; !(empty(have) && len(list) == 0) && !equality.Semantic.DeepEqual(have, list) {
		if len(list) == 0 {
			patch["conditions"] = nil
		} else {
			patch["conditions"] = list
		}
	}
	for k, want := range part.Fields {
		if v, differs := patchValue(status[k], want); differs {
			patch[k] = v
		}
	}
	return patch, nil
}

// patchValue is the merge patch value that turns have into want, and
// whether one is needed: null for an empty want, maps key by key, anything
// else whole.
func patchValue(have, want any) (any, bool) {
	switch {
	case empty(have) && empty(want):
		return nil, false
	case empty(want):
		return nil, true
	}
	hm, haveMap := have.(map[string]any)
	wm, wantMap := want.(map[string]any)
	if !haveMap || !wantMap {
		return want, !equality.Semantic.DeepEqual(have, want)
	}
	sub := map[string]any{}
	for k, w := range wm {
		if v, differs := patchValue(hm[k], w); differs {
			sub[k] = v
		}
	}
	for k := range hm {
		if _, kept := wm[k]; !kept {
			sub[k] = nil
		}
	}
	return sub, len(sub) > 0
}

// takeStatus hands the status fields that earlier writers of the whole
// status own through updates (this controller's own former updates and
// merge patches, an administrator's edit) over to the field manager
// (ssa.TakeManagers): server-side apply removes a condition or field the
// manager stops applying only once nobody else owns it. written is the
// object the apply returned; nothing is sent when it has no such entry. The
// patch changes only metadata.managedFields; its event brings the reconcile
// that applies the part again, now alone.
func (w Writer) takeStatus(ctx context.Context, written *unstructured.Unstructured) error {
	var former []string
	for _, e := range written.GetManagedFields() {
		if e.Subresource == "status" && e.Operation == metav1.ManagedFieldsOperationUpdate {
			former = append(former, e.Manager)
		}
	}
	if len(former) == 0 {
		return nil
	}
	patch, err := ssa.HandOverPatch(written, w.FieldManager, ssa.TakeManagers(former...).OfSubresource("status"))
	if err != nil || patch == nil {
		return err
	}
	if err := w.Client.Patch(ctx, written, client.RawPatch(types.JSONPatchType, patch)); err != nil {
		return client.IgnoreNotFound(err)
	}
	return nil
}

// held calls Held with obj when an event held during its write must be
// enqueued.
func (w Writer) held(obj client.Object, enqueue bool) {
	if enqueue && w.Held != nil {
		w.Held(obj)
	}
}

// Behind reports whether obj, as the cache shows it, is older than this
// controller's last status write (the version it replaced, or one before the
// version it made): the cache has not caught up with that write yet. Any
// other version forgets the write.
func (w Writer) Behind(obj client.Object) bool { return w.behind(obj, false) }

// Await is Behind for a caller that, finding the cache behind, leaves obj
// for the write's own watch event to bring back: that event is then no echo
// (Echo).
func (w Writer) Await(obj client.Object) bool { return w.behind(obj, true) }

func (w Writer) behind(obj client.Object, await bool) bool {
	gvk, err := w.kind(obj)
	if err != nil {
		return false
	}
	key := keyOf(w.FieldManager, gvk, obj)
	if await {
		_, behind := written.Await(key, obj.GetResourceVersion())
		return behind
	}
	_, behind := written.Behind(key, obj.GetResourceVersion())
	return behind
}

// Echo tells the writer that the cache now shows obj, of kind gvk, at its
// resourceVersion, and reports whether that is the version this
// controller's last status write made, which no caller awaits (Await): the
// event is the write's own echo, and the reconcile that wrote it acted on
// everything it shows. A write that version catches up with is forgotten at
// once, not at the object's next reconcile, which may not come for hours.
// For a watch's event handler (dynamicwatch.Options.Echo), which the
// cache's store has been updated for; it reads nothing but obj's name and
// version.
func (w Writer) Echo(gvk schema.GroupVersionKind, obj client.Object) bool {
	return written.Echo(keyOf(w.FieldManager, gvk, obj), obj.GetResourceVersion())
}

// kind is obj's kind: an unstructured object's own, a typed object's from
// the client's scheme.
func (w Writer) kind(obj client.Object) (schema.GroupVersionKind, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok && !u.GroupVersionKind().Empty() {
		return u.GroupVersionKind(), nil
	}
	return apiutil.GVKForObject(obj, w.Client.Scheme())
}

// Forget drops what is remembered of this controller's writes of an object
// that is gone.
func (w Writer) Forget(gvk schema.GroupVersionKind, key client.ObjectKey) {
	written.Forget(writeKey{w.FieldManager, gvk.GroupKind(), key.Namespace, key.Name})
}

// applied is the apply request of part: the object's identity and the owned
// status fields, nothing else.
func applied(gvk schema.GroupVersionKind, obj client.Object, part Part) (*unstructured.Unstructured, error) {
	status := map[string]any{}
	list, err := conditionList(part.Conditions)
	if err != nil {
		return nil, err
	}
	status["conditions"] = list
	for k, v := range part.Fields {
		if v != nil {
			status[k] = v
		}
	}
	u := &unstructured.Unstructured{Object: map[string]any{"status": status}}
	u.SetGroupVersionKind(gvk)
	u.SetName(obj.GetName())
	u.SetNamespace(obj.GetNamespace())
	return u, nil
}

// conditionList is conditions in unstructured form.
func conditionList(conditions []metav1.Condition) ([]any, error) {
	list := make([]any, 0, len(conditions))
	for i := range conditions {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&conditions[i])
		if err != nil {
			return nil, err
		}
		list = append(list, m)
	}
	return list, nil
}

// written is each controller's last status write of each object
// (pkg/ownwrite), by field manager, kind and name.
var written ownwrite.Writes[writeKey, writtenPart]

type writeKey struct {
	manager         string
	kind            schema.GroupKind
	namespace, name string
}

func keyOf(manager string, gvk schema.GroupVersionKind, obj client.Object) writeKey {
	return writeKey{manager, gvk.GroupKind(), obj.GetNamespace(), obj.GetName()}
}

// writtenPart is a part as written: its fingerprint and conditions.
type writtenPart struct {
	fingerprint [sha256.Size]byte
	conditions  []metav1.Condition
}

// fingerprint identifies part at generation, transition times aside: a
// hash, a few dozen bytes whatever the part's size (a TenantGateway's
// listeners make some kilobytes of it).
func fingerprint(part Part, generation int64) [sha256.Size]byte {
	cs := make([]metav1.Condition, len(part.Conditions))
	for i, c := range part.Conditions {
		c.LastTransitionTime = metav1.Time{}
		cs[i] = c
	}
	b, _ := json.Marshal(struct {
		C []metav1.Condition
		A bool
		F map[string]any
		G int64
	}{cs, part.AllConditions, part.Fields, generation})
	return sha256.Sum256(b)
}

// UpToDate reports whether the live status (its conditions parsed as live)
// already carries part: each condition with the same status, reason,
// message and observedGeneration (transition times aside), no other
// condition when part has them all, and each owned field. Pure.
func UpToDate(live []metav1.Condition, status map[string]any, part Part) bool {
	for _, c := range part.Conditions {
		old := meta.FindStatusCondition(live, c.Type)
		if old == nil || old.Status != c.Status || old.Reason != c.Reason || old.Message != c.Message ||
			old.ObservedGeneration != c.ObservedGeneration {
			return false
		}
	}
	for _, t := range part.Absent {
		if meta.FindStatusCondition(live, t) != nil && meta.FindStatusCondition(part.Conditions, t) == nil {
			return false
		}
	}
	if part.AllConditions {
		for _, c := range live {
			if meta.FindStatusCondition(part.Conditions, c.Type) == nil {
				return false
			}
		}
	}
	for k, want := range part.Fields {
		have := status[k]
		if empty(have) && empty(want) {
			continue
		}
		if !equality.Semantic.DeepEqual(have, want) {
			return false
		}
	}
	return true
}

// empty reports whether an unstructured value is absent or its type's zero.
func empty(v any) bool {
	if v == nil {
		return true
	}
	r := reflect.ValueOf(v)
	switch r.Kind() {
	case reflect.Slice, reflect.Map:
		return r.Len() == 0
	default:
		return r.IsZero()
	}
}

// Of is obj's status in unstructured form: an unstructured object's own map
// (not copied), a typed object's status converted. Nil when it has none.
func Of(obj client.Object) map[string]any {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		m, _, _ := unstructured.NestedMap(u.Object, "status")
		return m
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil
	}
	st, _ := m["status"].(map[string]any)
	return st
}

// Conditions parses status.conditions; entries that are not conditions are
// left out.
func Conditions(status map[string]any) []metav1.Condition {
	list, _ := status["conditions"].([]any)
	out := make([]metav1.Condition, 0, len(list))
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		var c metav1.Condition
		if runtime.DefaultUnstructuredConverter.FromUnstructured(m, &c) == nil {
			out = append(out, c)
		}
	}
	return out
}

// ToFields converts a typed status (a pointer to a struct) to its fields in
// unstructured form, every field named in owned present (nil when the
// status leaves it out), every other field and conditions dropped.
func ToFields(status any, owned ...string) (map[string]any, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(status)
	if err != nil {
		return nil, err
	}
	out := make(map[string]any, len(owned))
	for _, k := range owned {
		out[k] = m[k]
	}
	return out, nil
}

// FieldsOf returns the JSON names of every field of a status struct but
// its conditions: the fields a controller that owns the whole status
// declares (Part.Fields, through ToFields). A field added to the struct is
// owned, and written, with no list to keep in step.
func FieldsOf(status any) []string {
	t := reflect.TypeOf(status)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var out []string
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" && name != "conditions" {
			out = append(out, name)
		}
	}
	return out
}

// Stamp returns want with the observed generation set, messages cut to the
// CRD's limit, and each condition's lastTransitionTime taken from have when
// its status did not change (now otherwise).
func Stamp(have, want []metav1.Condition, generation int64) []metav1.Condition {
	now := metav1.Now()
	out := make([]metav1.Condition, len(want))
	for i, c := range want {
		c.ObservedGeneration = generation
		c.Message = conditions.Truncate(c.Message)
		c.LastTransitionTime = now
		if old := meta.FindStatusCondition(have, c.Type); old != nil && old.Status == c.Status {
			c.LastTransitionTime = old.LastTransitionTime
		}
		out[i] = c
	}
	return out
}
