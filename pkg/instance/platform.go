package instance

// Backing objects in a platform namespace (PlatformNamespaces, placement.go)
// and the finalizers that hold instances until their backing objects are
// gone (Components.Finalizer): the decisions, and the reads and writes
// they need.

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/compactcache"
	"github.com/cozyplane/cozyplane/pkg/dynamicwatch"
	"github.com/cozyplane/cozyplane/pkg/ownership"
	"github.com/cozyplane/cozyplane/pkg/reconcileerr"
	"github.com/cozyplane/cozyplane/pkg/ssa"
)

// PlatformNamespaceName is prefix followed by the tenant namespace ns, cut
// and hashed when longer than a namespace name may be: see
// appsv1alpha1.PlatformNamespaceName, which cozyplane's commands share. Pure.
func PlatformNamespaceName(prefix, ns string) string {
	return appsv1alpha1.PlatformNamespaceName(prefix, ns)
}

// PlatformLabels are the labels that, with the application labels, name the
// instance a backing object in a platform namespace belongs to.
func PlatformLabels(inst client.Object) map[string]string {
	return map[string]string{
		appsv1alpha1.LabelApplicationNamespace: inst.GetNamespace(),
		appsv1alpha1.LabelApplicationUID:       string(inst.GetUID()),
	}
}

// platformNotOwned is a refusal to touch an object in a platform namespace
// that another instance (or nobody) owns. It is a *ownership.NotOwnedError
// for the callers that look for one, with its own message: the advice to
// add an ownerReference does not apply across namespaces.
type platformNotOwned struct {
	*ownership.NotOwnedError
	msg string
}

func (e *platformNotOwned) Error() string { return e.msg }
func (e *platformNotOwned) Unwrap() error { return e.NotOwnedError }

// DecidePlatform says what inst may do with live, the object at its backing
// object's name in a platform namespace (nil when absent): it controls it
// when live's uid label is inst's uid. Objects there are written only by the
// backend controller (tenants have no rights in platform namespaces), so the
// labels are as trustworthy as an ownerReference. There is no adoption. The
// error is non-nil exactly when the verdict is Foreign. Pure.
func DecidePlatform(kind string, live client.Object, inst client.Object) (ownership.Verdict, error) {
	if live == nil || isNil(live) {
		return ownership.Absent, nil
	}
	l := live.GetLabels()
	if LabelsName(l, inst) {
		return ownership.Controlled, nil
	}
	held := "carries no " + appsv1alpha1.LabelApplicationUID + " label"
	if uid := l[appsv1alpha1.LabelApplicationUID]; uid != "" {
		held = fmt.Sprintf("belongs to %s %s/%s (uid %s), not to this instance (%s %s/%s, uid %s)", l[appsv1alpha1.LabelApplicationKind],
			l[appsv1alpha1.LabelApplicationNamespace], l[appsv1alpha1.LabelApplicationName], uid,
			inst.GetObjectKind().GroupVersionKind().Kind, inst.GetNamespace(), inst.GetName(), inst.GetUID())
	}
	e := &ownership.NotOwnedError{Kind: kind, Namespace: live.GetNamespace(), Name: live.GetName(),
		OwnerKind: inst.GetObjectKind().GroupVersionKind().Kind, OwnerName: inst.GetName()}
	return ownership.Foreign, &platformNotOwned{NotOwnedError: e, msg: fmt.Sprintf(
		"%s %s/%s already exists in the platform namespace and %s, so it was left untouched: "+
			"a platform administrator must delete it (an instance deleted and created again gets a new uid)",
		kind, live.GetNamespace(), live.GetName(), held)}
}

// LabelsName reports whether labels name inst as a whole: its uid, kind,
// namespace and name, as PlatformLabels and the application labels write
// them. The uid alone is not taken for the instance. Pure.
func LabelsName(labels map[string]string, inst client.Object) bool {
	uid := labels[appsv1alpha1.LabelApplicationUID]
	return uid != "" && uid == string(inst.GetUID()) &&
		labels[appsv1alpha1.LabelApplicationKind] == inst.GetObjectKind().GroupVersionKind().Kind &&
		labels[appsv1alpha1.LabelApplicationNamespace] == inst.GetNamespace() &&
		labels[appsv1alpha1.LabelApplicationName] == inst.GetName()
}

