package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/conditions"
	"github.com/cozyplane/cozyplane/pkg/manager"
	"github.com/cozyplane/cozyplane/pkg/ownership"
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
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingadmissionpolicies;validatingadmissionpolicybindings,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=apps.cozystack.io,resources=*,verbs=list
// +kubebuilder:rbac:groups=apiregistration.k8s.io,resources=apiservices,resourceNames=v1alpha1.apps.cozystack.io,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;create;update

// ReasonForeignPolicy: a ValidatingAdmissionPolicy (or binding) with the
// name the definition needs exists and was not created for it; it is left
// untouched. (It belongs with the other reasons in
// api/cozystack/v1alpha1/conditions.go.)
const ReasonForeignPolicy = "ForeignPolicy"

// Event reasons on ApplicationDefinitions.
const (
	EventCRDCreated      = "CRDCreated"
	EventCRDUpdated      = "CRDUpdated"
	EventCRDCorrected    = "CRDCorrected"
	EventCRDDeleted      = "CRDDeleted"
	EventTakeoverRefused = "TakeoverRefused"
	EventStalled         = "Stalled"
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

var definitionGVK = cozyv1alpha1.GroupVersion.WithKind("ApplicationDefinition")

// Reconciler serves one CRD per ApplicationDefinition.
//
// Watches, and why:
//   - ApplicationDefinitions: the input. Each event also enqueues the
//     definitions that share a name with it, so the younger of two clashing
//     definitions is served as soon as the older one lets the name go.
//   - CRDs, ValidatingAdmissionPolicies and bindings that carry the
//     definition label, whole objects (the CRD's Established condition and
//     names matter), from a cache limited to that label: a cluster's other
//     CRDs are large and none of our business. A CRD or policy with our name
//     but not our label (a foreign one) is read straight from the API server
//     and looked at again every DefaultForeignRecheckInterval.
//   - The APIService v1alpha1.apps.cozystack.io, and no other (a cache
//     limited by field selector to that name, which RBAC grants by
//     resourceName): while it proxies the group to a Service, the CRDs are
//     shadowed and every definition says so (GroupShadowed). Only changes
//     of where it sends the group enqueue, and then every definition.
//   - Instances: not watched. While a definition is deleted and instances
//     still hold it, it recounts them (one metadata-only list) every
//     InstancePollInterval. Deleting definitions are rare and short-lived; a
//     poll needs no informer per kind to start and, more importantly, to
//     stop before the kind's CRD goes away, and it cannot miss the last
//     deletion.
type Reconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
	// APIReader reads from the API server: objects outside the cache
	// (foreign CRDs).
	APIReader client.Reader
	// Metadata lists instances by resource (metadata only, uncached): a
	// kind's plural comes from its CRD, so no discovery (and no stale
	// mapping of a kind another CRD served before) is involved.
	Metadata metadata.Interface
	Recorder events.EventRecorder
	// APIServices reads the APIService of the instances' group; the
	// manager's cache when nil (see CacheOptions).
	APIServices client.Reader
	// FieldManager names the server-side apply field manager.
	FieldManager string
	Workers      int

	InstancePollInterval   time.Duration
	ForeignRecheckInterval time.Duration

	applier ssa.Applier
}

// CacheOptions limits the manager's cache of CRDs, admission policies and
// bindings to the ones this controller labels. Pass it to manager.New.
func CacheOptions() manager.Customize {
	return func(o *ctrl.Options) {
		req, err := labels.NewRequirement(cozyschema.LabelDefinition, selection.Exists, nil)
		if err != nil {
			panic(err) // a constant key cannot fail
		}
		sel := labels.NewSelector().Add(*req)
		if o.Cache.ByObject == nil {
			o.Cache.ByObject = map[client.Object]cache.ByObject{}
		}
		o.Cache.ByObject[&apiextensionsv1.CustomResourceDefinition{}] = cache.ByObject{Label: sel}
		o.Cache.ByObject[&admissionregistrationv1.ValidatingAdmissionPolicy{}] = cache.ByObject{Label: sel}
		o.Cache.ByObject[&admissionregistrationv1.ValidatingAdmissionPolicyBinding{}] = cache.ByObject{Label: sel}
		o.Cache.ByObject[newAPIService()] = cache.ByObject{Field: fields.OneTermEqualSelector("metadata.name", instanceAPIServiceName)}
	}
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Workers < 1 {
		r.Workers = 1
	}
	if r.InstancePollInterval <= 0 {
		r.InstancePollInterval = DefaultInstancePollInterval
	}
	if r.ForeignRecheckInterval <= 0 {
		r.ForeignRecheckInterval = DefaultForeignRecheckInterval
	}
	if r.APIServices == nil {
		r.APIServices = mgr.GetCache()
	}
	r.applier = ssa.Applier{Client: r.Client, FieldManager: r.FieldManager}
	byLabel := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		if name := o.GetLabels()[cozyschema.LabelDefinition]; name != "" {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: name}}}
		}
		return nil
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("appdef").
		For(&cozyv1alpha1.ApplicationDefinition{}).
		Watches(&cozyv1alpha1.ApplicationDefinition{}, handler.EnqueueRequestsFromMapFunc(r.sharingNames)).
		Watches(&apiextensionsv1.CustomResourceDefinition{}, byLabel).
		Watches(&admissionregistrationv1.ValidatingAdmissionPolicy{}, byLabel).
		Watches(&admissionregistrationv1.ValidatingAdmissionPolicyBinding{}, byLabel).
		Watches(newAPIService(), handler.EnqueueRequestsFromMapFunc(r.allDefinitions), builder.WithPredicates(routeChanged())).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.Workers}).
		Complete(r)
}

