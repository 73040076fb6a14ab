package v1alpha1

// Condition types on a TenantGateway.
//
// Each gateway controller writes only the types it owns (status.conditions is
// a map list keyed by type, so server-side apply merges them per type):
//
//	gateway-listeners  Ready, Reconciling, Stalled, ListenersReady, HostnamesRejected
//	gateway-certs      CertificatesReady
//	ns-labels          NamespacesAttached
//	route-conflicts    none here; it reports on the routes (ReasonHostnameConflict)
//
// Polarity: "positive" means True is the healthy state; "negative" means True
// reports an abnormality.
const (
	// ConditionReady (positive; owner gateway-listeners) is the one summary,
	// with the meaning upstream Cozystack's controller gives it: True when
	// the Gateway implementation reports the Gateway Accepted and Programmed
	// and every listener Accepted and Programmed for the current generation
	// (ListenersReady), reason ReasonReconciled. A listener whose certificate
	// Secret does not exist yet is not programmed, and status.listeners says
	// so. The other controllers' conditions inform without gating it, except
	// when one reports that it cannot do its part at all (a reason in
	// BlockingReasons: an object it refuses to take over, an API error, a
	// spec it cannot serve); then Ready is False with that reason. Waiting
	// for cert-manager (IssuerNotReady, CertificatesNotReady) or for a
	// namespace to be created never makes it False. HostnamesRejected does
	// not gate it either: one bad route hostname must not take the tenant's
	// Gateway out of service.
	ConditionReady = "Ready"

	// ConditionReconciling (negative; owner gateway-listeners), for
	// kstatus: True while Ready is Unknown or False for a reason that more
	// time can fix (the Gateway implementation, cert-manager or another
	// controller still has to act, an API error is retried), with Ready's
	// reason and message. Absent otherwise (pkg/conditions: one convention
	// for every kind).
	ConditionReconciling = "Reconciling"

	// ConditionStalled (negative; owner gateway-listeners), for kstatus:
	// True when Ready is False for a reason in StalledReasons: the spec
	// must change (too many listeners, a spec that cannot be served, an
	// unknown issuer, a GatewayClass that does not accept the Gateway);
	// retrying will not help. kstatus tools then report the TenantGateway
	// as Failed. Absent otherwise.
	ConditionStalled = "Stalled"

	// ConditionListenersReady (positive; owner gateway-listeners): the
	// Gateway and the redirect HTTPRoute are applied as desired, and the
	// Gateway implementation reports the Gateway Accepted and Programmed and
	// every listener Programmed.
	ConditionListenersReady = "ListenersReady"

	// ConditionHostnamesRejected (negative; owner gateway-listeners): True
	// when at least one route hostname got no listener or is not covered by
	// the wildcard certificate; the message lists them with their reasons
	// (ReasonInvalidHostname, ReasonWildcardHostname, ...). Absent or False
	// when every hostname is served.
	ConditionHostnamesRejected = "HostnamesRejected"

	// ConditionCertificatesReady (positive; owner gateway-certs): the Issuer
	// and every Certificate the Gateway's HTTPS listeners reference exist as
	// desired and cert-manager reports them Ready; with certMode
	// existingSecret, the referenced Secret exists.
	ConditionCertificatesReady = "CertificatesReady"

	// ConditionNamespacesAttached (positive; owner ns-labels): every
	// existing namespace in spec.attachedNamespaces (and the owner
	// namespace) carries namespace.cozystack.io/gateway=<this namespace>,
	// and labels this TenantGateway wrote on namespaces no longer listed are
	// removed. Listed namespaces that do not exist yet keep it True (reason
	// ReasonNamespacesNotCreated, named in the message): each is labelled
	// when it is created.
	ConditionNamespacesAttached = "NamespacesAttached"
)

