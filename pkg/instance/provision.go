package instance

// Objects a backend needs in each platform namespace besides its backing
// objects (PlatformNamespaces.Provision). ensureNamespace (platform.go) calls
// ensureProvisioned once it has created or found a platform namespace.

import (
	"context"
	"fmt"
	"reflect"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/reconcileerr"
)

// NamespaceProvisioning names the objects that backing objects placed in
// platform namespaces (PlatformNamespaces) need there besides them (the
// Terraform backend: the ServiceAccount tofu-controller runs the runner Pods
// as, and its RoleBinding). The reconciler creates them when it has created
// or found the platform namespace, before writing a backing object there. It
// never updates or deletes them, and an object at one of their names that
// lacks any of their labels is not the backend's: it is left untouched and
// the instance reports ReasonPlatformObjectNotOwned.
type NamespaceProvisioning interface {
	// PlatformNamespaceObjects are the objects to create in platform
	// namespace ns of tenant namespace tenant, typed (the scheme knows
	// them), namespaced in ns, each carrying the labels that mark it as
	// the backend's. Pure.
	PlatformNamespaceObjects(ns, tenant string) []client.Object
}

// DecideProvisioned says what to do about want, an object of
// PlatformNamespaceObjects, given live, the object at its name (nil when
// absent): create it (true), leave it (false, nil: it carries every label of
// want, so the backend created it), or refuse (an error naming the missing
// label: someone else's object, never overwritten). Pure.
func DecideProvisioned(kind string, live, want client.Object) (bool, error) {
	if live == nil || isNil(live) {
		return true, nil
	}
	wl := want.GetLabels()
	keys := make([]string, 0, len(wl))
	for k := range wl {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if got, ok := live.GetLabels()[k]; !ok || got != wl[k] {
			return false, fmt.Errorf("%s %s/%s exists but was not created by the backend controller (label %s is %q, want %q), "+
				"so it was left untouched and nothing is written in %s: a platform administrator must delete it, or label it if it is fit for the purpose",
				kind, live.GetNamespace(), live.GetName(), k, got, wl[k], live.GetNamespace())
		}
	}
	return false, nil
}

// ensureProvisioned creates the objects p names in platform namespace ns
// that are missing, and refuses ones that are not the backend's. It reads
// from the API server (one get per object, no watch). A nil p names none.
func (r *Reconciler) ensureProvisioned(ctx context.Context, ns, tenant string, p NamespaceProvisioning) error {
	if p == nil {
		return nil
	}
	for _, want := range p.PlatformNamespaceObjects(ns, tenant) {
		kind := reflect.TypeOf(want).Elem().Name()
		live := reflect.New(reflect.TypeOf(want).Elem()).Interface().(client.Object)
		err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(want), live)
		switch {
		case apierrors.IsNotFound(err):
			live = nil
		case err != nil:
			return err
		}
		create, err := DecideProvisioned(kind, live, want)
		if err != nil {
			return reconcileerr.Foreign(appsv1alpha1.ReasonPlatformObjectNotOwned, err)
		}
		if !create {
			continue
		}
		if err := r.Client.Create(ctx, want.DeepCopyObject().(client.Object)); err != nil {
			if apierrors.IsAlreadyExists(err) {
				// Created a moment ago: decided on the next pass.
				return fmt.Errorf("%s %s/%s appeared while it was being created: %w", kind, ns, want.GetName(), err)
			}
			return fmt.Errorf("creating %s %s/%s in the platform namespace: %w", kind, ns, want.GetName(), err)
		}
		log.FromContext(ctx).Info("created an object in the platform namespace", "kind", kind, "object", ns+"/"+want.GetName())
	}
	return nil
}
