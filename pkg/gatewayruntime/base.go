package gatewayruntime

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/ownership"
	"github.com/cozyplane/cozyplane/pkg/record"
	"github.com/cozyplane/cozyplane/pkg/ssa"
	"github.com/cozyplane/cozyplane/pkg/writemetric"
)

// Base is what every gateway controller's reconciler is built on: its
// clients, its name and its event recorder, and the one path through which
// it reads, applies and deletes the objects a TenantGateway controls and
// writes its part of the TenantGateway's status.
type Base struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
	// APIReader reads what the cache strips or has not seen yet: the
	// managed fields of an object upstream Cozystack's controller created
	// (adoption), an object the cache does not show after our own create,
	// a route whose cached copy is stale.
	APIReader client.Reader
	// Name is the field manager, the cozystack.io/managed-by value and the
	// events' reporting controller.
	Name string
	// Recorder records events (nil: none).
	Recorder events.EventRecorder
	// PlainCreates, HandOvers: see OwnedApplier.
	PlainCreates bool
	HandOvers    *ssa.HandOvers
}

// NewBase is the Base of the controller name running in mgr.
func NewBase(mgr ctrl.Manager, name string) Base {
	return Base{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Name: name, Recorder: mgr.GetEventRecorder(name)}
}

// Events records on behalf of this controller.
func (b Base) Events() record.Events { return record.For(b.Recorder, b.Client) }

// WriteStatus writes this controller's part of tgw's status (StatusWriter).
func (b Base) WriteStatus(ctx context.Context, tgw *gatewayv1alpha1.TenantGateway, st Status) error {
	_, err := StatusWriter{Client: b.Client, FieldManager: b.Name, Events: b.Events()}.Write(ctx, tgw, st)
	return err
}

// Get reads a cached object, reporting whether it exists.
func (b Base) Get(ctx context.Context, namespace, name string, obj client.Object) (bool, error) {
	err := b.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, obj)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading %T %s/%s: %w", obj, namespace, name, err)
	}
	return true, nil
}

// Apply applies desired, controlled by tgw, through OwnedApplier; live is
// the object as read, used only when found. After a write, desired is the
// object as written.
func (b Base) Apply(ctx context.Context, tgw *gatewayv1alpha1.TenantGateway, desired runtime.Object,
	gvk schema.GroupVersionKind, live client.Object, found bool) (ssa.Result, error) {
	if !found {
		live = nil
	}
	return OwnedApplier{Client: b.Client, APIReader: b.APIReader, FieldManager: b.Name, Events: b.Events(), PlainCreates: b.PlainCreates,
		HandOvers: b.HandOvers}.
		Apply(ctx, tgw, desired, gvk, live)
}

// Refuse returns the refusal to touch live, an object at a name tgw derives
// that it does not control (ownership.Check, which words it with noun), and
// counts it under kind; nil when live is nil or tgw controls it.
func (b Base) Refuse(kind, noun string, live client.Object, tgw *gatewayv1alpha1.TenantGateway) error {
	err := ownership.Check(noun, live, Owner(tgw))
	if err != nil {
		CountRefusal(b.Name, kind)
	}
	return err
}

// Delete removes obj, which tgw controls, with a UID precondition so that an
// object recreated meanwhile by someone else is not deleted; the write is
// counted, logged and recorded as an event on tgw, saying why (one of its
// own, or the reconcile's when ctx carries Writes).
func (b Base) Delete(ctx context.Context, tgw *gatewayv1alpha1.TenantGateway, obj client.Object, kind, why string) error {
	uid := obj.GetUID()
	err := b.Client.Delete(ctx, obj, client.Preconditions{UID: &uid})
	if client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting %s %s/%s: %w", kind, obj.GetNamespace(), obj.GetName(), err)
	}
	writemetric.Count(b.Name, kind, writemetric.Deleted)
	log.FromContext(ctx).Info("deleted", "kind", kind, "name", obj.GetName(), "why", why)
	tell(ctx, b.Events(), tgw, Write{Object: obj, Kind: kind, Name: obj.GetName(), Outcome: "deleted", Why: why}, true)
	return nil
}