// CheckPlatformNamespace returns nil when ns carries every label in want
// (the namespace the backend controller created for this tenant namespace),
// and an error naming what is wrong otherwise. Pure.
func CheckPlatformNamespace(ns *corev1.Namespace, want map[string]string) error {
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if got, ok := ns.Labels[k]; !ok || got != want[k] {
			return fmt.Errorf("namespace %s exists but was not created for this tenant namespace by the backend controller "+
				"(label %s is %q, want %q), so nothing is written there: a platform administrator must remove or relabel it",
				ns.Name, k, got, want[k])
		}
	}
	return nil
}

// ensureNamespace creates the platform namespace name of tenant namespace
// tenant, labelled want, when it is missing and refuses one that lacks those
// labels, then creates the objects provision names there (provision.go; nil:
// none). A namespace found once is remembered; forgetNamespace drops it when
// a write there finds it gone.
func (r *Reconciler) ensureNamespace(ctx context.Context, name, tenant string, want map[string]string, provision NamespaceProvisioning) error {
	if _, ok := r.namespaces.Load(name); ok {
		return nil
	}
	ns := &corev1.Namespace{}
	err := r.APIReader.Get(ctx, client.ObjectKey{Name: name}, ns)
	switch {
	case apierrors.IsNotFound(err):
		ns = &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: want}}
		switch err := r.Client.Create(ctx, ns); {
		case err == nil:
			log.FromContext(ctx).Info("created platform namespace", "namespace", name, "tenantNamespace", tenant)
		case apierrors.IsAlreadyExists(err):
			// Another worker's create came first.
		default:
			return fmt.Errorf("creating the platform namespace %s: %w", name, err)
		}
		if err := r.APIReader.Get(ctx, client.ObjectKey{Name: name}, ns); err != nil {
			return err
		}
	case err != nil:
		return err
	}
	if !ns.DeletionTimestamp.IsZero() {
		return reconcileerr.Waiting("NamespaceTerminating", 5*time.Second,
			fmt.Errorf("the platform namespace %s is being deleted; waiting to create it again", name))
	}
	if err := CheckPlatformNamespace(ns, want); err != nil {
		// The reconciler looks again from time to time, as no event of ours
		// says when an administrator fixes it.
		return reconcileerr.Foreign(appsv1alpha1.ReasonPlatformNamespaceNotOwned, err)
	}
	if err := r.ensureProvisioned(ctx, name, tenant, provision); err != nil {
		return err
	}
	r.namespaces.Store(name, struct{}{})
	return nil
}

func (r *Reconciler) forgetNamespace(name string) { r.namespaces.Delete(name) }

// legacyTarget is the backing object inst controls (by ownerReference) in
// its own namespace, written before the backend moved its objects to a
// platform namespace; nil when there is none. It is read from the cache:
// every version wrote the application labels the cache selects (CacheOptions),
// so an object there without them was not written by the backend and is no
// earlier version's. No create follows a miss here, and a legacy object is
// never written again, so no read of the API server is needed to confirm one:
// an instance costs no request here on any reconcile.
func (r *Reconciler) legacyTarget(ctx context.Context, def *Definition, inst *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	key := &unstructured.Unstructured{}
	key.SetGroupVersionKind(r.Backend.TargetGVK())
	key.SetNamespace(inst.GetNamespace())
	key.SetName(r.Backend.TargetName(def, inst))
	live, err := ssa.Get(ctx, r.Client, key)
	if err != nil || live == nil {
		return nil, err
	}
	if ownership.IsControlledBy(live, ownerOf(inst)) {
		return live, nil
	}
	return nil, nil
}

// LegacyMessage tells the platform team what to do about a backing object an
// earlier version wrote in the tenant's namespace.
func LegacyMessage(live client.Object, platformNS string) string {
	return fmt.Sprintf("%s %s/%s was written by an earlier version in the tenant's namespace, where the tenant can write its plan, "+
		"state and runner; it is left untouched (not updated, not deleted) and no new one is created in %s, which would manage the same "+
		"resources from an empty state. A platform administrator moves it: see \"Migrating\" in docs/terraform-backend.md",
		live.GetObjectKind().GroupVersionKind().Kind, live.GetNamespace(), live.GetName(), platformNS)
}