// sharingNames maps a definition event to the other definitions that share
// one of its names (the map runs for both the old and the new object).
func (r *Reconciler) sharingNames(ctx context.Context, o client.Object) []reconcile.Request {
	d, ok := o.(*cozyv1alpha1.ApplicationDefinition)
	if !ok {
		return nil
	}
	all := &cozyv1alpha1.ApplicationDefinitionList{}
	if err := r.Client.List(ctx, all); err != nil {
		return nil
	}
	var out []reconcile.Request
	for _, name := range clashesWith(d, all.Items) {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: name}})
	}
	return out
}

// allDefinitions maps an event of the instances' APIService to every
// definition: all their kinds live in that one group.
func (r *Reconciler) allDefinitions(ctx context.Context, _ client.Object) []reconcile.Request {
	all := &cozyv1alpha1.ApplicationDefinitionList{}
	if err := r.Client.List(ctx, all); err != nil {
		log.FromContext(ctx).Error(err, "listing definitions after an APIService change")
		return nil
	}
	out := make([]reconcile.Request, 0, len(all.Items))
	for i := range all.Items {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: all.Items[i].Name}})
	}
	return out
}

// routeChanged lets through the creation and deletion of the APIService and
// the updates that change where it sends the group. Its status (Available)
// flips whenever the Service behind it comes and goes, and its labels and
// annotations are rewritten by cert-manager's CA injector: none of that
// changes whether the CRDs are shadowed.
func routeChanged() predicate.Funcs {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, _ := e.ObjectOld.(*unstructured.Unstructured)
			n, _ := e.ObjectNew.(*unstructured.Unstructured)
			return o == nil || n == nil || *routeOf(o) != *routeOf(n)
		},
	}
}

func newAPIService() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(apiServiceGVK)
	return u
}

// shadowedBy reads the instances' APIService from the cache; nil when there
// is none.
func (r *Reconciler) shadowedBy(ctx context.Context) (*apiServiceRoute, error) {
	u := newAPIService()
	err := r.APIServices.Get(ctx, types.NamespacedName{Name: instanceAPIServiceName}, u)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading APIService %s: %w", instanceAPIServiceName, err)
	}
	return routeOf(u), nil
}

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

// errForeign is a Stalled error that still looks again now and then: the
// foreign object may go away without any event we watch.
type errForeign struct{ error }

func (e errForeign) Unwrap() error { return e.error }

