// Package controller reconciles TenantGateways into their cert-manager Issuer
// and Certificates.
package controller

import (
	"context"
	"errors"
	"fmt"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/gatewayctl"
	"github.com/cozyplane/cozyplane/pkg/reconcileerr"
	"github.com/cozyplane/cozyplane/pkg/tenantgateway"
)

var (
	issuerGVK      = cmv1.SchemeGroupVersion.WithKind("Issuer")
	certificateGVK = cmv1.SchemeGroupVersion.WithKind("Certificate")
)

// Reconciler owns the Issuer and the Certificates of every TenantGateway and
// writes CertificatesReady.
type Reconciler struct {
	gatewayctl.Base
}

// SetupWithManager watches TenantGateways, their Gateways (the listeners are
// the input), and Issuers and Certificates in their namespaces (their
// status; and a foreign object at a derived name going away).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, workers int) error {
	inNamespace := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
		return gatewayctl.TenantGatewaysIn(ctx, mgr.GetClient(), o.GetNamespace())
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("gateway-certs").
		For(&gatewayv1alpha1.TenantGateway{}).
		Watches(&gatewayv1.Gateway{}, gatewayctl.GatewayToTenantGateway()).
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
	cond, result, err := r.reconcile(ctx, &tgw)
	if werr := r.WriteStatus(ctx, &tgw, gatewayctl.Status{Conditions: []metav1.Condition{cond}}); werr != nil {
		err = errors.Join(err, werr)
	}
	return result, err
}

func (r *Reconciler) reconcile(ctx context.Context, tgw *gatewayv1alpha1.TenantGateway) (metav1.Condition, ctrl.Result, error) {
	mode := tgw.Spec.EffectiveCertMode()
	state := tenantgateway.CertificatesState{Mode: mode, Gateway: tgw.Namespace + "/" + tenantgateway.GatewayName(tgw.Name)}
	failed := func(err error) (metav1.Condition, ctrl.Result, error) {
		if s, ok := reconcileerr.AsStalled(err); ok {
			// The spec must change; retrying does not help.
			return gatewayctl.Condition(gatewayv1alpha1.ConditionCertificatesReady, metav1.ConditionFalse, s.Reason, err.Error()), ctrl.Result{}, nil
		}
		return gatewayctl.Condition(gatewayv1alpha1.ConditionCertificatesReady, metav1.ConditionFalse,
			gatewayv1alpha1.ReasonReconcileError, err.Error()), ctrl.Result{}, err
	}

	// The Issuer.
	issuer, err := tenantgateway.DesiredIssuer(tenantgateway.IssuerInput{
		TenantGateway: tgw.Name, Namespace: tgw.Namespace, Spec: tgw.Spec, ManagedBy: r.Name})
	if err != nil {
		return failed(err)
	}
	var liveIssuer cmv1.Issuer
	issuerName := tenantgateway.IssuerName(tgw.Name)
	found, err := r.Get(ctx, tgw.Namespace, issuerName, &liveIssuer)
	if err != nil {
		return failed(err)
	}
	switch {
	case found && !metav1.IsControlledBy(&liveIssuer, tgw):
		if issuer != nil {
			state.Refused = append(state.Refused, r.Refuse("Issuer", &liveIssuer, tgw).Error())
		}
	case issuer == nil && found:
		if err := r.Delete(ctx, tgw, &liveIssuer, "Issuer", "certMode "+string(mode)+" needs no Issuer"); err != nil {
			return failed(err)
		}
	case issuer != nil:
		if err := r.apply(ctx, tgw, issuer, issuerGVK, &liveIssuer, found); err != nil {
			return failed(err)
		}
		state.Issuer = readyState(issuerName, liveIssuer.Status.Conditions, found)
	}

	// The Certificates, from the Gateway's listeners.
	var gw gatewayv1.Gateway
	state.GatewayFound, err = r.Get(ctx, tgw.Namespace, tenantgateway.GatewayName(tgw.Name), &gw)
	if err != nil {
		return failed(err)
	}
	desired := tenantgateway.DesiredCertificates(tenantgateway.CertificatesInput{
		TenantGateway: tgw.Name, Namespace: tgw.Namespace, CertMode: mode, Listeners: gw.Spec.Listeners, ManagedBy: r.Name})
	wanted := map[string]bool{}
	for i := range desired {
		want := &desired[i]
		wanted[want.Name] = true
		var live cmv1.Certificate
		found, err := r.Get(ctx, tgw.Namespace, want.Name, &live)
		if err != nil {
			return failed(err)
		}
		if found && !metav1.IsControlledBy(&live, tgw) {
			state.Refused = append(state.Refused, r.Refuse("Certificate", &live, tgw).Error())
			continue
		}
		if err := r.apply(ctx, tgw, want, certificateGVK, &live, found); err != nil {
			return failed(err)
		}
		state.Certificates = append(state.Certificates, certReady(want.Name, &live, found))
	}
	if err := r.deleteStale(ctx, tgw, wanted); err != nil {
		return failed(err)
	}

	if mode == gatewayv1alpha1.CertModeExistingSecret && tgw.Spec.WildcardSecretRef != nil {
		// The Gateway implementation reads the Secret and reports on the
		// listeners; this controller has no right to read Secrets.
		state.SecretName = tgw.Spec.WildcardSecretRef.Name
		if state.GatewayFound {
			state.Secret = tenantgateway.SecretResolution(&gw, state.SecretName)
		}
	}
	return tenantgateway.CertificatesReadyCondition(state), ctrl.Result{}, nil
}

// apply applies desired; live is the object read, used only when found.
func (r *Reconciler) apply(ctx context.Context, tgw *gatewayv1alpha1.TenantGateway, desired runtime.Object, gvk schema.GroupVersionKind, live client.Object, found bool) error {
	if !found {
		live = nil
	}
	_, err := r.Apply(ctx, tgw, desired, gvk, live)
	return err
}

// deleteStale deletes the Certificates this TenantGateway controls that no
// listener references any more. Ownership alone decides, not labels: the
// Certificates upstream Cozystack's controller created for it (labelled
// cozystack.io/tenantgateway, or for the wildcard one only
// cozystack.io/managed-by) are as much its own. Certificates it does not
// control are never deleted, whatever their labels say.
func (r *Reconciler) deleteStale(ctx context.Context, tgw *gatewayv1alpha1.TenantGateway, wanted map[string]bool) error {
	var certs cmv1.CertificateList
	if err := r.Client.List(ctx, &certs, client.InNamespace(tgw.Namespace)); err != nil {
		return fmt.Errorf("listing Certificates: %w", err)
	}
	for i := range certs.Items {
		c := &certs.Items[i]
		if wanted[c.Name] || !metav1.IsControlledBy(c, tgw) {
			continue
		}
		if err := r.Delete(ctx, tgw, c, "Certificate", "no HTTPS listener of the Gateway references it any more"); err != nil {
			return err
		}
	}
	return nil
}

func readyState(name string, conds []cmv1.IssuerCondition, found bool) tenantgateway.ReadyState {
	s := tenantgateway.ReadyState{Name: name}
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
func certReady(name string, c *cmv1.Certificate, found bool) tenantgateway.ReadyState {
	s := tenantgateway.ReadyState{Name: name}
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
