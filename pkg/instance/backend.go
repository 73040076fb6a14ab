// Package instance is the backend-neutral half of every backend controller.
//
// A Backend (Helm, Terraform) knows one thing: how an instance of a
// user-facing kind becomes a backing object, and how that object's status
// reads back onto the instance. Everything else is here, once:
//
//   - dynamic watches on every kind the backend serves, added and removed as
//     ApplicationDefinitions come and go (pkg/dynamicwatch);
//   - the backing object's name, namespace and labels from the common
//     contract, and a controller ownerReference to the instance;
//   - the ownership guard: an object with the derived name that the instance
//     does not control is never overwritten; the instance says why. The one
//     exception is adoption: an instance whose apps.cozystack.io/adopt
//     annotation names the object's uid takes over an uncontrolled object
//     written for it (labels naming its kind and name), as upstream
//     Cozystack's API wrote them (see AdoptClaim);
//   - server-side apply with one field manager, skipped when nothing changed,
//     so a settled system writes nothing and other actors' fields survive;
//   - the status envelope: Ready mirrors the backing object, observedGeneration,
//     version, per-backend details, written only when it changed;
//   - events for creation, drift correction and refusals;
//   - bringing every backing object of a kind to the new desired state when
//     its definition changes.
package instance

import (
	"reflect"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/ownership"
)

// Backend materialises instances of the kinds whose definitions name it.
type Backend interface {
	// Type is the backend type this implementation serves.
	Type() cozyv1alpha1.BackendType

	// TargetGVK is the kind of the backing objects.
	TargetGVK() schema.GroupVersionKind

	// TargetName is the backing object's name for an instance (in the
	// instance's namespace): the definition's prefix and the instance name.
	TargetName(def *Definition, inst *unstructured.Unstructured) string

	// Build returns the desired backing object for an instance: its spec and
	// any labels or annotations of its own. The reconciler sets apiVersion,
	// kind, name, namespace, the common labels and the ownerReference. live
	// is the backing object as it is now (nil when absent), for the few
	// fields whose desired value depends on what the backing object's own
	// controller reports (a pending Terraform plan). Build is pure; a
	// returned reconcileerr.Stalled error is reported on the instance (the
	// tenant or the platform team must change something). Because the whole
	// desired state is rebuilt from the definition every time, it also brings
	// an existing backing object in line when the definition changes.
	Build(def *Definition, inst, live *unstructured.Unstructured) (*unstructured.Unstructured, error)

	// ProjectStatus reads the backing object's status onto the instance:
	// Ready (and the backend's own conditions), version and backend details.
	// target is nil while the backing object does not exist yet.
	ProjectStatus(def *Definition, inst *unstructured.Unstructured, target *unstructured.Unstructured, status *appsv1alpha1.ApplicationStatus)
}

// Components are how a backend differs from the common loop, chosen when the
// controller is built, the way crossplane-runtime's managed reconciler takes
// its initializers, connecters and finalizers: the loop calls each through
// its interface and never asks which backend it serves. A component left
// out is a default that does nothing.
type Components struct {
	// Placement decides where backing objects live and how they are tied to
	// their instances. Default: InstanceNamespace.
	Placement Placement
	// Finalizer holds instances while their backing objects are deleted.
	// Default: none; the garbage collector follows the ownerReference.
	Finalizer Finalizer
	// Storage names a platform namespace a backing object points its own
	// controller at for data the tenant must not write. Default: none.
	Storage Storage
	// LiveLabels are labels the backend sets when it creates a backing
	// object and that another actor then rewrites at run time (Flux's shard
	// operator moves a HelmRelease between helm-controller shards by
	// relabelling it). Once the live object carries such a label, its live
	// value is the desired one: the reconciler never reverts it, never
	// removes it, and never writes because it moved.
	LiveLabels []string
}

// withDefaults fills in the components left out.
func (c Components) withDefaults() Components {
	if c.Placement == nil {
		c.Placement = InstanceNamespace{}
	}
	if c.Finalizer == nil {
		c.Finalizer = noFinalizer{}
	}
	if c.Storage == nil {
		c.Storage = noStorage{}
	}
	return c
}