// Reconcile brings one definition's CRD (and admission policy) in line and
// reports on it.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	def := &cozyv1alpha1.ApplicationDefinition{}
	if err := r.Client.Get(ctx, req.NamespacedName, def); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
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
	}

	before := def.Status.DeepCopy()
	msg, err := r.serve(ctx, def)
	def.Status.Instances = nil
	summarize(def, msg, err)
	if werr := r.writeStatus(ctx, def, before); werr != nil {
		return ctrl.Result{}, werr
	}
	if s, ok := reconcileerr.AsStalled(err); ok && readyReason(before) != s.Reason {
		r.event(def, corev1EventWarning, EventStalled, "Serve", s.Error())
	}
	if errors.As(err, new(errForeign)) {
		return ctrl.Result{RequeueAfter: r.ForeignRecheckInterval}, nil
	}
	if err != nil {
		log.FromContext(ctx).V(1).Info("not served", "reason", readyReason(&def.Status), "message", err.Error())
	}
	return reconcileerr.Result(err)
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

	objs, err := cozyschema.Build(def)
	if err != nil {
		var se *cozyschema.Error
		if errors.As(err, &se) {
			return "", reconcileerr.Stalled(se.Reason, se)
		}
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
			return "", errForeign{reconcileerr.Stalled(cozyv1alpha1.ReasonForeignCRD, err)}
		}
		if live.DeletionTimestamp != nil {
			return "", waiting(0, cozyv1alpha1.ReasonProgressing, "CRD %s is being deleted; it will be created again once it is gone", crdName)
		}
	}

	// The policy goes first: a free-form kind is never served unchecked.
	if err := r.applyPolicy(ctx, def, owner, objs); err != nil {
		return "", err
	}

	desired, err := toUnstructured(objs.CRD, owner)
	if err != nil {
		return "", err
	}
	var liveU *unstructured.Unstructured
	if found {
		if liveU, err = toUnstructured(live, ownership.Owner{}); err != nil {
			return "", err
		}
	}
	res, err := r.applier.Apply(ctx, desired, liveU)
	if err != nil {
		if apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) || apierrors.IsRequestEntityTooLargeError(err) {
			return "", stalled(cozyv1alpha1.ReasonCRDRejected, "the API server refused CRD %s: %s", crdName, apiMessage(err))
		}
		return "", fmt.Errorf("applying CRD %s: %w", crdName, err)
	}
	switch res {
	case ssa.Created:
		r.event(def, corev1EventNormal, EventCRDCreated, "Apply", fmt.Sprintf("created CRD %s serving kind %s", crdName, app.Kind))
		return "", waiting(establishRecheck, cozyv1alpha1.ReasonProgressing, "created CRD %s; waiting for the API server to establish it", crdName)
	case ssa.Updated, ssa.Corrected:
		reason, note := EventCRDUpdated, "updated CRD %s to the definition's generation"
		if res == ssa.Corrected {
			reason, note = EventCRDCorrected, "CRD %s had been changed by someone else; put it back"
		}
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
	return fmt.Sprintf("CRD %s is established and serves kind %s (%s backend)", crdName, app.Kind, def.Status.Backend), nil
}