// OwnerKey names an instance in the owner index (ownerIndex): its kind,
// namespace and name. Pure.
func OwnerKey(kind, namespace, name string) string { return kind + "/" + namespace + "/" + name }

// OwnerKeyOf is the owner key a backing object is indexed under: the
// instance its application labels name, in the namespace its namespace
// label names or, without one, in its own namespace (an object an earlier
// version wrote next to its instance carries no namespace label). None for
// an object without the application kind and name labels. An object in a
// platform namespace is never looked for by an instance of that namespace
// (no instance lives there), so its own namespace is no key of it. Pure.
func OwnerKeyOf(o client.Object) (string, bool) {
	l := o.GetLabels()
	kind, name := l[appsv1alpha1.LabelApplicationKind], l[appsv1alpha1.LabelApplicationName]
	if kind == "" || name == "" {
		return "", false
	}
	ns := l[appsv1alpha1.LabelApplicationNamespace]
	if ns == "" {
		ns = o.GetNamespace()
	}
	return OwnerKey(kind, ns, name), true
}

// cachedByOwner returns the cached backing objects whose labels name the
// instance kind namespace/name (ownerIndex), in any namespace: copies, as a
// read through the cache returns.
func (r *Reconciler) cachedByOwner(_ context.Context, kind, namespace, name string) ([]unstructured.Unstructured, error) {
	if r.owned == nil {
		return nil, errors.New("the backing objects are not indexed by instance")
	}
	objs, err := r.owned.objects(OwnerKey(kind, namespace, name))
	if err != nil {
		return nil, err
	}
	out := make([]unstructured.Unstructured, 0, len(objs))
	for _, obj := range objs {
		switch o := obj.(type) {
		case *compactcache.Object:
			u, err := o.Unpack()
			if err != nil {
				return nil, err
			}
			out = append(out, *u)
		case *unstructured.Unstructured:
			out = append(out, *o.DeepCopy())
		default:
			return nil, fmt.Errorf("a cached %s is a %T", r.Backend.TargetGVK().Kind, obj)
		}
	}
	return out, nil
}

// Owns reports whether o is a backing object of inst: in a platform namespace
// with labels naming inst whole (uid included), or in inst's namespace with a
// controller ownerReference to it. Pure.
func Owns(o, inst client.Object) bool {
	owner := ownership.Owner{GVK: inst.GetObjectKind().GroupVersionKind(), Name: inst.GetName(), UID: string(inst.GetUID())}
	return LabelsName(o.GetLabels(), inst) || o.GetNamespace() == inst.GetNamespace() && ownership.IsControlledBy(o, owner)
}

// ownedTargets lists the backing objects inst owns (Owns), wherever they are:
// those in a platform namespace whose uid label is inst's, and those in inst's
// namespace it controls by ownerReference (the layout of the Helm backend,
// and of Terraform objects written by earlier versions). It reads the cache
// (ownerIndex), which holds every object the backend wrote but one it created
// a moment ago: the caller reads those (see live) and passes them as known.
func (r *Reconciler) ownedTargets(ctx context.Context, inst client.Object, known ...*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	cached, err := r.cachedByOwner(ctx, inst.GetObjectKind().GroupVersionKind().Kind, inst.GetNamespace(), inst.GetName())
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for i := range cached {
		if o := &cached[i]; Owns(o, inst) {
			out = append(out, o)
		}
	}
	for _, o := range known {
		if o != nil && Owns(o, inst) && !containsUID(out, o) {
			out = append(out, o)
		}
	}
	return out, nil
}

// deleteOwned deletes the backing objects inst owns (and that are not being
// deleted already) and returns those still present. known are backing
// objects the caller read (nil entries ignored), kept when inst owns them.
// An object deleted at once is not returned, so the caller can let the
// instance go in the same pass; one that stays (a finalizer holds it while
// its resources are destroyed) is recorded on the instance as
// BackingObjectDeleted.
func (r *Reconciler) deleteOwned(ctx context.Context, inst client.Object, known ...*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	owned, err := r.ownedTargets(ctx, inst, known...)
	if err != nil {
		return nil, err
	}
	var left []*unstructured.Unstructured
	for _, o := range owned {
		if !o.GetDeletionTimestamp().IsZero() {
			left = append(left, o)
			continue
		}
		gone, err := r.deleteBacking(ctx, o)
		if err != nil {
			return nil, err
		}
		if gone {
			log.FromContext(ctx).V(1).Info("deleted a backing object with its instance", "kind", o.GetKind(), "namespace", o.GetNamespace(), "name", o.GetName())
			continue
		}
		left = append(left, o)
		r.events().Normal(inst, nil, appsv1alpha1.EventBackingObjectDeleted, "Delete",
			fmt.Sprintf("deleted %s %s/%s with the instance; waiting for its finalizers", o.GetKind(), o.GetNamespace(), o.GetName()))
	}
	return left, nil
}

