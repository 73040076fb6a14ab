package gatewayctl

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/conditions"
	"github.com/cozyplane/cozyplane/pkg/ownwrite"
	"github.com/cozyplane/cozyplane/pkg/record"
)

// Status is the part of a TenantGateway's status one controller owns.
type Status struct {
	// Conditions are every condition type the controller owns, every time:
	// server-side apply removes a type the manager applied before and leaves
	// out now.
	Conditions []metav1.Condition
	// Listeners replaces status.listeners when OwnsListeners is set
	// (gateway-listeners only).
	Listeners     []gatewayv1alpha1.TenantGatewayListenerStatus
	OwnsListeners bool
	// ObservedGeneration sets status.observedGeneration to the object's
	// generation (gateway-listeners only: the summary is its to write).
	ObservedGeneration bool
}

// StatusWriter writes a controller's part of TenantGateway status with
// server-side apply as its own field manager, so the four controllers never
// overwrite each other's conditions; and writes nothing when its part is
// already as desired.
type StatusWriter struct {
	Client       client.Client
	FieldManager string
	// Events, when its Recorder is set, records every condition whose
	// status or reason a write changes (ChangedConditions): the
	// controller's decisions, refusals included, as events.
	Events record.Events
}

// Write brings tgw's status to st for the fields this controller owns.
// Conditions are stamped with tgw's generation; a condition keeps its
// lastTransitionTime while its status does not change. It reports whether it
// wrote.
func (w StatusWriter) Write(ctx context.Context, tgw *gatewayv1alpha1.TenantGateway, st Status) (bool, error) {
	conds := Stamp(tgw.Status.Conditions, st.Conditions, tgw.Generation)
	if StatusUpToDate(tgw, conds, st) {
		return false, nil
	}
	key, print := appliedKey{w.FieldManager, tgw.UID}, fingerprint(conds, st, tgw.Generation)
	have := tgw.Status.Conditions
	if last, behind := applied.Behind(key, tgw.ResourceVersion); behind {
		if last.fingerprint == print {
			// The cache has not caught up with this controller's own
			// write over this very version: writing again would change
			// nothing. The write's watch event brings the next reconcile.
			return false, nil
		}
		// What was written, not the stale cache, is what this change is
		// told against: a transition is never recorded twice.
		have = last.conditions
	}
	status := map[string]any{}
	list := make([]any, 0, len(conds))
	for i := range conds {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&conds[i])
		if err != nil {
			return false, err
		}
		list = append(list, m)
	}
	status["conditions"] = list
	if st.OwnsListeners {
		ls := make([]any, 0, len(st.Listeners))
		for i := range st.Listeners {
			m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&st.Listeners[i])
			if err != nil {
				return false, err
			}
			ls = append(ls, m)
		}
		status["listeners"] = ls
	}
	if st.ObservedGeneration {
		status["observedGeneration"] = tgw.Generation
	}
	u := &unstructured.Unstructured{Object: map[string]any{"status": status}}
	u.SetGroupVersionKind(TenantGatewayGVK)
	u.SetName(tgw.Name)
	u.SetNamespace(tgw.Namespace)
	err := w.Client.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(u),
		client.FieldOwner(w.FieldManager), client.ForceOwnership)
	if apierrors.IsNotFound(err) {
		return false, nil // deleted meanwhile: nothing left to report on
	}
	if err != nil {
		return false, fmt.Errorf("writing the status of TenantGateway %s/%s: %w", tgw.Namespace, tgw.Name, err)
	}
	applied.Wrote(key, tgw.ResourceVersion, appliedPart{fingerprint: print, conditions: conds})
	ConditionsChanged(w.Events, tgw, have, conds)
	return true, nil
}

// applied is each controller's last status write of each TenantGateway
// (pkg/ownwrite), by field manager and uid.
var applied ownwrite.Writes[appliedKey, appliedPart]

type appliedKey struct {
	manager string
	uid     types.UID
}

// appliedPart is a status part as written: its fingerprint and conditions.
type appliedPart struct {
	fingerprint string
	conditions  []metav1.Condition
}

// fingerprint identifies the status part st and its stamped conditions,
// transition times aside.
func fingerprint(conds []metav1.Condition, st Status, generation int64) string {
	cs := make([]metav1.Condition, len(conds))
	for i, c := range conds {
		c.LastTransitionTime = metav1.Time{}
		cs[i] = c
	}
	b, _ := json.Marshal(struct {
		C []metav1.Condition
		L []gatewayv1alpha1.TenantGatewayListenerStatus
		O bool
		G int64
	}{cs, st.Listeners, st.OwnsListeners, generation})
	return string(b)
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

// StatusUpToDate reports whether tgw's status already carries conds (stamped)
// and the other fields st owns.
func StatusUpToDate(tgw *gatewayv1alpha1.TenantGateway, conds []metav1.Condition, st Status) bool {
	for _, c := range conds {
		old := meta.FindStatusCondition(tgw.Status.Conditions, c.Type)
		if old == nil || old.Status != c.Status || old.Reason != c.Reason || old.Message != c.Message ||
			old.ObservedGeneration != c.ObservedGeneration {
			return false
		}
	}
	if st.OwnsListeners && !(len(st.Listeners) == 0 && len(tgw.Status.Listeners) == 0) &&
		!equality.Semantic.DeepEqual(st.Listeners, tgw.Status.Listeners) {
		return false
	}
	if st.ObservedGeneration && tgw.Status.ObservedGeneration != tgw.Generation {
		return false
	}
	return true
}

// Condition is a shorthand for a condition of type t.
func Condition(t string, status metav1.ConditionStatus, reason, message string) metav1.Condition {
	return metav1.Condition{Type: t, Status: status, Reason: reason, Message: message}
}