// findsOwned reports whether the reconciler looks up an instance's backing
// objects by owner (ownerIndex): to delete them before it lets a finalizing
// instance go, and to collect those in platform namespaces whose instance is
// gone. A backend with neither (the Helm backend: its object sits at a name
// derived from the instance's, in the instance's namespace, and goes with
// it) keeps no such index, which would cost an entry per cached object.
// Pure.
func (c Components) findsOwned() bool {
	switch c.Placement.(type) {
	case PlatformNamespaces, *PlatformNamespaces:
		return true
	}
	return len(c.Finalizer.Finalizers()) > 0
}

// Finalizer holds an instance while its backing objects are deleted (e.g.
// Terraform destroying cloud resources). An instance deleted while it
// carries one of Finalizers is let go only once the backing objects it owns
// are gone, and that holds after its definition moved to another backend:
// the reconciler keeps a metadata-only watch on such kinds, so they can
// still be deleted (and the backing objects of those that carry none go
// after them); while such an instance lives, its backing objects are left
// as they are (never destroyed by surprise because a definition changed).
type Finalizer interface {
	// Finalizer returns the finalizer to keep on instances of def, or ""
	// when instances of def can go at once.
	Finalizer(def *Definition) string
	// Finalizers lists every finalizer the backend may have put on an
	// instance, current and former; the former ones are swapped for
	// Finalizer's.
	Finalizers() []string
}

type noFinalizer struct{}

func (noFinalizer) Finalizer(*Definition) string { return "" }
func (noFinalizer) Finalizers() []string         { return nil }

// Storage is a platform namespace, one per tenant namespace, that a backing
// object staying in the instance's namespace names for data its own
// controller keeps and the tenant must not write (the Helm backend: Helm's
// release records, through the HelmRelease's spec.storageNamespace). Before
// writing a desired backing object that names such a namespace, the
// reconciler creates it when it is missing, with the backend's labels, and
// writes nothing when a namespace of that name lacks them
// (ReasonPlatformNamespaceNotOwned), as for PlatformNamespaces; the backing
// object itself keeps its ownerReference and its place.
type Storage interface {
	// StorageNamespace is the platform namespace the desired backing object
	// (as Build and the common contract made it) names, or "" when it names
	// none (an earlier version's object keeps its data where it is). Pure.
	StorageNamespace(desired *unstructured.Unstructured) string
	// StorageNamespaceLabels are the labels the storage namespace of tenant
	// namespace ns carries. Pure.
	StorageNamespaceLabels(ns string) map[string]string
}

type noStorage struct{}

func (noStorage) StorageNamespace(*unstructured.Unstructured) string { return "" }
func (noStorage) StorageNamespaceLabels(string) map[string]string    { return nil }

// Definition is an ApplicationDefinition resolved for a backend: the legacy
// spec.release read as a Helm backend, the served kind spelled out.
type Definition struct {
	// Object is the definition as read from the API server.
	Object *cozyv1alpha1.ApplicationDefinition
	// Backend is the resolved backend (legacy release normalised).
	Backend cozyv1alpha1.ApplicationBackend
	// GVK is the served kind, apps.cozystack.io/v1alpha1.
	GVK schema.GroupVersionKind
}

// Name is the definition's name.
func (d *Definition) Name() string { return d.Object.Name }

// Prefix is the backing-object name prefix of the resolved backend.
func (d *Definition) Prefix() string {
	switch {
	case d.Backend.Helm != nil:
		return d.Backend.Helm.Prefix
	case d.Backend.Terraform != nil:
		return d.Backend.Terraform.Prefix
	}
	return ""
}

// Labels are the labels the definition adds to every backing object.
func (d *Definition) Labels() map[string]string {
	switch {
	case d.Backend.Helm != nil:
		return d.Backend.Helm.Labels
	case d.Backend.Terraform != nil:
		return d.Backend.Terraform.Labels
	}
	return nil
}

// DestroysOnDeletion reports whether the definition's Terraform backend
// destroys an instance's resources when it is deleted.
func (d *Definition) DestroysOnDeletion() bool {
	return d.Backend.Terraform != nil && d.Backend.Terraform.DestroyResourcesOnDeletion
}

