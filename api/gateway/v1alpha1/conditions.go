package v1alpha1

// Condition types on a TenantGateway. Each controller owns exactly its own
// type; gateway-listeners also owns Ready, the one summary of them all.
const (
	// ConditionReady (positive; owner gateway-listeners) summarises every
	// controller's condition and the Gateway's own status.
	ConditionReady = "Ready"
	// ConditionListenersReady (positive; owner gateway-listeners): the
	// Gateway and redirect route are applied and the Gateway reports them.
	ConditionListenersReady = "ListenersReady"
	// ConditionCertificatesReady (positive; owner gateway-certs): the Issuer
	// and the Certificates the Gateway's HTTPS listeners need exist.
	ConditionCertificatesReady = "CertificatesReady"
	// ConditionNamespacesAttached (positive; owner ns-labels): the owner
	// namespace and attachedNamespaces carry the gateway label.
	ConditionNamespacesAttached = "NamespacesAttached"
)

// Reasons of TenantGateway conditions.
const (
	ReasonReady                = "Ready"
	ReasonReconcileError       = "ReconcileError"
	ReasonGatewayNotAccepted   = "GatewayNotAccepted"
	ReasonGatewayNotProgrammed = "GatewayNotProgrammed"
	ReasonListenersNotReady    = "ListenersNotReady"
	ReasonTooManyListeners     = "TooManyListeners"
	ReasonUnknownIssuer        = "UnknownIssuer"
	ReasonInvalidHostname      = "InvalidHostname"
	ReasonHostnameConflict     = "HostnameConflict"
	ReasonProgressing          = "Progressing"
)

// Labels and annotations shared by the gateway controllers and the tenant
// chart.
const (
	// LabelNamespaceGateway on a namespace names the namespace of the
	// TenantGateway whose Gateway its routes may attach to.
	LabelNamespaceGateway = "namespace.cozystack.io/gateway"
	// LabelNamespaceHost on a namespace is its tenant apex.
	LabelNamespaceHost = "namespace.cozystack.io/host"
	// AnnotationAttachedBy marks a gateway label written by ns-labels (value:
	// the owner namespace); labels without it belong to the tenant chart.
	AnnotationAttachedBy = "cozystack.io/gateway-attached-by"
	// LabelGateway on derived objects names their TenantGateway.
	LabelGateway = "cozystack.io/gateway"
	// LabelManagedBy on derived objects names the controller.
	LabelManagedBy = "cozystack.io/managed-by"
	// LabelPerListenerCert marks HTTP-01 per-listener Certificates.
	LabelPerListenerCert = "cozystack.io/per-listener-cert"
	// LabelHTTP01Solver marks cert-manager's HTTP-01 solver routes.
	LabelHTTP01Solver = "acme.cert-manager.io/http01-solver"
	// RouteConflictControllerName is the controllerName of our route
	// status.parents entries.
	RouteConflictControllerName = "gateway.cozystack.io/tenantgateway-controller"
)
