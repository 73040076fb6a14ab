package controller

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/gatewayruntime"
	"github.com/cozyplane/cozyplane/pkg/testenv/onereconcile"
)

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// reconcileOwner runs one Reconcile of owner namespace owner, once the cache
// shows what the test wrote, and returns the writes it made; then, once the
// cache shows those, a second, which must write nothing.
func reconcileOwner(t *testing.T, owner string) []string {
	t.Helper()
	ctx := context.Background()
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: owner}}
	caughtUp(t)
	writes.Take()
	if _, err := rec.Reconcile(ctx, req); err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
	first := writes.Take()
	caughtUp(t)
	if _, err := rec.Reconcile(ctx, req); err != nil {
		t.Fatalf("second Reconcile: %v", err)
	}
	if again := writes.Take(); len(again) != 0 {
		t.Fatalf("a second Reconcile of a settled owner namespace wrote %v", again)
	}
	return first
}

// namespace creates a namespace with labels and annotations and returns it
// as stored.
func namespace(t *testing.T, name string, labels, annotations map[string]string) *corev1.Namespace {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: annotations}}
	check(t, k8s.Create(context.Background(), ns))
	return ns
}

func getNamespace(t *testing.T, name string) *corev1.Namespace {
	t.Helper()
	ns := &corev1.Namespace{}
	check(t, k8s.Get(context.Background(), client.ObjectKey{Name: name}, ns))
	return ns
}

// tenantGateway creates the TenantGateway cozystack in owner, attaching
// attached.
func tenantGateway(t *testing.T, owner string, attached ...string) *gatewayv1alpha1.TenantGateway {
	t.Helper()
	g := &gatewayv1alpha1.TenantGateway{ObjectMeta: metav1.ObjectMeta{Namespace: owner, Name: "cozystack"},
		Spec: gatewayv1alpha1.TenantGatewaySpec{Apex: owner + ".example.org", AttachedNamespaces: attached}}
	check(t, k8s.Create(context.Background(), g))
	return g
}

// attachedCondition is the TenantGateway's NamespacesAttached as stored,
// for its current generation.
func attachedCondition(t *testing.T, g *gatewayv1alpha1.TenantGateway) *metav1.Condition {
	t.Helper()
	return onereconcile.StoredCondition(t, k8s, g, conditionsOf, gatewayv1alpha1.ConditionNamespacesAttached)
}

func conditionsOf(g *gatewayv1alpha1.TenantGateway) []metav1.Condition { return g.Status.Conditions }

// attachedTo checks that namespace name carries the gateway label and our
// annotation, both naming owner, besides the labels it had (want).
func attachedTo(t *testing.T, name, owner string, want map[string]string) {
	t.Helper()
	ns := getNamespace(t, name)
	labels := maps.Clone(want)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[gatewayv1alpha1.LabelNamespaceGateway] = owner
	labels[corev1.LabelMetadataName] = name
	if !maps.Equal(ns.Labels, labels) || ns.Annotations[gatewayv1alpha1.AnnotationAttachedBy] != owner {
		t.Errorf("namespace %s: labels %v, annotations %v; want labels %v and %s=%s", name, ns.Labels, ns.Annotations, labels, gatewayv1alpha1.AnnotationAttachedBy, owner)
	}
}

// untouched checks that namespace ns was not written since it was read.
func untouched(t *testing.T, ns *corev1.Namespace) {
	t.Helper()
	if got := getNamespace(t, ns.Name); got.ResourceVersion != ns.ResourceVersion {
		t.Errorf("namespace %s was written: labels %v, annotations %v (were %v, %v)", ns.Name, got.Labels, got.Annotations, ns.Labels, ns.Annotations)
	}
}