// applyPolicy applies, or removes, the admission policy and its binding.
func (r *Reconciler) applyPolicy(ctx context.Context, def *cozyv1alpha1.ApplicationDefinition, owner ownership.Owner, objs *cozyschema.Objects) error {
	name := cozyschema.PolicyName(def.Spec.Application.Plural)
	type pair struct {
		kind    string
		live    client.Object
		desired client.Object // nil: must not exist
	}
	pairs := []pair{
		{kind: "ValidatingAdmissionPolicy", live: &admissionregistrationv1.ValidatingAdmissionPolicy{}},
		{kind: "ValidatingAdmissionPolicyBinding", live: &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}},
	}
	if objs.Policy != nil {
		pairs[0].desired, pairs[1].desired = objs.Policy, objs.Binding
	}
	for _, p := range pairs {
		found, err := r.getEitherWay(ctx, name, p.live)
		if err != nil {
			return err
		}
		if found {
			if err := ownership.Check(p.kind, p.live, owner); err != nil {
				return errForeign{reconcileerr.Stalled(ReasonForeignPolicy, err)}
			}
		}
		if p.desired == nil {
			if found {
				// The spec is no longer free-form: the CRD's own rules suffice.
				if err := r.Client.Delete(ctx, p.live, client.Preconditions{UID: ptr.To(p.live.GetUID())}); client.IgnoreNotFound(err) != nil {
					return err
				}
			}
			continue
		}
		desired, err := toUnstructured(p.desired, owner)
		if err != nil {
			return err
		}
		var liveU *unstructured.Unstructured
		if found {
			if liveU, err = toUnstructured(p.live, ownership.Owner{}); err != nil {
				return err
			}
		}
		if _, err := r.applier.Apply(ctx, desired, liveU); err != nil {
			if apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) {
				return stalled(cozyv1alpha1.ReasonCRDRejected, "the API server refused %s %s: %s", p.kind, name, apiMessage(err))
			}
			return fmt.Errorf("applying %s %s: %w", p.kind, name, err)
		}
	}
	return nil
}

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
		if ref := metav1.GetControllerOfNoCopy(&crd); ref != nil && ref.UID == def.UID {
			out = append(out, crd)
		}
	}
	return out, nil
}

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
		if ref := metav1.GetControllerOfNoCopy(live); found && ref != nil && ref.UID == def.UID {
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

	// No instance left: remove what serves the kind, then let the
	// definition go. Deleting the CRD explicitly (rather than leaving it to
	// the garbage collector) stops the API server from accepting new
	// instances at once.
	name := cozyschema.PolicyName(def.Spec.Application.Plural)
	for _, obj := range []client.Object{&admissionregistrationv1.ValidatingAdmissionPolicyBinding{}, &admissionregistrationv1.ValidatingAdmissionPolicy{}} {
		found, err := r.getEitherWay(ctx, name, obj)
		if err != nil {
			return ctrl.Result{}, err
		}
		if ref := metav1.GetControllerOfNoCopy(obj); found && ref != nil && ref.UID == def.UID {
			if err := r.Client.Delete(ctx, obj, client.Preconditions{UID: ptr.To(obj.GetUID())}); client.IgnoreNotFound(err) != nil {
				return ctrl.Result{}, err
			}
		}
	}
	for i := range owned {
		crd := &owned[i]
		if crd.DeletionTimestamp != nil {
			continue
		}
		if err := r.Client.Delete(ctx, crd, client.Preconditions{UID: ptr.To(crd.UID)}); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, err
		}
		r.event(def, corev1EventNormal, EventCRDDeleted, "Delete", fmt.Sprintf("deleted CRD %s: no instance of %s is left", crd.Name, crd.Spec.Names.Kind))
		logger.Info("deleted CRD", "crd", crd.Name)
	}
	patch := client.MergeFromWithOptions(def.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(def, cozyv1alpha1.FinalizerInstances)
	if err := r.Client.Patch(ctx, def, patch); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
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

// summarize writes Ready, Reconciling and Stalled from the outcome of a
// reconcile: the only place that sets Ready. readyMessage is used when err
// is nil.
func summarize(def *cozyv1alpha1.ApplicationDefinition, readyMessage string, err error) {
	def.Status.ObservedGeneration = def.Generation
	if err == nil {
		conditions.MarkReady(def, cozyv1alpha1.ReasonServed, readyMessage)
		return
	}
	if s, ok := reconcileerr.AsStalled(err); ok {
		conditions.MarkStalled(def, s.Reason, s.Error())
		return
	}
	if w, ok := reconcileerr.AsWaiting(err); ok {
		conditions.MarkReconciling(def, w.Reason, w.Error())
		return
	}
	conditions.MarkReconciling(def, cozyv1alpha1.ReasonProgressing, "retrying after an error: "+err.Error())
}

func readyReason(s *cozyv1alpha1.ApplicationDefinitionStatus) string {
	if c := meta.FindStatusCondition(s.Conditions, cozyv1alpha1.ConditionReady); c != nil {
		return c.Reason
	}
	return ""
}

// writeStatus patches the status when, and only when, it changed.
func (r *Reconciler) writeStatus(ctx context.Context, def *cozyv1alpha1.ApplicationDefinition, before *cozyv1alpha1.ApplicationDefinitionStatus) error {
	if equality.Semantic.DeepEqual(*before, def.Status) {
		return nil
	}
	old := def.DeepCopy()
	old.Status = *before
	if err := r.Client.Status().Patch(ctx, def, client.MergeFrom(old)); err != nil {
		return client.IgnoreNotFound(err)
	}
	return nil
}

func (r *Reconciler) event(def *cozyv1alpha1.ApplicationDefinition, eventType, reason, action, note string) {
	if r.Recorder == nil {
		return
	}
	r.Recorder.Eventf(def, nil, eventType, reason, action, "%s", note)
}

// toUnstructured turns a typed object into what ssa.Apply compares and
// sends: apiVersion and kind set, the fields the API server owns (status,
// creation time, resource version) removed, and a controller reference to
// owner when owner is set.
func toUnstructured(obj client.Object, owner ownership.Owner) (*unstructured.Unstructured, error) {
	gvk, err := gvkOf(obj)
	if err != nil {
		return nil, err
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvk)
	if owner.UID != "" {
		unstructured.RemoveNestedField(u.Object, "status")
		unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
		u.SetOwnerReferences([]metav1.OwnerReference{ownership.ControllerRef(owner)})
	}
	return u, nil
}

func gvkOf(obj client.Object) (schema.GroupVersionKind, error) {
	switch obj.(type) {
	case *apiextensionsv1.CustomResourceDefinition:
		return apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"), nil
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