// Reasons of TenantGateway conditions, and of the route status entries
// route-conflicts writes. The Ready summary reuses the reason of the condition
// it summarises.
const (
	// ReasonReady: the condition is True; everything it covers is as
	// desired. Used by every controller.
	ReasonReady = "Ready"

	// ReasonReconciled: Ready is True (upstream Cozystack's reason).
	ReasonReconciled = "Reconciled"

	// ReasonProgressing: the desired objects are applied and the controller
	// waits for another actor (the Gateway implementation, cert-manager) to
	// act on them. Transient; the condition is Unknown or False.
	ReasonProgressing = "Progressing"

	// ReasonReconcileError: a step failed; the message names it and the
	// object involved. Covers API errors (retried) and a pre-existing object
	// with a derived name but no owner reference to this TenantGateway,
	// which is never taken over (the user must delete or rename it). Any
	// controller.
	ReasonReconcileError = "ReconcileError"

	// ReasonGatewayNotAccepted (gateway-listeners): the Gateway
	// implementation did not accept the Gateway, e.g. an unknown
	// gatewayClassName; the message carries the implementation's message.
	ReasonGatewayNotAccepted = "GatewayNotAccepted"

	// ReasonGatewayNotProgrammed (gateway-listeners): the Gateway is accepted
	// but not programmed yet, e.g. no load-balancer address assigned.
	ReasonGatewayNotProgrammed = "GatewayNotProgrammed"

	// ReasonListenersNotReady (gateway-listeners): some listeners are not
	// Programmed; status.listeners says which and why (often a certificate
	// Secret that does not exist yet).
	ReasonListenersNotReady = "ListenersNotReady"

	// ReasonTooManyListeners (gateway-listeners): the desired Gateway would
	// have more listeners than the 64 Gateway API allows. Nothing is applied:
	// the current Gateway is kept as it is. With certMode http01 the fix is
	// certMode dns01, which serves every hostname under the apex from one
	// wildcard listener.
	ReasonTooManyListeners = "TooManyListeners"

	// ReasonUnknownIssuer (gateway-certs): spec.issuerName names no known
	// ACME directory. The CRD enum rejects this at admission; the reason
	// covers objects that bypassed it.
	ReasonUnknownIssuer = "UnknownIssuer"

	// ReasonInvalidSpec (any controller): the spec cannot be turned into
	// objects, e.g. a DNS-01 provider block without its required field.
	// The CEL rules reject these at admission; the reason covers objects
	// that bypassed them.
	ReasonInvalidSpec = "InvalidSpec"

	// ReasonIssuerNotReady (gateway-certs): cert-manager has not registered
	// the ACME account of the Issuer yet, or failed to.
	ReasonIssuerNotReady = "IssuerNotReady"

	// ReasonCertificatesNotReady (gateway-certs): some Certificates are not
	// issued yet; the message names them.
	ReasonCertificatesNotReady = "CertificatesNotReady"

	// ReasonGatewayNotFound (gateway-certs): the Gateway whose listeners
	// define the certificate set does not exist yet.
	ReasonGatewayNotFound = "GatewayNotFound"

	// ReasonSecretNotFound (gateway-certs): with certMode existingSecret,
	// the Gateway implementation cannot use the Secret named by
	// spec.wildcardSecretRef (ResolvedRefs=False, InvalidCertificateRef): it
	// does not exist, or it is not a TLS Secret; the message carries the
	// implementation's message, which says which.
	ReasonSecretNotFound = "SecretNotFound"

	// ReasonNamespacesNotCreated (ns-labels, NamespacesAttached True): some
	// attachedNamespaces entries name namespaces that do not exist (yet);
	// each is labelled once it appears. Upstream's chart lists platform
	// namespaces that many clusters never create, so this is not a problem.
	ReasonNamespacesNotCreated = "NamespacesNotCreated"

	// ReasonNamespaceLabelConflict (ns-labels): an attachedNamespaces entry
	// already carries namespace.cozystack.io/gateway with another value,
	// written by the tenant chart or another TenantGateway; it is left
	// alone.
	ReasonNamespaceLabelConflict = "NamespaceLabelConflict"

	// ReasonSharedNamespacesOnRoot (ns-labels, NamespacesAttached True): a
	// TenantGateway outside the root tenant lists shared namespaces (cozy-*,
	// default) that the root tenant's TenantGateway lists too, as upstream's
	// gateway chart renders the cluster-wide list into every tenant's. Those
	// are published through the root tenant's Gateway and are not attached
	// here; the message names them. Every namespace it may attach carries the
	// label.
	ReasonSharedNamespacesOnRoot = "SharedNamespacesOnRoot"

	// ReasonNamespaceNotAllowed (ns-labels, NamespacesAttached False): an
	// attachedNamespaces entry is one this TenantGateway may not attach
	// (attach.MayAttach in ns-labels): a shared namespace (cozy-*, default)
	// listed by a TenantGateway outside the root tenant and not by the root
	// tenant's, or a tenant namespace that does not descend from its
	// namespace. It is not labelled; the message names it and says what to
	// do. Informing: the rest of the TenantGateway is served.
	ReasonNamespaceNotAllowed = "NamespaceNotAllowed"

	// ReasonHostnameConflict (route-conflicts, on a route's
	// status.parents entry under RouteConflictControllerName, with
	// Accepted=False): another namespace's route claims the same hostname and
	// wins; the message names the winner.
	ReasonHostnameConflict = "HostnameConflict"
)