// deleteBacking deletes o, a backing object as the cache (or a read) shows
// it, and reports whether it is gone. An object shown with no finalizer is
// deleted on the condition that it is still that version: when the delete
// succeeds, nothing held it and the API server removed it at once, so no
// watch event needs to be waited for. An object that changed since (a
// finalizer may have come) is then deleted whatever its version, and counts
// as still present until its deletion event.
func (r *Reconciler) deleteBacking(ctx context.Context, o *unstructured.Unstructured) (bool, error) {
	free := len(o.GetFinalizers()) == 0
	pre := client.Preconditions{UID: ptr.To(o.GetUID())}
	if free {
		pre.ResourceVersion = ptr.To(o.GetResourceVersion())
	}
	err := r.Client.Delete(ctx, o, client.PropagationPolicy(metav1.DeletePropagationBackground), pre)
	if free && apierrors.IsConflict(err) {
		free = false
		err = r.Client.Delete(ctx, o, client.PropagationPolicy(metav1.DeletePropagationBackground),
			client.Preconditions{UID: ptr.To(o.GetUID())})
	}
	switch {
	case apierrors.IsNotFound(err):
		return true, nil // deleted already; the cache has not seen it go yet
	case err != nil:
		return false, err
	}
	return free, nil
}

func containsUID(list []*unstructured.Unstructured, o *unstructured.Unstructured) bool {
	for _, e := range list {
		if e.GetUID() == o.GetUID() {
			return true
		}
	}
	return false
}

