package controller

import (
	"context"
	"fmt"
	"sync"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/manager"
	"github.com/cozyplane/cozyplane/pkg/ownership"
	cozyschema "github.com/cozyplane/cozyplane/pkg/schema"
	"github.com/cozyplane/cozyplane/pkg/ssa"
)

var definitionGVK = cozyv1alpha1.GroupVersion.WithKind("ApplicationDefinition")

// definitionOwner is def as the controller owner of its CRD and ClusterRoles:
// what they are checked against (ownership.IsControlledBy), by group, kind,
// name and uid.
func definitionOwner(def *cozyv1alpha1.ApplicationDefinition) ownership.Owner {
	return ownership.Owner{GVK: definitionGVK, Name: def.Name, UID: string(def.UID)}
}

// Reconciler serves one CRD per ApplicationDefinition.
//
// Watches, and why:
//   - ApplicationDefinitions: the input. Each event also enqueues the
//     definitions that share a name with it, so the younger of two clashing
//     definitions is served as soon as the older one lets the name go.
//   - CRDs that carry the definition label, whole objects (the CRD's
//     Established condition and names matter), from a cache limited to that
//     label: a cluster's other CRDs are large and none of our business. A
//     CRD with our name but not our label (a foreign one) is read straight
//     from the API server and looked at again every
//     DefaultForeignRecheckInterval.
//   - ClusterRoles that carry the definition label (the aggregated roles of
//     each kind), from a cache limited to that label; a role with our name
//     but not our label is read straight from the API server.
//   - The ValidatingAdmissionPolicy and binding InstanceKeysPolicy, and no
//     other (caches limited by field selector to that name, which RBAC
//     grants by resourceName). A change enqueues the first definition (any
//     reconcile rebuilds the whole policy) and those waiting for the policy
//     (PolicyMissing).
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
	// policyMu serialises the writes of the instance keys policy, which
	// every worker rebuilds from all definitions.
	policyMu sync.Mutex
	// memo holds the built objects of each definition (see build).
	memoMu sync.Mutex
	memo   map[types.UID]builtObjects
}

// CacheOptions limits the manager's cache of CRDs to the ones this
// controller labels, and of admission policies, bindings and APIServices to
// the one of each it reads. Pass it to manager.New.
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
		o.Cache.ByObject[&rbacv1.ClusterRole{}] = cache.ByObject{Label: sel}
		byName := cache.ByObject{Field: fields.OneTermEqualSelector("metadata.name", InstanceKeysPolicy)}
		o.Cache.ByObject[&admissionregistrationv1.ValidatingAdmissionPolicy{}] = byName
		o.Cache.ByObject[&admissionregistrationv1.ValidatingAdmissionPolicyBinding{}] = byName
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
		Watches(&rbacv1.ClusterRole{}, byLabel).
		Watches(&admissionregistrationv1.ValidatingAdmissionPolicy{}, handler.EnqueueRequestsFromMapFunc(r.policyDependents)).
		Watches(&admissionregistrationv1.ValidatingAdmissionPolicyBinding{}, handler.EnqueueRequestsFromMapFunc(r.policyDependents)).
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

// policyDependents maps an event of the instance keys policy or its
// binding to the first definition (its reconcile puts the policy back if
// someone changed it) and to those waiting for the policy to exist.
func (r *Reconciler) policyDependents(ctx context.Context, _ client.Object) []reconcile.Request {
	all := &cozyv1alpha1.ApplicationDefinitionList{}
	if err := r.Client.List(ctx, all); err != nil {
		log.FromContext(ctx).Error(err, "listing definitions after a change of the instance keys policy")
		return nil
	}
	var out []reconcile.Request
	first := ""
	for i := range all.Items {
		d := &all.Items[i]
		if first == "" || d.Name < first {
			first = d.Name
		}
		if readyReason(&d.Status) == ReasonPolicyMissing {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: d.Name}})
		}
	}
	if first != "" {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: first}})
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
