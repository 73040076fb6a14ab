package controller

import (
	"context"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/ownership"
	cozyschema "github.com/cozyplane/cozyplane/pkg/schema"
)

// reconcileDelete holds a deleting definition while instances of its kind
// exist, then deletes what it owns and lets it go.
func (r *Reconciler) reconcileDelete(ctx context.Context, def *cozyv1alpha1.ApplicationDefinition) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(def, cozyv1alpha1.FinalizerInstances) {
		return ctrl.Result{}, nil
	}
	logger := log.FromContext(ctx)
	owned, err := r.ownedCRDs(ctx, def)
	if err != nil {
		return ctrl.Result{}, err
	}
	// The CRD of the definition's name may be missing from the cache (its
	// label removed): look it up too.
	crdName := cozyschema.CRDName(def.Spec.Application.Plural)
	if !containsCRD(owned, crdName) {
		live := &apiextensionsv1.CustomResourceDefinition{}
		found, err := r.getEitherWay(ctx, crdName, live)
		if err != nil {
			return ctrl.Result{}, err
		}
		if found && ownership.IsControlledBy(live, definitionOwner(def)) {
			owned = append(owned, *live)
		}
	}

	total := 0
	var sample []metav1.PartialObjectMetadata
	var kind string
	for i := range owned {
		n, some, err := r.countInstances(ctx, &owned[i])
		if err != nil {
			return ctrl.Result{}, err
		}
		total += n
		sample = append(sample, some...)
		kind = owned[i].Spec.Names.Kind
	}

	before := def.Status.DeepCopy()
	if total > 0 {
		def.Status.Instances = ptr.To(int32(total))
		summarize(def, "", waiting(r.InstancePollInterval, cozyv1alpha1.ReasonInstancesRemain, "%s", instancesMessage(kind, total, sample)))
		if err := r.writeStatus(ctx, def, before); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{RequeueAfter: r.InstancePollInterval}, nil
	}

	// No instance left: remove the CRD, then let the definition go (its
	// kind leaves the instance keys policy once it is gone). Deleting the
	// CRD explicitly (rather than leaving it to the garbage collector) stops
	// the API server from accepting new instances at once.
	for i := range owned {
		crd := &owned[i]
		if crd.DeletionTimestamp != nil {
			continue
		}
		if err := r.deleteOwned(ctx, crd, "CustomResourceDefinition"); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, err
		}
		r.events().Normal(def, nil, cozyv1alpha1.EventCRDDeleted, "Delete", fmt.Sprintf("deleted CRD %s: no instance of %s is left", crd.Name, crd.Spec.Names.Kind))
		logger.Info("deleted CRD", "crd", crd.Name, "why", "the definition is deleted and no instance is left")
	}
	if err := r.deleteRoles(ctx, def, nil); err != nil {
		return ctrl.Result{}, err
	}
	patch := client.MergeFromWithOptions(def.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(def, cozyv1alpha1.FinalizerInstances)
	if err := r.Client.Patch(ctx, def, patch); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	logger.Info("removed finalizer", "applicationDefinition", def.Name, "finalizer", cozyv1alpha1.FinalizerInstances,
		"why", "no instance of its kind is left")
	r.events().Normal(def, nil, cozyv1alpha1.EventReleased, "Delete", "no instance of the kind is left; the definition is released")
	return ctrl.Result{}, nil
}

func containsCRD(list []apiextensionsv1.CustomResourceDefinition, name string) bool {
	for i := range list {
		if list[i].Name == name {
			return true
		}
	}
	return false
}

// countInstances counts the instances of the kind crd serves with one
// metadata-only list across namespaces, returning a few of them to name.
func (r *Reconciler) countInstances(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) (int, []metav1.PartialObjectMetadata, error) {
	state, _ := crdVerdict(crd)
	if state != crdEstablished {
		// A kind that is not served has no instances.
		return 0, nil, nil
	}
	gvr := schema.GroupVersionResource{Group: crd.Spec.Group, Version: appsv1alpha1.GroupVersion.Version, Resource: crd.Spec.Names.Plural}
	list, err := r.Metadata.Resource(gvr).List(ctx, metav1.ListOptions{Limit: maxNamed})
	if err != nil {
		return 0, nil, fmt.Errorf("counting the instances of %s: %w", crd.Spec.Names.Kind, err)
	}
	total := len(list.Items)
	if list.Continue != "" {
		if list.RemainingItemCount != nil {
			total += int(*list.RemainingItemCount)
		} else {
			// No estimate: count page by page.
			cont := list.Continue
			for cont != "" {
				page, err := r.Metadata.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 500, Continue: cont})
				if err != nil {
					return 0, nil, fmt.Errorf("counting the instances of %s: %w", crd.Spec.Names.Kind, err)
				}
				total += len(page.Items)
				cont = page.Continue
			}
		}
	}
	return total, list.Items, nil
}
