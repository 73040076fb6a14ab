package instance

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/dynamicwatch"
	"github.com/cozyplane/cozyplane/pkg/ownership"
)

// TestCollectible: the reconciler deletes after a deleted instance only what
// the garbage collector would.
func TestCollectible(t *testing.T) {
	inst := testInstance("Gizmo", "tenant-a", "one", "uid-1")
	controller := ownership.ControllerRef(ownerOf(inst))
	backing := func(mutate func(*corev1.ConfigMap)) *corev1.ConfigMap {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "g-one",
			OwnerReferences: []metav1.OwnerReference{controller}}}
		if mutate != nil {
			mutate(cm)
		}
		return cm
	}
	notController := controller
	notController.Controller = nil
	earlier := controller
	earlier.UID = "uid-0"
	otherKind := controller
	otherKind.Kind = "Widget"
	for _, tc := range []struct {
		name string
		o    *corev1.ConfigMap
		want bool
	}{
		{"controlled by the instance alone", backing(nil), true},
		{"an earlier instance's (another uid)", backing(func(cm *corev1.ConfigMap) { cm.OwnerReferences[0] = earlier }), false},
		{"another kind's of that name and uid", backing(func(cm *corev1.ConfigMap) { cm.OwnerReferences[0] = otherKind }), false},
		{"owned but not controlled", backing(func(cm *corev1.ConfigMap) { cm.OwnerReferences[0] = notController }), false},
		{"orphaned (no owner any more)", backing(func(cm *corev1.ConfigMap) { cm.OwnerReferences = nil }), false},
		{"another owner too", backing(func(cm *corev1.ConfigMap) {
			cm.OwnerReferences = append(cm.OwnerReferences, metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "anchor", UID: "uid-a"})
		}), false},
		{"in another namespace", backing(func(cm *corev1.ConfigMap) { cm.Namespace = "tenant-b" }), false},
		{"being deleted", backing(func(cm *corev1.ConfigMap) {
			cm.DeletionTimestamp = &metav1.Time{Time: time.Now()}
			cm.Finalizers = []string{"x"}
		}), false},
	} {
		if got := Collectible(tc.o, inst); got != tc.want {
			t.Errorf("%s: Collectible = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestForgetEarlier: a reconcile that reads an instance keeps the deletion
// the watch saw of that same instance (it read the instance just before it
// went, and the reconcile the deletion enqueued follows) and drops only an
// earlier instance's of that name.
func TestForgetEarlier(t *testing.T) {
	req := dynamicwatch.Request{GVK: appsv1alpha1.GroupVersion.WithKind("Gizmo"),
		NamespacedName: types.NamespacedName{Namespace: "tenant-a", Name: "one"}}
	for _, tc := range []struct {
		name     string
		seen     types.UID // the uid the deletion hook stored; "" for none
		read     types.UID // the uid of the instance the reconcile read
		wantKept bool
	}{
		{"the instance read is the one seen deleted", "uid-1", "uid-1", true},
		{"an earlier instance of that name was seen deleted", "uid-0", "uid-1", false},
		{"no deletion seen", "", "uid-1", false},
	} {
		r := &Reconciler{}
		if tc.seen != "" {
			r.rememberDeleted(req.GVK)(testInstance("Gizmo", "tenant-a", "one", string(tc.seen)))
		}
		r.forgetEarlier(req, tc.read)
		v, kept := r.deleted.Load(req)
		if kept != tc.wantKept || (kept && v != tc.seen) {
			t.Errorf("%s: kept %v (%v), want kept %v", tc.name, kept, v, tc.wantKept)
		}
	}
}

// testInstance is an instance of kind in apps.cozystack.io, as the tests of
// pure decisions need one: its identity alone.
func testInstance(kind, namespace, name, uid string) *unstructured.Unstructured {
	inst := &unstructured.Unstructured{}
	inst.SetGroupVersionKind(appsv1alpha1.GroupVersion.WithKind(kind))
	inst.SetNamespace(namespace)
	inst.SetName(name)
	inst.SetUID(types.UID(uid))
	return inst
}
