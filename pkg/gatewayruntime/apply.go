package gatewayruntime

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/ownership"
	"github.com/cozyplane/cozyplane/pkg/record"
	"github.com/cozyplane/cozyplane/pkg/ssa"
)

// OwnedApplier applies the objects a TenantGateway controls (the Gateway and
// redirect route of gateway-listeners, the Issuer and Certificates of
// gateway-certs): the one apply path both controllers share.
type OwnedApplier struct {
	// Client reads from the cache and writes to the API server.
	Client client.Client
	// APIReader reads the managed fields the cache strips (adoption).
	APIReader client.Reader
	// FieldManager is the controller's name.
	FieldManager string
	// Events records each write on the TenantGateway.
	Events record.Events
	// PlainCreates creates an absent object with a plain create
	// (ssa.Applier.Creates) instead of asking the API server first whether
	// it exists and then applying: one request instead of two, and a create
	// costs the API server less than an apply. An object the cache does not
	// show yet is then met as AlreadyExists. A later write that sets the
	// create's fields is a merge patch; one that sets others reads the
	// object past the cache first (to hand the create's fields to the
	// apply), and so does every write after it unless HandOvers remembers
	// the hand-over.
	PlainCreates bool
	// HandOvers, with PlainCreates, remembers the objects of desired's kind
	// whose create's fields were handed over, so that later writes to them
	// read nothing first: for objects whose fields keep changing, such as
	// a Gateway whose listeners follow its routes. Nil: none is remembered,
	// which suits objects seldom changed once made (Certificates, Issuers).
	HandOvers *ssa.HandOvers
}

// Apply server-side applies desired (controller owner: tgw) unless live
// already matches it. live is the object as read, nil when it does not
// exist; the caller checked with the ownership guard that tgw controls it.
// An object upstream Cozystack's controller created is adopted first
// (Adopt), so that this apply alone decides its spec. A write is logged at
// Info and recorded as an Applied event, both saying why: an event of its
// own, or, when ctx carries Writes (WithWrites), one event of the
// reconcile's. After a write,
// desired is the object as the API server returned it (its generation and
// status included): what the write left, which the cache shows only when
// the write's event arrives.
func (a OwnedApplier) Apply(ctx context.Context, tgw *gatewayv1alpha1.TenantGateway, desired runtime.Object,
	gvk schema.GroupVersionKind, live client.Object) (ssa.Result, error) {
	u, err := ownership.Desired(desired, gvk, Owner(tgw))
	if err != nil {
		return ssa.Unchanged, err
	}
	if live == nil && a.APIReader != nil && !a.PlainCreates {
		// The cache may lag this controller's own create: confirm the
		// absence before creating, so a stale cache neither writes nor
		// reports a creation twice. An object the cache does not show yet
		// is decided when its watch event brings the next reconcile.
		probe := &unstructured.Unstructured{}
		probe.SetGroupVersionKind(gvk)
		err := a.APIReader.Get(ctx, client.ObjectKeyFromObject(u), probe)
		switch {
		case err == nil:
			return ssa.Unchanged, nil
		case !apierrors.IsNotFound(err):
			return ssa.Unchanged, fmt.Errorf("reading %s %s/%s: %w", gvk.Kind, u.GetNamespace(), u.GetName(), err)
		}
	}
	var liveU *unstructured.Unstructured
	if live != nil {
		if CreatedUpstream(live) {
			if _, err := Adopt(ctx, a.Client, a.APIReader, gvk, client.ObjectKeyFromObject(live), a.FieldManager); err != nil {
				return ssa.Unchanged, err
			}
		}
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(live)
		if err != nil {
			return ssa.Unchanged, err
		}
		liveU = &unstructured.Unstructured{Object: m}
	}
	applier := ssa.Applier{Client: a.Client, FieldManager: a.FieldManager}
	switch {
	case a.PlainCreates && a.HandOvers != nil:
		applier.Creates = a.HandOvers
	case a.PlainCreates:
		applier.Creates = a.APIReader
	}
	res, err := Apply(ctx, applier, u, liveU)
	if live == nil && apierrors.IsAlreadyExists(err) {
		// The cache lags: the object is there, perhaps this controller's
		// own. Its watch event brings the next reconcile, which decides on
		// it (who controls it, whether it differs).
		return ssa.Unchanged, nil
	}
	if err != nil {
		return res, fmt.Errorf("applying %s %s/%s: %w", gvk.Kind, u.GetNamespace(), u.GetName(), err)
	}
	if res != ssa.Unchanged {
		why := "it did not exist"
		if live != nil {
			why = "it differed from the desired state"
		}
		log.FromContext(ctx).Info("applied", "kind", gvk.Kind, "name", u.GetName(), "result", res.String(), "why", why)
		tell(ctx, a.Events, tgw, Write{Object: u, Kind: gvk.Kind, Name: u.GetName(), Outcome: res.String(), Why: why}, false)
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, desired); err != nil {
			return res, fmt.Errorf("reading the applied %s %s/%s: %w", gvk.Kind, u.GetNamespace(), u.GetName(), err)
		}
	}
	return res, nil
}
