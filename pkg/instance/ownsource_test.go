package instance

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllertest"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// TestOwnSyncSource: the source enqueues its kind's objects, and its
// controller's workers wait for that kind's informer, which is all it waits
// for (it holds no other).
func TestOwnSyncSource(t *testing.T) {
	inf := controllertest.NewFakeInformer()
	src := ownSyncSource{informer: inf, source: &source.Informer{Informer: inf, Handler: &handler.EnqueueRequestForObject{}}}
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	ctx := context.Background()
	if err := src.Start(ctx, q); err != nil {
		t.Fatal(err)
	}

	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if err := src.WaitForSync(short); err == nil {
		t.Fatal("WaitForSync returned before the informer had its first list")
	}

	inf.Add(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "def"}})
	inf.Synced()
	if err := src.WaitForSync(ctx); err != nil {
		t.Fatalf("WaitForSync after the first list: %v", err)
	}
	got, _ := q.Get()
	if want := (reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "def"}}); got != want {
		t.Fatalf("enqueued %v, want %v", got, want)
	}
}
