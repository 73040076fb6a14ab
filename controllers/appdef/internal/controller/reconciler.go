package controller

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/readymetric"
	"github.com/cozyplane/cozyplane/pkg/reconcileerr"
)

// RBAC: exactly what the reconciler uses (see rbac.md for why each is needed).
//
// +kubebuilder:rbac:groups=cozystack.io,resources=applicationdefinitions,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=cozystack.io,resources=applicationdefinitions/status,verbs=patch
// +kubebuilder:rbac:groups=cozystack.io,resources=applicationdefinitions/finalizers,verbs=update
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingadmissionpolicies,resourceNames=cozyplane-appdef-instance-keys,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingadmissionpolicybindings,resourceNames=cozyplane-appdef-instance-keys,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps.cozystack.io,resources=*,verbs=get;list;watch;create;update;patch;delete;deletecollection
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterroles,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=apiregistration.k8s.io,resources=apiservices,resourceNames=v1alpha1.apps.cozystack.io,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;create;update

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
		readymetric.Forget(definitionGVK.Kind, "", req.Name)
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