func TestReconcileAttaches(t *testing.T) {
	const owner = "tenant-alpha"
	namespace(t, owner, nil, nil)
	namespace(t, owner+"-apps", map[string]string{"team": "apps"}, nil)
	g := tenantGateway(t, owner, owner+"-apps")

	told.Take()
	wrote := reconcileOwner(t, owner)

	want := []string{"patch Namespace " + owner, "patch Namespace " + owner + "-apps", "status apply TenantGateway " + g.Name}
	if !slices.Equal(wrote, want) {
		t.Errorf("writes %v, want %v", wrote, want)
	}
	attachedTo(t, owner, owner, nil)
	attachedTo(t, owner+"-apps", owner, map[string]string{"team": "apps"})
	if c := attachedCondition(t, g); c.Status != metav1.ConditionTrue || c.Reason != gatewayv1alpha1.ReasonReady || !strings.HasPrefix(c.Message, "2 namespaces") {
		t.Errorf("NamespacesAttached %s %s: %s, want True %s on 2 namespaces", c.Status, c.Reason, c.Message, gatewayv1alpha1.ReasonReady)
	}
	// Both namespaces in one event on the TenantGateway.
	wantEvent := "Normal NamespaceAttached cozystack: namespace " + owner + " attached, namespace " + owner + "-apps attached: a TenantGateway of " +
		owner + " lists it (or owns it) and it carried no gateway label"
	if events := told.Take(); !slices.Equal(events, []string{wantEvent}) {
		t.Errorf("events %q, want %q", events, wantEvent)
	}

	t.Run("a listed namespace not created yet", func(t *testing.T) {
		live := &gatewayv1alpha1.TenantGateway{}
		check(t, k8s.Get(context.Background(), client.ObjectKeyFromObject(g), live))
		live.Spec.AttachedNamespaces = append(live.Spec.AttachedNamespaces, owner+"-later")
		check(t, k8s.Update(context.Background(), live))

		if wrote := reconcileOwner(t, owner); !slices.Equal(wrote, []string{"status apply TenantGateway " + g.Name}) {
			t.Errorf("writes %v, want the status only", wrote)
		}
		if c := attachedCondition(t, g); c.Status != metav1.ConditionTrue || c.Reason != gatewayv1alpha1.ReasonNamespacesNotCreated || !strings.Contains(c.Message, owner+"-later") {
			t.Errorf("NamespacesAttached %s %s: %s, want True %s naming %s-later", c.Status, c.Reason, c.Message, gatewayv1alpha1.ReasonNamespacesNotCreated, owner)
		}

		namespace(t, owner+"-later", nil, nil)
		want := []string{"patch Namespace " + owner + "-later", "status apply TenantGateway " + g.Name}
		if wrote := reconcileOwner(t, owner); !slices.Equal(wrote, want) {
			t.Errorf("writes %v, want %v", wrote, want)
		}
		attachedTo(t, owner+"-later", owner, nil)
		if c := attachedCondition(t, g); c.Status != metav1.ConditionTrue || c.Reason != gatewayv1alpha1.ReasonReady {
			t.Errorf("NamespacesAttached %s %s: %s, want True %s", c.Status, c.Reason, c.Message, gatewayv1alpha1.ReasonReady)
		}
	})
}

