package instance

// Releasing: after a definition moves to another backend, this backend keeps
// watching the kind's instances, so that those still carrying its finalizers
// can be deleted, and the backing objects of those that go without any are
// deleted after them.

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/dynamicwatch"
)

// releaseKind is called for a definition that does not name this backend.
// A backend with finalizers (Components.Finalizer) keeps watching its kind,
// metadata only, so that instances it held before the definition moved to
// another backend can still be deleted, and so that it sees those it did
// not hold go (their backing objects go after them: collectOrphans).
func (r *Reconciler) releaseKind(obj *cozyv1alpha1.ApplicationDefinition) error {
	if len(r.ourFinalizers(nil)) == 0 || obj.Status.CRDName == "" || obj.Spec.Application.Kind == "" {
		return nil
	}
	gvk := appsv1alpha1.GroupVersion.WithKind(obj.Spec.Application.Kind)
	if r.defs.servesKind(gvk) {
		return nil
	}
	r.releasedMu.Lock()
	defer r.releasedMu.Unlock()
	if r.released == nil {
		r.released = map[schema.GroupVersionKind]string{}
	}
	if _, ok := r.released[gvk]; ok {
		return nil
	}
	if err := r.watches.Watch(gvk, dynamicwatch.Options{MetadataOnly: true, Deleted: r.rememberDeleted(gvk)}); err != nil {
		return err
	}
	r.released[gvk] = obj.Name
	return nil
}

// unreleaseDefinition stops releasing the kind of a definition that is gone.
func (r *Reconciler) unreleaseDefinition(ctx context.Context, name string) error {
	r.releasedMu.Lock()
	var gvk *schema.GroupVersionKind
	for g, n := range r.released {
		if n == name {
			gvk = &g
		}
	}
	r.releasedMu.Unlock()
	if gvk == nil {
		return nil
	}
	return r.unreleaseKind(ctx, *gvk)
}

// unreleaseKind stops the metadata-only watch of a kind this backend serves
// again (or whose definition is gone), so the full watch can take its place.
func (r *Reconciler) unreleaseKind(ctx context.Context, gvk schema.GroupVersionKind) error {
	r.releasedMu.Lock()
	defer r.releasedMu.Unlock()
	if _, ok := r.released[gvk]; !ok {
		return nil
	}
	delete(r.released, gvk)
	return r.watches.Unwatch(ctx, gvk)
}

func (r *Reconciler) isReleased(gvk schema.GroupVersionKind) bool {
	r.releasedMu.Lock()
	defer r.releasedMu.Unlock()
	_, ok := r.released[gvk]
	return ok
}

func (r *Reconciler) releasedCount() int {
	r.releasedMu.Lock()
	defer r.releasedMu.Unlock()
	return len(r.released)
}

// reconcileReleased handles an instance of a kind whose definition names
// another backend now. While it lives, nothing is done: its backing objects
// stay as they are (the backend never destroys resources because a
// definition changed). When it is deleted, the backing objects it owns are
// deleted: for one holding our finalizers, before they come off; for one
// without, once it is gone, as for a kind this backend serves.
func (r *Reconciler) reconcileReleased(ctx context.Context, req dynamicwatch.Request) (ctrl.Result, error) {
	inst := &metav1.PartialObjectMetadata{}
	inst.SetGroupVersionKind(req.GVK)
	if err := r.Client.Get(ctx, req.NamespacedName, inst); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, r.gone(ctx, req)
		}
		return ctrl.Result{}, err
	}
	r.forgetEarlier(req, inst.GetUID())
	if inst.GetDeletionTimestamp().IsZero() || !r.holdsOurs(inst) || r.behindFinalized(req, inst) {
		return ctrl.Result{}, nil
	}
	left, err := r.deleteOwned(ctx, inst, nil)
	if err != nil {
		return ctrl.Result{}, err
	}
	if len(left) > 0 {
		// The backing object's deletion event brings us back.
		return ctrl.Result{RequeueAfter: time.Minute}, nil
	}
	if err := r.removeFinalizers(ctx, inst, r.ourFinalizers(nil)); err != nil {
		return ctrl.Result{}, err
	}
	log.FromContext(ctx).Info("released an instance whose definition names another backend", "kind", req.GVK.Kind, "instance", req.NamespacedName)
	return ctrl.Result{}, nil
}

// errNamespaceGone: the platform namespace vanished between our check and