// Resolve reads a definition for the backends. It fails when the definition
// names no backend.
func Resolve(obj *cozyv1alpha1.ApplicationDefinition) (*Definition, error) {
	be, err := obj.ResolvedBackend()
	if err != nil {
		return nil, err
	}
	return &Definition{
		Object:  obj,
		Backend: be,
		GVK:     appsv1alpha1.GroupVersion.WithKind(obj.Spec.Application.Kind),
	}, nil
}

// ApplicationLabels name the instance a backing object belongs to: its kind,
// group and name. They are also what an object must carry to be adopted.
func ApplicationLabels(def *Definition, inst client.Object) map[string]string {
	return map[string]string{
		appsv1alpha1.LabelApplicationKind:  def.GVK.Kind,
		appsv1alpha1.LabelApplicationGroup: def.GVK.Group,
		appsv1alpha1.LabelApplicationName:  inst.GetName(),
	}
}

// ControlAnnotations are instance annotations that instruct our controllers
// rather than describe the application, and kubectl's own bookkeeping; they
// are not copied to backing objects. kubectl's last-applied-configuration
// holds the whole instance as last applied with client-side apply: on the
// backing object nothing reads it, it would duplicate the spec in the
// object's metadata (and count against its 256 KiB annotation budget) and
// change with every kubectl apply.
var ControlAnnotations = []string{
	appsv1alpha1.AnnotationAdopt,
	appsv1alpha1.AnnotationApprovePlan,
	appsv1alpha1.AnnotationSuspend,
	// Forwarded verbatim instead (operations.go, ForwardedAnnotations).
	appsv1alpha1.AnnotationReconcileRequestedAt,
	appsv1alpha1.AnnotationReconcileForceAt,
	appsv1alpha1.AnnotationReconcileResetAt,
	"kubectl.kubernetes.io/last-applied-configuration",
}

// InstanceAnnotations are the instance's own annotations as upstream
// Cozystack puts them on a HelmRelease: each key prefixed with
// apps.cozystack.io- (team/owner=a becomes apps.cozystack.io-team/owner=a),
// minus the ControlAnnotations. Nil when there are none.
func InstanceAnnotations(inst client.Object) map[string]string {
	var out map[string]string
	for k, v := range inst.GetAnnotations() {
		if slices.Contains(ControlAnnotations, k) {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[appsv1alpha1.InstanceAnnotationPrefix+k] = v
	}
	return out
}

// CommonLabels are the labels of the common contract on a backing object:
// the application kind, group and name, the definition's labels, and the
// instance's own labels prefixed with apps.cozystack.io-.
func CommonLabels(def *Definition, inst client.Object) map[string]string {
	out := map[string]string{}
	for k, v := range def.Labels() {
		out[k] = v
	}
	for k, v := range inst.GetLabels() {
		out[appsv1alpha1.InstanceLabelPrefix+k] = v
	}
	for k, v := range ApplicationLabels(def, inst) {
		out[k] = v
	}
	return out
}

// FollowLive returns labels with every key in keys that live carries set to
// live's value: those labels belong to another actor once the object exists
// (see Components.LiveLabels). labels is modified and returned. Pure.
func FollowLive(labels map[string]string, live client.Object, keys []string) map[string]string {
	if live == nil || reflect.ValueOf(live).IsNil() {
		return labels
	}
	for _, k := range keys {
		if v, ok := live.GetLabels()[k]; ok {
			if labels == nil {
				labels = map[string]string{}
			}
			labels[k] = v
		}
	}
	return labels
}

// AdoptHint tells a user what to do about a HelmRelease (or other backing
// object) with the derived name that the instance may not take over.
const AdoptHint = "if upstream Cozystack wrote it for this instance, run cozyplane migrate: it annotates the instance with " +
	appsv1alpha1.AnnotationAdopt + "=<the object's uid>, which lets the controller adopt it without changing its spec"

// AdoptClaim is what an instance claims about the object at its backing
// object's name: controlled by it, or adoptable when the instance's
// apps.cozystack.io/adopt annotation names the object's uid and the object
// carries the application labels naming this instance's kind and name.
func AdoptClaim(def *Definition, inst *unstructured.Unstructured) ownership.Claim {
	return ownership.Claim{
		Owner:       ownerOf(inst),
		AdoptUID:    inst.GetAnnotations()[appsv1alpha1.AnnotationAdopt],
		AdoptLabels: ApplicationLabels(def, inst),
		Hint:        AdoptHint,
	}
}
