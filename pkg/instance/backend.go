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

// LiveLabeling is implemented by backends whose backing objects carry labels
// that the backend sets when it creates them and that another actor then
// rewrites at run time (Flux's shard operator moves a HelmRelease between
// helm-controller shards by relabelling it). Once the live object carries
// such a label, its live value is the desired one: the reconciler never
// reverts it, never removes it, and never writes because it moved.
type LiveLabeling interface {
	LiveLabels() []string
}

// Finalizing is implemented by backends that must hold an instance while its
// backing object is deleted (e.g. Terraform destroying cloud resources).
type Finalizing interface {
	// Finalizer returns the finalizer to keep on instances of def, or "" when
	// instances of def can go at once.
	Finalizer(def *Definition) string
}

// TargetNamespacing is implemented by backends whose backing objects live
// in a namespace the platform owns, one per tenant namespace, instead of the
// instance's own (the Terraform backend: a tenant with edit in its namespace
// could otherwise rewrite the saved plan or the state, or exec into the
// runner). For such a backend the reconciler:
//
//   - creates the target namespace when it is missing, with the backend's
//     labels, and writes nothing in a namespace of that name that lacks
//     them (ReasonPlatformNamespaceNotOwned);
//   - marks the backing object with labels instead of an ownerReference
//     (which cannot cross namespaces): the application labels plus the
//     instance's namespace and uid, and decides ownership on the uid label;
//   - maps events of backing objects to instances through those labels;
//   - leaves a backing object the instance controls in its own namespace
//     (written by an earlier version) untouched and reports it
//     (ReasonLegacyBackingObject);
//   - relies on the backend's Finalizing finalizer, which must be non-empty
//     for every definition, to delete the backing object before the
//     instance goes.
//
// The decisions are in platform.go.
type TargetNamespacing interface {
	// TargetNamespace names the namespace of the backing objects of
	// instances in namespace ns: a valid namespace name, never ns. Pure.
	TargetNamespace(ns string) string
	// TargetNamespaceLabels are the labels the target namespace of tenant
	// namespace ns carries: the reconciler creates it with them and
	// refuses a namespace of that name without them. Pure.
	TargetNamespaceLabels(ns string) map[string]string
}

// StorageNamespacing is implemented by backends whose backing objects stay in
// the instance's namespace but name a platform namespace, one per tenant
// namespace, where their own controller keeps data the tenant must not write
// (the Helm backend: Helm's release records, through the HelmRelease's
// spec.storageNamespace). Before writing a desired backing object that names
// such a namespace, the reconciler creates it when it is missing, with the
// backend's labels, and writes nothing when a namespace of that name lacks
// them (ReasonPlatformNamespaceNotOwned), as for TargetNamespacing; the
// backing object itself keeps its ownerReference and its place.
type StorageNamespacing interface {
	// StorageNamespace is the platform namespace the desired backing object
	// (as Build and the common contract made it) names, or "" when it names
	// none (an earlier version's object keeps its data where it is). Pure.
	StorageNamespace(desired *unstructured.Unstructured) string
	// StorageNamespaceLabels are the labels the storage namespace of tenant
	// namespace ns carries. Pure.
	StorageNamespaceLabels(ns string) map[string]string
}

// Releasing is implemented by Finalizing backends that let go of instances
// whose definition names another backend now. The reconciler keeps a
// metadata-only watch on such kinds, filtered to instances that carry one of
// Finalizers, and when one of them is deleted, it deletes the backing objects
// that instance owns (by label or ownerReference) and then removes the
// finalizers; while such an instance lives, its backing objects are left as
// they are (never destroyed by surprise because a definition changed).
type Releasing interface {
	// Finalizers lists every finalizer the backend may have put on an
	// instance, current and former.
	Finalizers() []string
}

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
// (see LiveLabeling). labels is modified and returned. Pure.
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