func TestReconcileRefusesNamespaceLabelledForAnotherGateway(t *testing.T) {
	const owner = "tenant-beta"
	namespace(t, owner, nil, nil)
	// Attached by the TenantGateways of another owner namespace, and
	// labelled by the tenant chart (no annotation) for another gateway.
	other := namespace(t, owner+"-other", map[string]string{gatewayv1alpha1.LabelNamespaceGateway: "tenant-kappa"},
		map[string]string{gatewayv1alpha1.AnnotationAttachedBy: "tenant-kappa"})
	chart := namespace(t, owner+"-chart", map[string]string{gatewayv1alpha1.LabelNamespaceGateway: "tenant-lambda"}, nil)
	g := tenantGateway(t, owner, other.Name, chart.Name)

	wrote := reconcileOwner(t, owner)

	want := []string{"patch Namespace " + owner, "status apply TenantGateway " + g.Name}
	if !slices.Equal(wrote, want) {
		t.Errorf("writes %v, want %v", wrote, want)
	}
	attachedTo(t, owner, owner, nil)
	untouched(t, other)
	untouched(t, chart)
	c := attachedCondition(t, g)
	if c.Status != metav1.ConditionFalse || c.Reason != gatewayv1alpha1.ReasonNamespaceLabelConflict {
		t.Errorf("NamespacesAttached %s %s, want False %s", c.Status, c.Reason, gatewayv1alpha1.ReasonNamespaceLabelConflict)
	}
	for _, says := range []string{
		other.Name + " has " + gatewayv1alpha1.LabelNamespaceGateway + "=tenant-kappa, written by the TenantGateways of namespace tenant-kappa",
		chart.Name + " has " + gatewayv1alpha1.LabelNamespaceGateway + "=tenant-lambda, written by the tenant chart",
		"remove the namespace from attachedNamespaces",
	} {
		if !strings.Contains(c.Message, says) {
			t.Errorf("NamespacesAttached's message does not say %q: %s", says, c.Message)
		}
	}
}

func TestReconcileRefusesNamespaceNotAllowed(t *testing.T) {
	const owner = "tenant-delta"
	namespace(t, owner, nil, nil)
	// Another branch's tenant: not a descendant of the owner.
	foreign := namespace(t, "tenant-epsilon", nil, nil)
	g := tenantGateway(t, owner, foreign.Name)

	wrote := reconcileOwner(t, owner)

	want := []string{"patch Namespace " + owner, "status apply TenantGateway " + g.Name}
	if !slices.Equal(wrote, want) {
		t.Errorf("writes %v, want %v", wrote, want)
	}
	untouched(t, foreign)
	if c := attachedCondition(t, g); c.Status != metav1.ConditionFalse || c.Reason != gatewayv1alpha1.ReasonNamespaceNotAllowed || !strings.Contains(c.Message, foreign.Name) {
		t.Errorf("NamespacesAttached %s %s: %s, want False %s naming %s", c.Status, c.Reason, c.Message, gatewayv1alpha1.ReasonNamespaceNotAllowed, foreign.Name)
	}
}

func TestReconcileDetaches(t *testing.T) {
	const owner = "tenant-zeta"
	ctx := context.Background()
	namespace(t, owner, nil, nil)
	namespace(t, owner+"-a", nil, nil)
	namespace(t, owner+"-b", nil, nil)
	g := tenantGateway(t, owner, owner+"-a", owner+"-b")
	if wrote := reconcileOwner(t, owner); len(wrote) != 4 {
		t.Fatalf("writes %v, want three namespaces labelled and the status", wrote)
	}

	// The tenant chart relabels b for a gateway of its own (our annotation
	// stays); then the TenantGateway lists neither a nor b any more.
	b := getNamespace(t, owner+"-b")
	b.Labels[gatewayv1alpha1.LabelNamespaceGateway] = owner + "-b"
	check(t, k8s.Update(ctx, b))
	live := &gatewayv1alpha1.TenantGateway{}
	check(t, k8s.Get(ctx, client.ObjectKeyFromObject(g), live))
	live.Spec.AttachedNamespaces = nil
	check(t, k8s.Update(ctx, live))

	wrote := reconcileOwner(t, owner)

	want := []string{"patch Namespace " + owner + "-a", "patch Namespace " + owner + "-b", "status apply TenantGateway " + g.Name}
	if !slices.Equal(wrote, want) {
		t.Errorf("writes %v, want %v", wrote, want)
	}
	if a := getNamespace(t, owner+"-a"); a.Labels[gatewayv1alpha1.LabelNamespaceGateway] != "" || a.Annotations[gatewayv1alpha1.AnnotationAttachedBy] != "" {
		t.Errorf("namespace %s: labels %v, annotations %v; want our label and annotation removed", a.Name, a.Labels, a.Annotations)
	}
	// The label is not ours any more: only the annotation goes.
	if b := getNamespace(t, owner+"-b"); b.Labels[gatewayv1alpha1.LabelNamespaceGateway] != owner+"-b" || b.Annotations[gatewayv1alpha1.AnnotationAttachedBy] != "" {
		t.Errorf("namespace %s: labels %v, annotations %v; want the chart's label kept and our annotation removed", b.Name, b.Labels, b.Annotations)
	}
	attachedTo(t, owner, owner, nil)
	if c := attachedCondition(t, g); c.Status != metav1.ConditionTrue || c.Reason != gatewayv1alpha1.ReasonReady || !strings.HasPrefix(c.Message, "1 namespaces") {
		t.Errorf("NamespacesAttached %s %s: %s, want True %s on 1 namespace", c.Status, c.Reason, c.Message, gatewayv1alpha1.ReasonReady)
	}

	t.Run("the TenantGateway deleted: its own namespace detached", func(t *testing.T) {
		check(t, k8s.Delete(ctx, g))
		if wrote := reconcileOwner(t, owner); !slices.Equal(wrote, []string{"patch Namespace " + owner}) {
			t.Errorf("writes %v, want the owner namespace detached only", wrote)
		}
		if ns := getNamespace(t, owner); ns.Labels[gatewayv1alpha1.LabelNamespaceGateway] != "" || ns.Annotations[gatewayv1alpha1.AnnotationAttachedBy] != "" {
			t.Errorf("namespace %s: labels %v, annotations %v; want our label and annotation removed", ns.Name, ns.Labels, ns.Annotations)
		}
	})
}