// BlockingReasons are the reasons with which a condition of gateway-certs or
// ns-labels makes Ready False: the controller could not do its part at all,
// as upstream's single controller then fails its whole reconcile. Every other
// reason of theirs only informs.
var BlockingReasons = []string{ReasonReconcileError, ReasonInvalidSpec, ReasonUnknownIssuer}

// StalledReasons are the Ready reasons that make Stalled True: the user must
// change something; time alone fixes nothing.
var StalledReasons = []string{ReasonTooManyListeners, ReasonInvalidSpec, ReasonUnknownIssuer, ReasonGatewayNotAccepted}

// Reasons a route hostname gets no listener (HTTP-01) or is not covered by
// the wildcard certificate (DNS-01, existingSecret). They appear in the
// message of HostnamesRejected.
const (
	// ReasonInvalidHostname: not a lower-case DNS-1123 subdomain with labels
	// of at most 63 characters.
	ReasonInvalidHostname = "InvalidHostname"
	// ReasonWildcardHostname: a wildcard route hostname never yields a
	// per-hostname listener or certificate (HTTP-01 cannot issue wildcards);
	// use certMode dns01.
	ReasonWildcardHostname = "WildcardHostname"
	// ReasonHostnameOutsideApex: the hostname is not the apex or under it;
	// the Gateway hostname policy would reject the whole Gateway.
	ReasonHostnameOutsideApex = "HostnameOutsideApex"
	// ReasonReservedHostname: the hostname is served by a TLS passthrough
	// listener (tlsPassthroughServices); an HTTPS listener for it would
	// conflict on the same port and SNI.
	ReasonReservedHostname = "ReservedHostname"
	// ReasonHostnameNotCovered: with a wildcard certificate, the hostname is
	// more than one label below the apex or a child apex, which a wildcard
	// certificate does not cover.
	ReasonHostnameNotCovered = "HostnameNotCovered"
	// ReasonAllHostnamesServed: HostnamesRejected is False; every route
	// hostname has its listener or is covered by the wildcard certificate.
	ReasonAllHostnamesServed = "AllHostnamesServed"
	// ReasonListenerNameCollision: two hostnames map to the same listener
	// name (same first label and same 32-bit hash); the one sorting later is
	// left out.
	ReasonListenerNameCollision = "ListenerNameCollision"
)

// Labels, annotations and names shared by the gateway controllers, the tenant
// chart and the admission policies.
const (
	// LabelNamespaceGateway on a namespace names the namespace of the
	// TenantGateway whose Gateway its routes may attach to. Written by the
	// tenant chart on tenant namespaces and by ns-labels on attachedNamespaces.
	LabelNamespaceGateway = "namespace.cozystack.io/gateway"
	// LabelNamespaceHost on a namespace is its tenant apex.
	LabelNamespaceHost = "namespace.cozystack.io/host"
	// LabelMetadataName is the label the API server puts on every namespace
	// with its own name; the port-80 listener selects on it.
	LabelMetadataName = "kubernetes.io/metadata.name"
	// AnnotationAttachedBy marks a gateway label written by ns-labels (value:
	// the owner namespace); labels without it belong to the tenant chart.
	AnnotationAttachedBy = "cozystack.io/gateway-attached-by"
	// LabelGateway on derived objects names their TenantGateway.
	LabelGateway = "cozystack.io/gateway"
	// LabelTenantGateway on derived objects also names their TenantGateway:
	// upstream Cozystack's controller labels its redirect route and
	// per-listener Certificates with it, so selectors written for it keep
	// working.
	LabelTenantGateway = "cozystack.io/tenantgateway"
	// ManagedByUpstream is the cozystack.io/managed-by value of objects
	// upstream Cozystack's controller created; gateway-listeners and
	// gateway-certs adopt those their TenantGateway controls.
	ManagedByUpstream = "cozystack-controller"
	// LabelManagedBy on derived objects names the controller.
	LabelManagedBy = "cozystack.io/managed-by"
	// LabelPerListenerCert ("true") marks HTTP-01 per-listener Certificates.
	LabelPerListenerCert = "cozystack.io/per-listener-cert"
	// LabelHTTP01Solver ("true") marks cert-manager's HTTP-01 solver routes,
	// which are never hostname conflicts.
	LabelHTTP01Solver = "acme.cert-manager.io/http01-solver"
	// RouteConflictControllerName is the controllerName of our route
	// status.parents entries.
	RouteConflictControllerName = "gateway.cozystack.io/tenantgateway-controller"
	// CertManagerNamespace is where cert-manager publishes HTTP-01 challenge
	// routes for ClusterIssuers in Cozystack's layout; the port-80 listener
	// admits it. gateway-listeners' --cert-manager-namespace names another
	// (a stock install's cert-manager).
	CertManagerNamespace = "cozy-cert-manager"
)
