// Package controller reconciles TenantGateways into their cert-manager Issuer
// and Certificates.
package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/cozyplane/cozyplane/api/gateway/names"
	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/controllers/gateway-certs/internal/certs"
	"github.com/cozyplane/cozyplane/pkg/gatewayruntime"
	"github.com/cozyplane/cozyplane/pkg/phase"
	"github.com/cozyplane/cozyplane/pkg/reconcileerr"
)

var (
	issuerGVK      = cmv1.SchemeGroupVersion.WithKind("Issuer")
	certificateGVK = cmv1.SchemeGroupVersion.WithKind("Certificate")
)

// CacheTrims are the fields of cached objects this controller never reads
// (gatewayruntime.Trim): the listeners a TenantGateway's status reports, and
// which routes a Gateway's listeners admit; and the strings cached objects
// repeat are kept once.
var CacheTrims = []gatewayruntime.Trim{gatewayruntime.TrimTenantGatewayListeners, gatewayruntime.TrimListenerRoutes,
	gatewayruntime.ShareStrings}

// NewBase is b as this controller uses it: Issuers and Certificates, seldom
// changed once made, are created with a plain create
// (gatewayruntime.OwnedApplier.PlainCreates).
func NewBase(b gatewayruntime.Base) gatewayruntime.Base {
	b.PlainCreates = true
	return b
}

// Reconciler owns the Issuer and the Certificates of every TenantGateway and
// writes CertificatesReady.
type Reconciler struct {
	gatewayruntime.Base
}

// SetupWithManager watches TenantGateways (their spec: their status, which
// the other controllers write too, is no input here), their Gateways (the listeners are
// the input), and Issuers and Certificates in their namespaces (their
// status; and a foreign object at a derived name going away).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, workers int) error {
	inNamespace := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
		return gatewayruntime.TenantGatewaysIn(ctx, mgr.GetClient(), o.GetNamespace())
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("gateway-certs").
		For(&gatewayv1alpha1.TenantGateway{}, builder.WithPredicates(gatewayruntime.SpecOrDeletionChanged())).
		Watches(&gatewayv1.Gateway{}, gatewayruntime.GatewayToTenantGateway()).
		Watches(&cmv1.Issuer{}, inNamespace).
		Watches(&cmv1.Certificate{}, inNamespace).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(r)
}

// Reconcile applies the Issuer and the Certificates of one TenantGateway,
// deletes the ones it owns that are no longer wanted, and reports.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var tgw gatewayv1alpha1.TenantGateway
	if err := r.Client.Get(ctx, req.NamespacedName, &tgw); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !tgw.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	if wait, err := r.waitForGateway(ctx, &tgw); wait > 0 || err != nil {
		return ctrl.Result{RequeueAfter: wait}, err
	}
	ctx, writes := gatewayruntime.WithWrites(ctx)
	c, err := r.reconcile(ctx, &tgw)
	writes.Record(r.Events(), &tgw)
	werr := r.WriteStatus(ctx, &tgw, gatewayruntime.Status{Conditions: []metav1.Condition{certificatesReady(c, err)}})
	// No phase returns a Foreign error: nothing to look at again unasked.
	result, err := reconcileerr.Result(err, 0)
	if werr != nil {
		return ctrl.Result{}, errors.Join(err, werr)
	}
	return result, err
}

// waitForGateway is how long to leave tgw alone while its Gateway is not
// there yet (certs.WaitForGateway).
func (r *Reconciler) waitForGateway(ctx context.Context, tgw *gatewayv1alpha1.TenantGateway) (time.Duration, error) {
	reported := meta.FindStatusCondition(tgw.Status.Conditions, gatewayv1alpha1.ConditionCertificatesReady) != nil
	found, err := r.Get(ctx, tgw.Namespace, names.Gateway(tgw.Name), &gatewayv1.Gateway{})
	if err != nil {
		return 0, err
	}
	return certs.WaitForGateway(time.Since(tgw.CreationTimestamp.Time), reported, found), nil
}

// gathered is what the phases of one reconcile learn and pass on.
type gathered struct {
	tgw   *gatewayv1alpha1.TenantGateway
	state certs.CertificatesState
	gw    gatewayv1.Gateway
	// wanted are the Certificate names the listeners reference.
	wanted map[string]bool
}

// phases are the steps of a reconcile, in order; the first error ends it
// (certificatesReady turns it into the condition).
func (r *Reconciler) phases() []phase.Phase[*gathered] {
	return []phase.Phase[*gathered]{
		{Name: "issuer", Run: r.issuer},             // the Issuer, or none
		{Name: "certificates", Run: r.certificates}, // one per HTTPS listener's Secret
		{Name: "stale", Run: r.stale},               // those no listener references
		{Name: "existing-secret", Run: r.existingSecret},
	}
}

// reconcile runs the phases; the error that ended them, if any, is the
// outcome.
func (r *Reconciler) reconcile(ctx context.Context, tgw *gatewayv1alpha1.TenantGateway) (*gathered, error) {
	c := &gathered{tgw: tgw, state: certs.CertificatesState{
		Mode: tgw.Spec.EffectiveCertMode(), Gateway: tgw.Namespace + "/" + names.Gateway(tgw.Name)}}
	return c, phase.Run(ctx, c, r.phases()...)
}

// certificatesReady is CertificatesReady: decided from what the phases
// gathered, or, when one could not complete, False with the outcome's reason
// (reconcileerr.Reason: a stalled state's own, which the spec must fix and is
// not retried; ReconcileError for anything else, which is retried) and its
// message.
func certificatesReady(c *gathered, err error) metav1.Condition {
	if err != nil {
		return gatewayruntime.Condition(gatewayv1alpha1.ConditionCertificatesReady, metav1.ConditionFalse,
			reconcileerr.Reason(err, gatewayv1alpha1.ReasonReconcileError), err.Error())
	}
	return certs.CertificatesReadyCondition(c.state)
}

