package controller

import (
	"context"
	"fmt"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/ownership"
	"github.com/cozyplane/cozyplane/pkg/readiness"
	"github.com/cozyplane/cozyplane/pkg/reconcileerr"
	cozyschema "github.com/cozyplane/cozyplane/pkg/schema"
	"github.com/cozyplane/cozyplane/pkg/ssa"
)

// RBAC: exactly what the reconciler uses (see rbac.md for why each is needed).
//
// +kubebuilder:rbac:groups=cozystack.io,resources=applicationdefinitions,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=cozystack.io,resources=applicationdefinitions/status,verbs=patch
// +kubebuilder:rbac:groups=cozystack.io,resources=applicationdefinitions/finalizers,verbs=update
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingadmissionpolicies,resourceNames=cozystack-appdef-instance-keys,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingadmissionpolicybindings,resourceNames=cozystack-appdef-instance-keys,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps.cozystack.io,resources=*,verbs=get;list;watch;create;update;patch;delete;deletecollection
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterroles,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=apiregistration.k8s.io,resources=apiservices,resourceNames=v1alpha1.apps.cozystack.io,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;create;update

// Event reasons on ApplicationDefinitions.
const (
	EventCRDCreated   = "CRDCreated"
	EventCRDUpdated   = "CRDUpdated"
	EventCRDCorrected = "CRDCorrected"
	EventCRDDeleted   = "CRDDeleted"
	// EventPolicyUpdated: the instance keys policy now covers another set
	// of free-form kinds.
	EventPolicyUpdated = "PolicyUpdated"
	// EventPolicyCorrected: someone changed the instance keys policy; it
	// was put back.
	EventPolicyCorrected = "PolicyCorrected"
	// EventRolePublished: an aggregated ClusterRole of the kind was
	// created, updated or put back.
	EventRolePublished = "RolePublished"
	// EventRoleDeleted: an aggregated ClusterRole the definition no longer
	// wants was deleted.
	EventRoleDeleted = "RoleDeleted"
	// EventRoleNotOwned (warning): a ClusterRole with the name of one of the
	// kind's roles exists and the definition does not control it.
	EventRoleNotOwned = "RoleNotOwned"
	// EventStalled (warning): the definition stalled for a new reason; the
	// note says what to fix.
	EventStalled = "Stalled"
	// EventServed: the kind became served (Ready=True).
	EventServed = "Served"
	// EventDeletionWaiting: the definition is deleted, and its deletion
	// waits until no instance of its kind is left.
	EventDeletionWaiting = "DeletionWaiting"
	// EventReleased: nothing holds the deleted definition any more; its
	// finalizer was removed.
	EventReleased = "Released"
)

// Default timings.
const (
	// DefaultInstancePollInterval is how often a deleting definition
	// recounts the instances that hold it.
	DefaultInstancePollInterval = 5 * time.Second
	// DefaultForeignRecheckInterval is how often a definition blocked by a
	// foreign CRD or policy looks again whether it is gone.
	DefaultForeignRecheckInterval = time.Minute
	// establishRecheck is a safety net after writing a CRD: the CRD watch
	// normally reports Established within a second.
	establishRecheck = 30 * time.Second
)

// Outcomes of serve are typed errors (pkg/reconcileerr): nil means served,
// a Stalled error names what the definition's author must fix, a Waiting
// error says what the controller waits for, anything else is transient.
// summarize turns them into conditions; it is the only place that sets
// Ready.

func stalled(reason, format string, args ...any) error {
	return reconcileerr.Stalled(reason, fmt.Errorf(format, args...))
}

func waiting(after time.Duration, reason, format string, args ...any) error {
	return reconcileerr.Waiting(reason, after, fmt.Errorf(format, args...))
}

// Reconcile brings one definition's CRD (and admission policy) in line and
// reports on it.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	def := &cozyv1alpha1.ApplicationDefinition{}
	if err := r.Client.Get(ctx, req.NamespacedName, def); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		readiness.Forget(definitionGVK.Kind, "", req.Name)
		// The definition is gone: its kind leaves the instance keys policy
		// (a missing policy has nothing to drop).
		if err := r.applyInstanceKeys(ctx, nil); err != nil && !reconcileerr.IsForeign(err) {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, nil
	}
	if def.DeletionTimestamp != nil {
		return r.reconcileDelete(ctx, def)
	}
	if !controllerutil.ContainsFinalizer(def, cozyv1alpha1.FinalizerInstances) {
		patch := client.MergeFromWithOptions(def.DeepCopy(), client.MergeFromWithOptimisticLock{})
		controllerutil.AddFinalizer(def, cozyv1alpha1.FinalizerInstances)
		if err := r.Client.Patch(ctx, def, patch); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
		log.FromContext(ctx).Info("added finalizer", "applicationDefinition", def.Name, "finalizer", cozyv1alpha1.FinalizerInstances,
			"why", "deleting the definition must wait until no instance of its kind is left")
	}

	before := def.Status.DeepCopy()
	msg, err := r.serve(ctx, def)
	def.Status.Instances = nil
	summarize(def, msg, err)
	if werr := r.writeStatus(ctx, def, before); werr != nil {
		return ctrl.Result{}, werr
	}
	if err != nil {
		log.FromContext(ctx).V(1).Info("not served", "reason", readyReason(&def.Status), "message", err.Error())
	}
	// A foreign CRD or a missing policy may go away unseen: looked at again
	// every ForeignRecheckInterval.
	return reconcileerr.Result(err, r.ForeignRecheckInterval)
}