// refusePatch is a client whose patches of namespaces the API server refuses.
type refusePatch struct{ client.Client }

func (c refusePatch) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	if _, ok := obj.(*corev1.Namespace); ok {
		return apierrors.NewConflict(corev1.Resource("namespaces"), obj.GetName(), errors.New("the object has been modified"))
	}
	return c.Client.Patch(ctx, obj, patch, opts...)
}

// A label write that fails is reported on the TenantGateway as
// ReconcileError with its message and retried (Reconcile returns it); the
// next Reconcile that can write attaches the namespace and reports it.
func TestReconcileWriteFails(t *testing.T) {
	const owner = "tenant-refused"
	ctx := context.Background()
	ns := namespace(t, owner, nil, nil)
	g := tenantGateway(t, owner)
	refused := &Reconciler{Base: gatewayruntime.Base{Client: refusePatch{writes}, APIReader: rec.APIReader, Name: fieldManager}}
	caughtUp(t)
	writes.Take()

	_, err := refused.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: owner}})
	if !apierrors.IsConflict(err) {
		t.Fatalf("Reconcile: %v, want the conflict returned, to be retried", err)
	}
	if wrote := writes.Take(); !slices.Equal(wrote, []string{"status apply TenantGateway " + g.Name}) {
		t.Errorf("writes %v, want the status only", wrote)
	}
	untouched(t, ns)
	if c := attachedCondition(t, g); c.Status != metav1.ConditionFalse || c.Reason != gatewayv1alpha1.ReasonReconcileError ||
		!strings.Contains(c.Message, "labelling namespace "+owner) {
		t.Errorf("NamespacesAttached %s %s: %s, want False %s naming the write that failed", c.Status, c.Reason, c.Message, gatewayv1alpha1.ReasonReconcileError)
	}

	reconcileOwner(t, owner)
	attachedTo(t, owner, owner, nil)
	if c := attachedCondition(t, g); c.Status != metav1.ConditionTrue || c.Reason != gatewayv1alpha1.ReasonReady {
		t.Errorf("NamespacesAttached %s %s: %s, want True %s", c.Status, c.Reason, c.Message, gatewayv1alpha1.ReasonReady)
	}
}

// frozenNamespaces is a client whose cache shows the namespaces as they
// were when it was made, however they are written since: a cache that has
// not caught up with the reconciler's own patches.
type frozenNamespaces struct {
	client.Client
	seen map[string]*corev1.Namespace
}