// ourFinalizers are the finalizers this backend may have put on instances of
// def (nil def: of any definition).
func (r *Reconciler) ourFinalizers(def *Definition) []string {
	fz := r.Components.Finalizer
	out := slices.Clone(fz.Finalizers())
	if def != nil {
		if f := fz.Finalizer(def); f != "" && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// holdsOurs reports whether o carries one of the backend's finalizers.
func (r *Reconciler) holdsOurs(o client.Object) bool {
	for _, f := range o.GetFinalizers() {
		if slices.Contains(r.ourFinalizers(nil), f) {
			return true
		}
	}
	return false
}

// our write; it is created again on the next pass.
var errNamespaceGone = errors.New("the platform namespace is gone")

// applyErrNamespaceGone maps an apply error caused by a missing namespace.
func (r *Reconciler) applyErrNamespaceGone(err error, ns string) error {
	if apierrors.IsNotFound(err) {
		r.forgetNamespace(ns)
		return fmt.Errorf("%w: %v", errNamespaceGone, err)
	}
	return err
}

func isNil(o client.Object) bool { return reflect.ValueOf(o).IsNil() }

// Stale reports whether live, the object at inst's backing object's name in
// a platform namespace, was written for an earlier instance of the same
// kind, namespace and name (another uid): that instance is gone, so the
// object is deleted as its finalizer would have done, and then written anew
// for inst. Pure.
func Stale(live, inst client.Object) bool {
	if live == nil || isNil(live) {
		return false
	}
	l := live.GetLabels()
	uid := l[appsv1alpha1.LabelApplicationUID]
	return uid != "" && uid != string(inst.GetUID()) &&
		l[appsv1alpha1.LabelApplicationKind] == inst.GetObjectKind().GroupVersionKind().Kind &&
		l[appsv1alpha1.LabelApplicationNamespace] == inst.GetNamespace() &&
		l[appsv1alpha1.LabelApplicationName] == inst.GetName()
}

// replaceStale deletes a stale backing object (see Stale) and asks to be
// called again once it is gone.
func (r *Reconciler) replaceStale(ctx context.Context, live *unstructured.Unstructured) error {
	if live.GetDeletionTimestamp().IsZero() {
		if err := r.Client.Delete(ctx, live, client.PropagationPolicy(metav1.DeletePropagationBackground),
			client.Preconditions{UID: ptr.To(live.GetUID())}); client.IgnoreNotFound(err) != nil {
			return err
		}
		log.FromContext(ctx).Info("deleted a backing object of an earlier instance of the same name", "object", live.GetNamespace()+"/"+live.GetName(),
			"uid", live.GetLabels()[appsv1alpha1.LabelApplicationUID])
	}
	return reconcileerr.Waiting(appsv1alpha1.ReasonProgressing, 2*time.Second,
		fmt.Errorf("%s %s/%s belonged to an earlier instance of this name and is being deleted; it is written anew once it is gone",
			live.GetKind(), live.GetNamespace(), live.GetName()))
}

// collectOrphans deletes the backing objects in platform namespaces that name
// an instance which no longer exists: no garbage collector follows labels
// across namespaces, and an instance goes without a finalizer when its
// definition does not destroy resources (or a tenant removed it from its own
// instance, or it was deleted while this controller was not running). Called
// when a request finds no instance. The candidates are read from the cache
// (ownerIndex): an object the cache does not hold yet brings its own request
// here once it does, through the watch of the backing objects. Only when
// there is one to delete is the instance's absence confirmed with the API
// server, which has the last word (the cache may be behind, or the instance
// in another shard), unless the watch saw the very instance each orphan names
// go (seenGone). So an instance deleted through its finalizer, whose objects
// are gone, costs no request here, and one deleted without, while this
// controller watched, the deletes of its objects alone.
func (r *Reconciler) collectOrphans(ctx context.Context, req dynamicwatch.Request) error {
	cached, err := r.cachedByOwner(ctx, req.GVK.Kind, req.Namespace, req.Name)
	if err != nil {
		return err
	}
	var orphans []*unstructured.Unstructured
	for i := range cached {
		if o := &cached[i]; Orphan(o, req) {
			orphans = append(orphans, o)
		}
	}
	if len(orphans) == 0 {
		return nil
	}
	if !r.seenGone(req, orphans) {
		probe := &metav1.PartialObjectMetadata{}
		probe.SetGroupVersionKind(req.GVK)
		if err := r.APIReader.Get(ctx, req.NamespacedName, probe); !apierrors.IsNotFound(err) {
			return err // it exists after all (a stale cache), or the read failed
		}
	}
	for _, o := range orphans {
		if err := r.Client.Delete(ctx, o, client.PropagationPolicy(metav1.DeletePropagationBackground),
			client.Preconditions{UID: ptr.To(o.GetUID())}); client.IgnoreNotFound(err) != nil {
			return err
		}
		log.FromContext(ctx).Info("deleted a backing object whose instance is gone", "object", o.GetNamespace()+"/"+o.GetName(),
			"instance", req.String(), "uid", o.GetLabels()[appsv1alpha1.LabelApplicationUID])
	}
	return nil
}

// seenGone reports whether the instance watch saw the deletion of the very
// instance (by uid) each of orphans names, with no shard selector that
// could turn a relabelling into a deletion event: uids are never reused, so
// no read of the API server could say more.
func (r *Reconciler) seenGone(req dynamicwatch.Request, orphans []*unstructured.Unstructured) bool {
	v, ok := r.deleted.Load(req)
	if !ok || r.Sharded {
		return false
	}
	for _, o := range orphans {
		if o.GetLabels()[appsv1alpha1.LabelApplicationUID] != string(v.(types.UID)) {
			return false
		}
	}
	return true
}

// Orphan reports whether o, a backing object, is one collectOrphans deletes
// once the instance req names is confirmed gone: its labels name that
// instance's kind, namespace and name (any uid: every instance of that name
// is gone), it carries a uid label (the backend wrote it in a platform
// namespace; an object without one is not deleted), and it is not being
// deleted already. Pure.
func Orphan(o client.Object, req dynamicwatch.Request) bool {
	l := o.GetLabels()
	return o.GetDeletionTimestamp().IsZero() && l[appsv1alpha1.LabelApplicationUID] != "" &&
		l[appsv1alpha1.LabelApplicationKind] == req.GVK.Kind && l[appsv1alpha1.LabelApplicationName] == req.Name &&
		l[appsv1alpha1.LabelApplicationNamespace] == req.Namespace
}
