package controller

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/conditions"
	"github.com/cozyplane/cozyplane/pkg/readymetric"
	"github.com/cozyplane/cozyplane/pkg/reconcileerr"
	"github.com/cozyplane/cozyplane/pkg/record"
	"github.com/cozyplane/cozyplane/pkg/statusapply"
)

// summarize writes Ready, Reconciling and Stalled from the outcome of a
// reconcile: the only place that sets Ready. readyMessage is used when err
// is nil.
func summarize(def *cozyv1alpha1.ApplicationDefinition, readyMessage string, err error) {
	def.Status.ObservedGeneration = def.Generation
	if err == nil {
		conditions.MarkReady(def, cozyv1alpha1.ReasonServed, readyMessage)
		return
	}
	if s, ok := reconcileerr.AsStalled(err); ok {
		conditions.MarkStalled(def, s.Reason, s.Error())
		return
	}
	if w, ok := reconcileerr.AsWaiting(err); ok {
		conditions.MarkReconciling(def, w.Reason, w.Error())
		return
	}
	conditions.MarkReconciling(def, cozyv1alpha1.ReasonProgressing, "retrying after an error: "+err.Error())
}

func readyMessageOf(def *cozyv1alpha1.ApplicationDefinition) string {
	if c := meta.FindStatusCondition(def.Status.Conditions, cozyv1alpha1.ConditionReady); c != nil {
		return c.Message
	}
	return ""
}

func readyReason(s *cozyv1alpha1.ApplicationDefinitionStatus) string {
	if c := meta.FindStatusCondition(s.Conditions, cozyv1alpha1.ConditionReady); c != nil {
		return c.Reason
	}
	return ""
}

// statusFields are the fields of an ApplicationDefinition's status besides
// its conditions: appdef owns them all.
var statusFields = statusapply.FieldsOf(cozyv1alpha1.ApplicationDefinitionStatus{})

// writeStatus applies the status (pkg/statusapply: appdef owns all of it)
// when, and only when, it changed, sets the definition's readiness gauge,
// and reports a change of the Ready reason as an event (statusChanged).
func (r *Reconciler) writeStatus(ctx context.Context, def *cozyv1alpha1.ApplicationDefinition, before *cozyv1alpha1.ApplicationDefinitionStatus) error {
	ready := meta.FindStatusCondition(def.Status.Conditions, cozyv1alpha1.ConditionReady)
	var status metav1.ConditionStatus
	if ready != nil {
		status = ready.Status
	}
	readymetric.Set(definitionGVK.Kind, "", def.Name, status)
	fields, err := statusapply.ToFields(&def.Status, statusFields...)
	if err != nil {
		return err
	}
	w := statusapply.Writer{Client: r.Client, FieldManager: r.FieldManager,
		Changed: func(_ client.Object, have, _ []metav1.Condition) { r.statusChanged(ctx, def, have) }}
	cached := def.DeepCopy()
	cached.Status = *before
	_, err = w.Write(ctx, def, statusapply.Of(cached), statusapply.Part{Conditions: def.Status.Conditions, AllConditions: true, Fields: fields})
	return err
}

// statusChanged logs a status write and tells a change of the Ready reason
// (have: the conditions before the write) as an event: Stalled (warning)
// when the definition stalls for a new reason, Served when its kind becomes
// served, DeletionWaiting when its deletion starts waiting for instances
// (action: the Ready reason, Serve, Delete).
func (r *Reconciler) statusChanged(ctx context.Context, def *cozyv1alpha1.ApplicationDefinition, have []metav1.Condition) {
	ready := meta.FindStatusCondition(def.Status.Conditions, cozyv1alpha1.ConditionReady)
	if ready == nil {
		return
	}
	log.FromContext(ctx).Info("wrote status", "applicationDefinition", def.Name,
		"why", fmt.Sprintf("Ready=%s %s: %s", ready.Status, ready.Reason, ready.Message))
	if old := meta.FindStatusCondition(have, cozyv1alpha1.ConditionReady); old != nil && old.Reason == ready.Reason {
		return
	}
	switch {
	case meta.IsStatusConditionTrue(def.Status.Conditions, cozyv1alpha1.ConditionStalled):
		// The Ready reason is the action: stalls for different reasons stay
		// different events (a series keeps its first note).
		r.events().Warning(def, nil, cozyv1alpha1.EventStalled, ready.Reason, ready.Message)
	case ready.Reason == cozyv1alpha1.ReasonServed:
		r.events().Normal(def, nil, cozyv1alpha1.EventServed, "Serve", ready.Message)
	case ready.Reason == cozyv1alpha1.ReasonInstancesRemain:
		r.events().Normal(def, nil, cozyv1alpha1.EventDeletionWaiting, "Delete", ready.Message)
	}
}

// events records on def (and, for an event about another object, on def
// about it: see pkg/record).
func (r *Reconciler) events() record.Events { return record.For(r.Recorder, r.Client) }
