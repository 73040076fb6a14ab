// Package v1alpha1 holds the gateway.cozystack.io/v1alpha1 API: the
// TenantGateway, from which four small controllers publish a tenant through
// Gateway API.
//
//   - gateway-listeners derives the Gateway (named after the TenantGateway)
//     with its listeners and the HTTP-to-HTTPS redirect HTTPRoute, and owns the
//     Ready summary;
//   - gateway-certs derives the cert-manager Issuer and Certificates from the
//     Gateway's HTTPS listeners;
//   - ns-labels labels spec.attachedNamespaces so their routes may attach;
//   - route-conflicts writes hostname-conflict verdicts on routes.
//
// The names of every derived object and listener are in package
// github.com/cozyplane/cozyplane/api/gateway/names; the decisions behind
// them live in each controller's module (controllers/<name>/internal), what
// two of them share in github.com/cozyplane/cozyplane/pkg/tenantgateway. The
// conditions each controller owns, their reasons, and the label and
// annotation keys shared with the tenant chart are in conditions.go.
package v1alpha1
