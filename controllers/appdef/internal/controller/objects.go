package controller

import (
	"context"
	"errors"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/ownership"
	cozyschema "github.com/cozyplane/cozyplane/pkg/schema"
	"github.com/cozyplane/cozyplane/pkg/ssa"
	"github.com/cozyplane/cozyplane/pkg/writemetric"
)

// getEitherWay reads an object from the cache, and when it is not there
// (the cache only holds objects with our label), from the API server: an
// object with our name but not our label must be seen before anything is
// written.
func (r *Reconciler) getEitherWay(ctx context.Context, name string, obj client.Object) (bool, error) {
	key := types.NamespacedName{Name: name}
	err := r.Client.Get(ctx, key, obj)
	if apierrors.IsNotFound(err) {
		err = r.APIReader.Get(ctx, key, obj)
	}
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading %s: %w", name, err)
	}
	return true, nil
}

// ownedCRDs lists the CRDs labelled for def and controlled by it.
func (r *Reconciler) ownedCRDs(ctx context.Context, def *cozyv1alpha1.ApplicationDefinition) ([]apiextensionsv1.CustomResourceDefinition, error) {
	list := &apiextensionsv1.CustomResourceDefinitionList{}
	if err := r.Client.List(ctx, list, client.MatchingLabels{cozyschema.LabelDefinition: def.Name}); err != nil {
		return nil, fmt.Errorf("listing the CRDs of %s: %w", def.Name, err)
	}
	var out []apiextensionsv1.CustomResourceDefinition
	for _, crd := range list.Items {
		if ownership.IsControlledBy(&crd, definitionOwner(def)) {
			out = append(out, crd)
		}
	}
	return out, nil
}

// toUnstructured turns a typed object into what ssa.Apply compares and
// sends: apiVersion and kind set and, when owner is set, what
// ownership.Desired makes of it for that owner.
func toUnstructured(obj client.Object, owner ownership.Owner) (*unstructured.Unstructured, error) {
	gvk, err := gvkOf(obj)
	if err != nil {
		return nil, err
	}
	if owner.UID != "" {
		return ownership.Desired(obj, gvk, owner)
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

func gvkOf(obj client.Object) (schema.GroupVersionKind, error) {
	switch obj.(type) {
	case *apiextensionsv1.CustomResourceDefinition:
		return apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"), nil
	case *rbacv1.ClusterRole:
		return rbacv1.SchemeGroupVersion.WithKind("ClusterRole"), nil
	case *admissionregistrationv1.ValidatingAdmissionPolicy:
		return admissionregistrationv1.SchemeGroupVersion.WithKind("ValidatingAdmissionPolicy"), nil
	case *admissionregistrationv1.ValidatingAdmissionPolicyBinding:
		return admissionregistrationv1.SchemeGroupVersion.WithKind("ValidatingAdmissionPolicyBinding"), nil
	}
	return schema.GroupVersionKind{}, fmt.Errorf("unexpected type %T", obj)
}

// apiMessage is the API server's own words.
func apiMessage(err error) string {
	var st apierrors.APIStatus
	if errors.As(err, &st) && st.Status().Message != "" {
		return st.Status().Message
	}
	return err.Error()
}

// applyOwned server-side applies desired, controlled by owner, over live (the
// object as read; ignored unless found) with the definition's field manager.
func (r *Reconciler) applyOwned(ctx context.Context, desired client.Object, owner ownership.Owner, live client.Object, found bool) (ssa.Result, error) {
	u, err := toUnstructured(desired, owner)
	if err != nil {
		return ssa.Unchanged, err
	}
	var liveU *unstructured.Unstructured
	if found {
		if liveU, err = toUnstructured(live, ownership.Owner{}); err != nil {
			return ssa.Unchanged, err
		}
	}
	return r.apply(ctx, u, liveU)
}

// apply server-side applies desired over live (nil: not found) with the
// definition's field manager and counts the write (pkg/writemetric).
func (r *Reconciler) apply(ctx context.Context, desired, live *unstructured.Unstructured) (ssa.Result, error) {
	res, err := r.applier.Apply(ctx, desired, live)
	if err == nil {
		writemetric.Applied(r.FieldManager, desired.GetKind(), res)
	}
	return res, err
}

// deleteOwned deletes obj, an object of kind that a definition controls,
// with a UID precondition (an object someone recreated meanwhile is not
// deleted), and counts the write. Errors, NotFound included, are returned
// as they are.
func (r *Reconciler) deleteOwned(ctx context.Context, obj client.Object, kind string) error {
	uid := obj.GetUID()
	if err := r.Client.Delete(ctx, obj, client.Preconditions{UID: &uid}); err != nil {
		return err
	}
	writemetric.Count(r.FieldManager, kind, writemetric.Deleted)
	return nil
}