// issuer applies the Issuer the certificate mode asks for, or deletes the
// one the TenantGateway controls when it asks for none; one it does not
// control is refused.
func (r *Reconciler) issuer(ctx context.Context, c *gathered) error {
	tgw := c.tgw
	issuer, err := certs.DesiredIssuer(certs.IssuerInput{
		TenantGateway: tgw.Name, Namespace: tgw.Namespace, Spec: tgw.Spec, ManagedBy: r.Name})
	if err != nil {
		return err
	}
	var live cmv1.Issuer
	name := names.Issuer(tgw.Name)
	found, err := r.Get(ctx, tgw.Namespace, name, &live)
	if err != nil {
		return err
	}
	switch {
	case found && !gatewayruntime.ControlledBy(&live, tgw):
		if issuer != nil {
			c.state.Refused = append(c.state.Refused, r.Refuse("Issuer", "Issuer", &live, tgw).Error())
		}
	case issuer == nil && found:
		return r.Delete(ctx, tgw, &live, "Issuer", "certMode "+string(c.state.Mode)+" needs no Issuer")
	case issuer != nil:
		if _, err = r.Apply(ctx, tgw, issuer, issuerGVK, &live, found); err != nil {
			return err
		}
		c.state.Issuer = readyState(name, live.Status.Conditions, found)
	}
	return nil
}

// certificates applies the Certificates the Gateway's HTTPS listeners
// reference; one it does not control is refused.
func (r *Reconciler) certificates(ctx context.Context, c *gathered) error {
	tgw := c.tgw
	var err error
	c.state.GatewayFound, err = r.Get(ctx, tgw.Namespace, names.Gateway(tgw.Name), &c.gw)
	if err != nil {
		return err
	}
	desired := certs.DesiredCertificates(certs.CertificatesInput{
		TenantGateway: tgw.Name, Namespace: tgw.Namespace, CertMode: c.state.Mode, Listeners: c.gw.Spec.Listeners, ManagedBy: r.Name})
	c.wanted = map[string]bool{}
	for i := range desired {
		c.wanted[desired[i].Name] = true
		if err = r.certificate(ctx, c, &desired[i]); err != nil {
			return err
		}
	}
	return nil
}

// certificate applies one Certificate, or refuses one at its name that the
// TenantGateway does not control.
func (r *Reconciler) certificate(ctx context.Context, c *gathered, want *cmv1.Certificate) error {
	var live cmv1.Certificate
	found, err := r.Get(ctx, c.tgw.Namespace, want.Name, &live)
	if err != nil {
		return err
	}
	if found && !gatewayruntime.ControlledBy(&live, c.tgw) {
		c.state.Refused = append(c.state.Refused, r.Refuse("Certificate", "Certificate", &live, c.tgw).Error())
		return nil
	}
	if _, err = r.Apply(ctx, c.tgw, want, certificateGVK, &live, found); err != nil {
		return err
	}
	c.state.Certificates = append(c.state.Certificates, certReady(want.Name, &live, found))
	return nil
}

// existingSecret reads the existingSecret signal: the Gateway implementation
// reads the Secret and reports on the listeners; this controller has no
// right to read Secrets.
func (r *Reconciler) existingSecret(_ context.Context, c *gathered) error {
	ref := c.tgw.Spec.WildcardSecretRef
	if c.state.Mode != gatewayv1alpha1.CertModeExistingSecret || ref == nil {
		return nil
	}
	c.state.SecretName = ref.Name
	if c.state.GatewayFound {
		c.state.Secret = certs.SecretResolution(&c.gw, c.state.SecretName)
	}
	return nil
}

// stale deletes the Certificates this TenantGateway controls that no
// listener references any more. Ownership alone decides, not labels: the
// Certificates upstream Cozystack's controller created for it (labelled
// cozystack.io/tenantgateway, or for the wildcard one only
// cozystack.io/managed-by) are as much its own. Certificates it does not
// control are never deleted, whatever their labels say.
func (r *Reconciler) stale(ctx context.Context, c *gathered) error {
	tgw, wanted := c.tgw, c.wanted
	var list cmv1.CertificateList
	if err := r.Client.List(ctx, &list, client.InNamespace(tgw.Namespace)); err != nil {
		return fmt.Errorf("listing Certificates: %w", err)
	}
	for i := range list.Items {
		cert := &list.Items[i]
		if wanted[cert.Name] || !gatewayruntime.ControlledBy(cert, tgw) {
			continue
		}
		if err := r.Delete(ctx, tgw, cert, "Certificate", "no HTTPS listener of the Gateway references it any more"); err != nil {
			return err
		}
	}
	return nil
}

func readyState(name string, conds []cmv1.IssuerCondition, found bool) certs.ReadyState {
	s := certs.ReadyState{Name: name}
	if !found {
		return s
	}
	for _, c := range conds {
		if c.Type == cmv1.IssuerConditionReady {
			s.Status, s.Reason, s.Message = metav1.ConditionStatus(c.Status), c.Reason, c.Message
		}
	}
	return s
}

// certReady reads a Certificate's Ready condition; one issued for an older
// generation (its dnsNames changed since) is not ready yet.
func certReady(name string, c *cmv1.Certificate, found bool) certs.ReadyState {
	s := certs.ReadyState{Name: name}
	if !found {
		return s
	}
	for _, cond := range c.Status.Conditions {
		if cond.Type == cmv1.CertificateConditionReady && cond.ObservedGeneration == c.Generation {
			s.Status, s.Reason, s.Message = metav1.ConditionStatus(cond.Status), cond.Reason, cond.Message
		}
	}
	return s
}