func freeze(t *testing.T, c client.Client, names ...string) frozenNamespaces {
	t.Helper()
	f := frozenNamespaces{Client: c, seen: map[string]*corev1.Namespace{}}
	for _, name := range names {
		f.seen[name] = getNamespace(t, name)
	}
	return f
}

func (f frozenNamespaces) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	ns, ok := obj.(*corev1.Namespace)
	if !ok {
		return f.Client.Get(ctx, key, obj, opts...)
	}
	seen := f.seen[key.Name]
	if seen == nil {
		return apierrors.NewNotFound(corev1.Resource("namespaces"), key.Name)
	}
	seen.DeepCopyInto(ns)
	return nil
}

// List answers the index of the namespaces attached by an owner from the
// frozen namespaces.
func (f frozenNamespaces) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	nsList, ok := list.(*corev1.NamespaceList)
	if !ok {
		return f.Client.List(ctx, list, opts...)
	}
	lo := (&client.ListOptions{}).ApplyOptions(opts)
	owner, indexed := lo.FieldSelector.RequiresExactMatch(indexAttachedBy)
	if !indexed {
		return errors.New("frozenNamespaces lists only by " + indexAttachedBy)
	}
	nsList.Items = nil
	for _, ns := range f.seen {
		if slices.Contains(attachedBy(ns), owner) {
			nsList.Items = append(nsList.Items, *ns.DeepCopy())
		}
	}
	return nil
}

// TestReconcileReadsItsOwnPatches: a reconcile that comes before the cache
// shows the reconciler's own patches (the event of the first namespace
// patched brings it, before the second's) decides on what it wrote, not on
// the stale copies: no patch again from a stale version, which the API server
// would refuse as a conflict. Once the cache shows the patches, they are
// forgotten.
func TestReconcileReadsItsOwnPatches(t *testing.T) {
	const owner = "tenant-eta"
	ctx := context.Background()
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: owner}}
	namespace(t, owner, nil, nil)
	namespace(t, owner+"-apps", nil, nil)
	g := tenantGateway(t, owner, owner+"-apps")
	caughtUp(t)
	stale := &Reconciler{Base: gatewayruntime.Base{Client: freeze(t, writes, owner, owner+"-apps"), APIReader: rec.APIReader, Name: fieldManager}}
	patches := func() []string {
		var out []string
		for _, w := range writes.Take() {
			if strings.HasPrefix(w, "patch Namespace") {
				out = append(out, w)
			}
		}
		return out
	}
	// twice reconciles once, which must patch both namespaces (what), then
	// again on the same stale cache, which must patch nothing.
	twice := func(what string) {
		t.Helper()
		if _, err := stale.Reconcile(ctx, req); err != nil {
			t.Fatalf("Reconcile: %v", err)
		}
		if wrote := patches(); len(wrote) != 2 {
			t.Fatalf("patches %v, want both namespaces %s", wrote, what)
		}
		if _, err := stale.Reconcile(ctx, req); err != nil {
			t.Errorf("a Reconcile before the cache shows the patches: %v, want none", err)
		}
		if wrote := patches(); len(wrote) != 0 {
			t.Errorf("a Reconcile before the cache shows the patches wrote %v, want nothing", wrote)
		}
	}
	writes.Take()

	twice("attached")
	attachedTo(t, owner, owner, nil)
	attachedTo(t, owner+"-apps", owner, nil)

	// The TenantGateway goes; the cache shows the namespaces attached, and
	// not the detaching patches after them.
	check(t, k8s.Delete(ctx, g))
	caughtUp(t)
	stale.Client = freeze(t, writes, owner, owner+"-apps")
	twice("detached")

	// The namespaces' events, of the versions the patches made, end the
	// wait: nothing is remembered any more.
	for _, name := range []string{owner, owner + "-apps"} {
		stale.ownersOfNamespace(ctx, getNamespace(t, name))
	}
	if n := stale.written.Len(); n != 0 {
		t.Errorf("%d patches remembered after the cache showed them, want 0", n)
	}
}
