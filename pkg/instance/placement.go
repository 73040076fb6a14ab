package instance

// Where backing objects live (Components.Placement): in the instance's own
// namespace, tied to it by a controller ownerReference (InstanceNamespace),
// or in a platform namespace per tenant namespace, tied to it by labels
// (PlatformNamespaces). The decisions of the latter are in platform.go.

import (
	"context"
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/dynamicwatch"
	"github.com/cozyplane/cozyplane/pkg/ownership"
	"github.com/cozyplane/cozyplane/pkg/reconcileerr"
)

// Placement decides where an instance's backing object lives and how it is
// tied to the instance. It is InstanceNamespace or PlatformNamespaces.
type Placement interface {
	// Namespace is the namespace of inst's backing object. Pure.
	Namespace(inst client.Object) string
	// prepare runs before the backing object is read: whatever must hold
	// before anything is written there.
	prepare(ctx context.Context, r *Reconciler, t *target) error
	// own ties desired, the backing object of inst, to inst.
	own(desired, inst *unstructured.Unstructured)
	// decide says what the instance may do with t.live.
	decide(ctx context.Context, r *Reconciler, t *target) (ownership.Verdict, error)
	// applyFailed maps a failed write of a backing object in namespace ns.
	applyFailed(r *Reconciler, err error, ns string) error
	// gone cleans up after an instance that no longer exists.
	gone(ctx context.Context, r *Reconciler, req dynamicwatch.Request) error
}

// InstanceNamespace places the backing object in the instance's namespace,
// with a controller ownerReference to the instance: it goes with the
// instance (deleted by the reconciler when it sees the instance go, or by the
// garbage collector; collectTarget), and an object at its name that upstream
// Cozystack's API wrote may be adopted (AdoptClaim).
type InstanceNamespace struct{}

var _ Placement = InstanceNamespace{}

// Namespace implements Placement.
func (InstanceNamespace) Namespace(inst client.Object) string { return inst.GetNamespace() }

func (InstanceNamespace) prepare(context.Context, *Reconciler, *target) error { return nil }

func (InstanceNamespace) own(desired, inst *unstructured.Unstructured) {
	desired.SetOwnerReferences([]metav1.OwnerReference{ownership.ControllerRef(ownerOf(inst))})
}

func (InstanceNamespace) decide(_ context.Context, _ *Reconciler, t *target) (ownership.Verdict, error) {
	return ownership.Decide(t.desired.GetKind(), t.live, AdoptClaim(t.def, t.inst))
}

func (InstanceNamespace) applyFailed(_ *Reconciler, err error, _ string) error { return err }

func (InstanceNamespace) gone(ctx context.Context, r *Reconciler, req dynamicwatch.Request) error {
	r.forgetTarget(req)
	return r.collectTarget(ctx, req)
}

// PlatformNamespaces places the backing object in a namespace the platform
// owns, one per tenant namespace, instead of the instance's own (the
// Terraform backend: a tenant with edit in its namespace could otherwise
// rewrite the saved plan or the state, or exec into the runner). The
// reconciler then:
//
//   - creates the platform namespace when it is missing, with the labels
//     Namespaces gives, and writes nothing in a namespace of that name that
//     lacks them (ReasonPlatformNamespaceNotOwned); then the objects
//     Provision names there;
//   - marks the backing object with labels instead of an ownerReference
//     (which cannot cross namespaces): the application labels plus the
//     instance's namespace and uid, and decides ownership on the uid label;
//   - maps events of backing objects to instances through those labels;
//   - leaves a backing object the instance controls in its own namespace
//     (written by an earlier version) untouched and reports it
//     (ReasonLegacyBackingObject);
//   - replaces one an earlier instance of the same name left (Stale), and
//     deletes those whose instance is gone (no garbage collector follows
//     labels across namespaces): that is how the backing objects of an
//     instance no Finalizer holds go, after it;
//   - with a Finalizer holding an instance, deletes its backing objects
//     before the instance goes.
type PlatformNamespaces struct {
	Namespaces TargetNamespacing
	// Provision, when not nil, names objects the backing objects need in
	// each platform namespace.
	Provision NamespaceProvisioning
}

// TargetNamespacing names the platform namespaces of PlatformNamespaces.
type TargetNamespacing interface {
	// TargetNamespace names the namespace of the backing objects of
	// instances in namespace ns: a valid namespace name, never ns. Pure.
	TargetNamespace(ns string) string
	// TargetNamespaceLabels are the labels the target namespace of tenant
	// namespace ns carries: the reconciler creates it with them and
	// refuses a namespace of that name without them. Pure.
	TargetNamespaceLabels(ns string) map[string]string
}

var _ Placement = PlatformNamespaces{}

// Namespace implements Placement.
func (p PlatformNamespaces) Namespace(inst client.Object) string {
	return p.Namespaces.TargetNamespace(inst.GetNamespace())
}

// prepare refuses to write anything for an instance whose backing object an
// earlier version wrote in the tenant's namespace, and makes sure the
// platform namespace is there and the backend's.
func (p PlatformNamespaces) prepare(ctx context.Context, r *Reconciler, t *target) error {
	legacy, err := r.legacyTarget(ctx, t.def, t.inst)
	if err != nil {
		return err
	}
	if legacy != nil {
		return reconcileerr.Stalled(appsv1alpha1.ReasonLegacyBackingObject, errors.New(LegacyMessage(legacy, t.ns)))
	}
	tenant := t.inst.GetNamespace()
	return r.ensureNamespace(ctx, t.ns, tenant, p.Namespaces.TargetNamespaceLabels(tenant), p.Provision)
}

func (PlatformNamespaces) own(desired, inst *unstructured.Unstructured) {
	labels := desired.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	for k, v := range PlatformLabels(inst) {
		labels[k] = v
	}
	desired.SetLabels(labels)
}

// decide replaces a stale backing object (an earlier instance's), and
// otherwise reads ownership from the labels (DecidePlatform).
func (PlatformNamespaces) decide(ctx context.Context, r *Reconciler, t *target) (ownership.Verdict, error) {
	if Stale(t.live, t.inst) {
		return ownership.Absent, r.replaceStale(ctx, t.live)
	}
	return DecidePlatform(t.desired.GetKind(), t.live, t.inst)
}

func (PlatformNamespaces) applyFailed(r *Reconciler, err error, ns string) error {
	return r.applyErrNamespaceGone(err, ns)
}

func (PlatformNamespaces) gone(ctx context.Context, r *Reconciler, req dynamicwatch.Request) error {
	r.forgetTarget(req)
	return r.collectOrphans(ctx, req)
}