const (
	corev1EventNormal  = "Normal"
	corev1EventWarning = "Warning"
)

// serve runs the phases in order; the first that cannot complete decides.
// It returns the Ready message when the kind is served.
func (r *Reconciler) serve(ctx context.Context, def *cozyv1alpha1.ApplicationDefinition) (string, error) {
	app := def.Spec.Application
	crdName := cozyschema.CRDName(app.Plural)
	def.Status.CRDName = crdName
	if be, err := def.ResolvedBackend(); err == nil {
		def.Status.Backend = be.Type
	}

	objs, err := r.build(def)
	if err != nil {
		// A *cozyschema.Error is stalled with its reason; others are retried.
		return "", err
	}

	all := &cozyv1alpha1.ApplicationDefinitionList{}
	if err := r.Client.List(ctx, all); err != nil {
		return "", err
	}
	if other, name := findClash(def, all.Items); other != nil {
		return "", stalled(cozyv1alpha1.ReasonNameClash,
			"%s is already claimed by ApplicationDefinition %s (kind %s, plural %s), which is older and keeps it: rename this definition's kind, plural or singular",
			name, other.Name, other.Spec.Application.Kind, other.Spec.Application.Plural)
	}

	owner := ownership.Owner{GVK: definitionGVK, Name: def.Name, UID: string(def.UID)}
	owned, err := r.ownedCRDs(ctx, def)
	if err != nil {
		return "", err
	}
	if msg := renamed(def, crdName, owned); msg != "" {
		return "", stalled(cozyv1alpha1.ReasonKindRenamed, "%s", msg)
	}

	live := &apiextensionsv1.CustomResourceDefinition{}
	found, err := r.getEitherWay(ctx, crdName, live)
	if err != nil {
		return "", err
	}
	if found {
		if err := ownership.Check("CustomResourceDefinition", live, owner); err != nil {
			return "", reconcileerr.Foreign(cozyv1alpha1.ReasonForeignCRD, err)
		}
		if live.DeletionTimestamp != nil {
			return "", waiting(0, cozyv1alpha1.ReasonProgressing, "CRD %s is being deleted; it will be created again once it is gone", crdName)
		}
	}

	// The policy goes first: a free-form kind is never served unchecked.
	if err := r.syncInstanceKeys(ctx, def, objs.Policy != nil); err != nil {
		return "", err
	}

	// The roles go before the CRD too, so users of the built-in roles can
	// use the kind as soon as it is served.
	roleNote, err := r.applyRoles(ctx, def, owner)
	if err != nil {
		return "", err
	}
	if roleNote != "" && !strings.Contains(readyMessageOf(def), roleNote) {
		r.event(def, corev1EventWarning, EventRoleNotOwned, "Apply", roleNote)
	}

	res, err := r.applyOwned(ctx, objs.CRD, owner, live, found)
	if err != nil {
		if apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) || apierrors.IsRequestEntityTooLargeError(err) {
			return "", stalled(cozyv1alpha1.ReasonCRDRejected, "the API server refused CRD %s: %s", crdName, apiMessage(err))
		}
		return "", fmt.Errorf("applying CRD %s: %w", crdName, err)
	}
	switch res {
	case ssa.Created:
		log.FromContext(ctx).Info("created CRD", "crd", crdName, "why", "the definition serves kind "+app.Kind)
		r.event(def, corev1EventNormal, EventCRDCreated, "Apply", fmt.Sprintf("created CRD %s serving kind %s", crdName, app.Kind))
		return "", waiting(establishRecheck, cozyv1alpha1.ReasonProgressing, "created CRD %s; waiting for the API server to establish it", crdName)
	case ssa.Updated, ssa.Corrected:
		reason, note := EventCRDUpdated, "updated CRD %s to the definition's generation"
		if res == ssa.Corrected {
			reason, note = EventCRDCorrected, "CRD %s had been changed by someone else; put it back"
		}
		log.FromContext(ctx).Info("wrote CRD", "crd", crdName, "result", res.String(), "why", fmt.Sprintf(note, crdName))
		r.event(def, corev1EventNormal, reason, "Apply", fmt.Sprintf(note, crdName))
		return "", waiting(establishRecheck, cozyv1alpha1.ReasonProgressing, "updated CRD %s; waiting for the API server to establish it", crdName)
	}

	switch state, msg := crdVerdict(live); state {
	case crdNamesRejected:
		return "", stalled(cozyv1alpha1.ReasonCRDNotEstablished, "%s", msg)
	case crdWaiting:
		return "", waiting(establishRecheck, cozyv1alpha1.ReasonCRDNotEstablished, "%s", msg)
	}
	// Established is not served when an APIService sends the group
	// elsewhere. The APIService is watched: no recheck needed.
	route, err := r.shadowedBy(ctx)
	if err != nil {
		return "", err
	}
	if msg := shadowMessage(route, app.Kind, crdName); msg != "" {
		return "", stalled(cozyv1alpha1.ReasonGroupShadowed, "%s", msg)
	}
	msg := fmt.Sprintf("CRD %s is established and serves kind %s (%s backend)", crdName, app.Kind, def.Status.Backend)
	if roleNote != "" {
		msg += "; " + roleNote
	}
	return msg, nil
}
