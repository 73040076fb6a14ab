// Package conditions keeps status conditions kstatus-compatible.
//
// kstatus (sigs.k8s.io/cli-utils/pkg/kstatus) reads a custom resource as
// Current when status.observedGeneration equals metadata.generation, Ready is
// True, and neither Reconciling nor Stalled is True. These helpers write the
// three conditions together so an object never says Ready=True while it is
// still Reconciling, and they stamp every condition with the generation it
// describes.
//
// Each controller writes only the condition types it owns; Ready is written by
// exactly one summarize function per object kind.
package conditions

import (
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition types with kstatus meaning.
const (
	// Ready (positive polarity) summarises the object.
	Ready = "Ready"
	// Reconciling (abnormal-true) is True while the controller works towards
	// the latest generation.
	Reconciling = "Reconciling"
	// Stalled (abnormal-true) is True when progress needs a change by someone.
	Stalled = "Stalled"
)

// Object is an object whose status carries metav1.Conditions.
type Object interface {
	GetGeneration() int64
	GetConditions() []metav1.Condition
	SetConditions([]metav1.Condition)
}

// Set adds or updates a condition, stamping the object's generation. The
// transition time changes only when the status does.
func Set(obj Object, condType string, status metav1.ConditionStatus, reason, message string) {
	conds := obj.GetConditions()
	meta.SetStatusCondition(&conds, metav1.Condition{
		Type:               condType,
		Status:             status,
		Reason:             reason,
		Message:            Truncate(message),
		ObservedGeneration: obj.GetGeneration(),
	})
	obj.SetConditions(conds)
}

// Delete removes a condition type.
func Delete(obj Object, condType string) {
	conds := obj.GetConditions()
	meta.RemoveStatusCondition(&conds, condType)
	obj.SetConditions(conds)
}

// Get returns the condition of the given type, or nil.
func Get(obj Object, condType string) *metav1.Condition {
	return meta.FindStatusCondition(obj.GetConditions(), condType)
}

// IsTrue reports whether the condition is present and True.
func IsTrue(obj Object, condType string) bool {
	return meta.IsStatusConditionTrue(obj.GetConditions(), condType)
}

// MarkReady sets Ready=True and clears Reconciling and Stalled.
func MarkReady(obj Object, reason, message string) {
	Set(obj, Ready, metav1.ConditionTrue, reason, message)
	Delete(obj, Reconciling)
	Delete(obj, Stalled)
}

// MarkReconciling sets Ready=Unknown and Reconciling=True: work is under way
// and no one needs to act.
func MarkReconciling(obj Object, reason, message string) {
	Set(obj, Ready, metav1.ConditionUnknown, reason, message)
	Set(obj, Reconciling, metav1.ConditionTrue, reason, message)
	Delete(obj, Stalled)
}

// MarkNotReadyReconciling sets Ready=False and Reconciling=True: not ready,
// and the controller is still at work on it (waiting for another actor to
// act, or retrying after an error), so no one needs to act yet.
func MarkNotReadyReconciling(obj Object, reason, message string) {
	Set(obj, Ready, metav1.ConditionFalse, reason, message)
	Set(obj, Reconciling, metav1.ConditionTrue, reason, message)
	Delete(obj, Stalled)
}

// MarkNotReady sets Ready=False without claiming the object is stalled: the
// controller expects the cause to go away (a dependency not ready yet).
func MarkNotReady(obj Object, reason, message string) {
	Set(obj, Ready, metav1.ConditionFalse, reason, message)
	Delete(obj, Reconciling)
	Delete(obj, Stalled)
}

// MarkStalled sets Ready=False and Stalled=True: nothing will change until
// someone fixes what the message names.
func MarkStalled(obj Object, reason, message string) {
	Set(obj, Ready, metav1.ConditionFalse, reason, message)
	Set(obj, Stalled, metav1.ConditionTrue, reason, message)
	Delete(obj, Reconciling)
}

// MaxMessage is the API server's limit on a condition's message
// (metav1.Condition's schema: 32768).
const MaxMessage = 32768

// Truncate cuts a message to MaxMessage bytes, ending it with "..." and
// never splitting a character.
func Truncate(s string) string {
	if len(s) <= MaxMessage {
		return s
	}
	cut := MaxMessage - len("...")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

// Holder adapts a pointer to a conditions slice and a generation to Object,
// for statuses that are not typed Go structs.
type Holder struct {
	Generation int64
	Conditions *[]metav1.Condition
}

// GetGeneration implements Object.
func (h Holder) GetGeneration() int64 { return h.Generation }

// GetConditions implements Object.
func (h Holder) GetConditions() []metav1.Condition { return *h.Conditions }

// SetConditions implements Object.
func (h Holder) SetConditions(c []metav1.Condition) { *h.Conditions = c }
