package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TenantGateway publishes a tenant through its own Gateway API Gateway: the
// gateway controllers derive the Gateway and its listeners, the redirect
// HTTPRoute, the cert-manager Issuer and Certificates, and the namespace
// labels that let routes attach, from this one object.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=tgw,categories=cozystack-platform
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 63 && self.metadata.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="metadata.name must be a DNS-1123 label of at most 63 characters (lower-case letters, digits and hyphens, no dots): it names the Gateway and is the value of the cozystack.io/gateway label on every derived object"
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Apex",type=string,JSONPath=`.spec.apex`
// +kubebuilder:printcolumn:name="Mode",type=string,JSONPath=`.spec.certMode`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Message",type=string,priority=1,JSONPath=`.status.conditions[?(@.type=="Ready")].message`
type TenantGateway struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec TenantGatewaySpec `json:"spec,omitempty"`

	// +optional
	Status TenantGatewayStatus `json:"status,omitempty"`
}

// TenantGatewayList is a list of TenantGateways.
//
// +kubebuilder:object:root=true
type TenantGatewayList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []TenantGateway `json:"items"`
}

func init() {
	SchemeBuilder.Register(&TenantGateway{}, &TenantGatewayList{})
}

// CertMode says how the Gateway's HTTPS listeners get certificates.
// +kubebuilder:validation:Enum=http01;dns01;existingSecret
type CertMode string

const (
	// CertModeHTTP01: one certificate per published hostname, each issued
	// through an ACME HTTP-01 challenge on the Gateway's port 80.
	CertModeHTTP01 CertMode = "http01"
	// CertModeDNS01: one wildcard certificate for the apex and every
	// inheriting child apex, issued through an ACME DNS-01 challenge.
	CertModeDNS01 CertMode = "dns01"
	// CertModeExistingSecret: the wildcard certificate is a Secret someone
	// else provides (wildcardSecretRef); no Issuer, no Certificate.
	CertModeExistingSecret CertMode = "existingSecret"
)

// IssuerName is the ACME directory the per-tenant Issuer registers with.
// +kubebuilder:validation:Enum=letsencrypt-prod;letsencrypt-stage
type IssuerName string

// Issuer names (ACME directories).
const (
	// IssuerNameLetsEncryptProd: Let's Encrypt production. The default.
	IssuerNameLetsEncryptProd IssuerName = "letsencrypt-prod"
	// IssuerNameLetsEncryptStage: Let's Encrypt staging, for test clusters
	// (untrusted certificates, generous rate limits).
	IssuerNameLetsEncryptStage IssuerName = "letsencrypt-stage"
)

// TenantGatewaySpec is the desired publishing of one tenant. Field names,
// types, enums, defaults and required fields are those of upstream
// Cozystack's gateway.cozystack.io/v1alpha1, so that objects written for it
// (its gateway chart renders one per publishing tenant) are served as they
// are.
//
// The CEL rules below reject only what could never be served: upstream's
// chart never renders such a spec, and upstream's controller fails on it too.
// The DNS-01 rules apply only with certMode dns01, the only mode that reads
// spec.dns01.
//
// +kubebuilder:validation:XValidation:rule="!has(self.certMode) || self.certMode != 'existingSecret' || (has(self.wildcardSecretRef) && has(self.wildcardSecretRef.name) && size(self.wildcardSecretRef.name) > 0)",message="certMode existingSecret needs spec.wildcardSecretRef.name: the Secret (in this namespace) holding the certificate for the apex, *.apex and every inheriting child apex"
// +kubebuilder:validation:XValidation:rule="!has(self.certMode) || self.certMode != 'dns01' || has(self.dns01)",message="certMode dns01 needs spec.dns01: the provider and its block, e.g. {provider: cloudflare, cloudflare: {apiTokenSecretRef: {name: cloudflare-api-token-secret, key: api-token}}}"
// +kubebuilder:validation:XValidation:rule="!has(self.certMode) || self.certMode != 'dns01' || !has(self.dns01) || !has(self.dns01.provider) || self.dns01.provider != 'cloudflare' || has(self.dns01.cloudflare)",message="dns01.provider cloudflare needs spec.dns01.cloudflare.apiTokenSecretRef: the Secret name and key of a Cloudflare API token"
// +kubebuilder:validation:XValidation:rule="!has(self.certMode) || self.certMode != 'dns01' || !has(self.dns01) || !has(self.dns01.provider) || self.dns01.provider != 'digitalocean' || has(self.dns01.digitalocean)",message="dns01.provider digitalocean needs spec.dns01.digitalocean.tokenSecretRef: the Secret name and key of a DigitalOcean API token"
// +kubebuilder:validation:XValidation:rule="!has(self.certMode) || self.certMode != 'dns01' || !has(self.dns01) || !has(self.dns01.provider) || self.dns01.provider != 'route53' || (has(self.dns01.route53) && size(self.dns01.route53.region) > 0)",message="dns01.provider route53 needs spec.dns01.route53.region (the AWS region of the hosted zone, e.g. us-east-1)"
// +kubebuilder:validation:XValidation:rule="!has(self.certMode) || self.certMode != 'dns01' || !has(self.dns01) || !has(self.dns01.provider) || self.dns01.provider != 'rfc2136' || (has(self.dns01.rfc2136) && size(self.dns01.rfc2136.nameserver) > 0)",message="dns01.provider rfc2136 needs spec.dns01.rfc2136.nameserver (host:port of the authoritative DNS server)"
// +kubebuilder:validation:XValidation:rule="!has(self.tlsPassthroughServices) || self.tlsPassthroughServices.all(s, size(s) + 1 + size(self.apex) <= 253)",message="every tlsPassthroughServices entry becomes the listener hostname <service>.<apex>, which must fit in 253 characters: shorten the service name or the apex"
type TenantGatewaySpec struct {
	// Apex is the tenant's apex domain, e.g. example.org: a lower-case DNS
	// name. Routes publish <name>.<apex>; the Gateway serves the apex and,
	// in the wildcard modes, *.<apex>. It should equal the
	// namespace.cozystack.io/host label of this namespace, which the
	// admission policies check listener and route hostnames against.
	// +required
	// +kubebuilder:validation:MaxLength=251
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$`
	Apex string `json:"apex"`

	// CertMode: http01 (a certificate per hostname), dns01 (one wildcard
	// certificate) or existingSecret (a wildcard certificate you provide).
	// +kubebuilder:default=http01
	CertMode CertMode `json:"certMode,omitempty"`

	// IssuerName is the ACME directory: letsencrypt-prod or letsencrypt-stage.
	// Read with certMode http01 and dns01.
	// +kubebuilder:default=letsencrypt-prod
	IssuerName IssuerName `json:"issuerName,omitempty"`

	// DNS01 configures the DNS-01 solver; required with certMode dns01 and
	// read only then. Only the block of the selected provider is read.
	// +optional
	DNS01 *DNS01Config `json:"dns01,omitempty"`

	// WildcardSecretRef names the kubernetes.io/tls Secret, in this
	// namespace, that the HTTPS listeners serve with certMode
	// existingSecret (required then, ignored otherwise). It must cover the
	// apex, *.apex and, for every inheriting child tenant, the child apex
	// and *.child-apex. Other namespaces are not supported: they would need
	// a ReferenceGrant.
	// +optional
	WildcardSecretRef *corev1.LocalObjectReference `json:"wildcardSecretRef,omitempty"`

	// AttachedNamespaces get the label namespace.cozystack.io/gateway=<this
	// namespace>, so their routes may attach to this Gateway's HTTPS and
	// passthrough listeners (typically the cozy-* platform namespaces, and
	// default for the Kubernetes API TLSRoute). The owner namespace is
	// implicit. A namespace that does not exist yet is labelled when it
	// is created; one whose label was written by the tenant chart is left
	// alone.
	// +optional
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	AttachedNamespaces []string `json:"attachedNamespaces,omitempty"`

	// TLSPassthroughServices get a TLS passthrough listener each, named
	// tls-<service>, hostname <service>.<apex>. The listener exists whether
	// or not a route attaches. Unset or empty means no passthrough
	// listener; the gateway chart lists api, vm-exportproxy and
	// cdi-uploadproxy.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:items:MaxLength=59
	TLSPassthroughServices []string `json:"tlsPassthroughServices,omitempty"`

	// GatewayClassName of the Gateway; empty means cilium. Must name an
	// existing GatewayClass.
	// +kubebuilder:default=cilium
	// +kubebuilder:validation:MaxLength=253
	// +optional
	GatewayClassName string `json:"gatewayClassName,omitempty"`
}

// DNS01Provider names a DNS-01 provider.
// +kubebuilder:validation:Enum=cloudflare;route53;digitalocean;rfc2136
type DNS01Provider string

// DNS-01 providers.
const (
	DNS01Cloudflare   DNS01Provider = "cloudflare"
	DNS01Route53      DNS01Provider = "route53"
	DNS01DigitalOcean DNS01Provider = "digitalocean"
	DNS01RFC2136      DNS01Provider = "rfc2136"
)

// DNS01Config selects and configures the DNS-01 provider. Only the block of
// the selected provider is read; the others are ignored. Secrets live in the
// TenantGateway's namespace (the Issuer is namespaced).
type DNS01Config struct {
	// Provider of the DNS zone.
	// +kubebuilder:default=cloudflare
	Provider DNS01Provider `json:"provider,omitempty"`

	// Cloudflare: required with provider cloudflare.
	// +optional
	Cloudflare *CloudflareDNS01 `json:"cloudflare,omitempty"`
	// Route53: required with provider route53.
	// +optional
	Route53 *Route53DNS01 `json:"route53,omitempty"`
	// DigitalOcean: required with provider digitalocean.
	// +optional
	DigitalOcean *DigitalOceanDNS01 `json:"digitalocean,omitempty"`
	// RFC2136: required with provider rfc2136.
	// +optional
	RFC2136 *RFC2136DNS01 `json:"rfc2136,omitempty"`
}

// CloudflareDNS01 holds a Cloudflare API token.
type CloudflareDNS01 struct {
	// APITokenSecretRef selects the key of a Secret holding an API token
	// with Zone:Read and Zone:DNS:Edit on the apex zone.
	// +required
	APITokenSecretRef corev1.SecretKeySelector `json:"apiTokenSecretRef"`
}

// Route53DNS01 uses an IAM access key, or ambient credentials (IRSA, an
// instance profile) when accessKeyID is empty. Ambient credentials on a
// namespaced Issuer need cert-manager's --issuer-ambient-credentials flag.
type Route53DNS01 struct {
	// Region of the hosted zone.
	// +required
	Region string `json:"region"`
	// AccessKeyID of the IAM user; empty uses ambient credentials.
	// +optional
	AccessKeyID string `json:"accessKeyID,omitempty"`
	// SecretAccessKeySecretRef selects the key of a Secret holding the
	// secret access key; needed with accessKeyID.
	// +optional
	SecretAccessKeySecretRef *corev1.SecretKeySelector `json:"secretAccessKeySecretRef,omitempty"`
}

// DigitalOceanDNS01 holds a DigitalOcean API token.
type DigitalOceanDNS01 struct {
	// TokenSecretRef selects the key of a Secret holding an API token with
	// write access to the apex domain.
	// +required
	TokenSecretRef corev1.SecretKeySelector `json:"tokenSecretRef"`
}

// RFC2136DNS01 updates an authoritative DNS server with TSIG.
type RFC2136DNS01 struct {
	// Nameserver is host:port of the DNS server accepting dynamic updates.
	// +required
	Nameserver string `json:"nameserver"`
	// TSIGKeyName is the name of the TSIG key authorising the updates.
	// +required
	TSIGKeyName string `json:"tsigKeyName"`
	// TSIGAlgorithm is the TSIG HMAC algorithm.
	// +kubebuilder:default=HMACSHA256
	// +optional
	TSIGAlgorithm string `json:"tsigAlgorithm,omitempty"`
	// TSIGSecretSecretRef selects the key of a Secret holding the TSIG key.
	// +required
	TSIGSecretSecretRef corev1.SecretKeySelector `json:"tsigSecretSecretRef"`
}

// TenantGatewayStatus is the observed state.
type TenantGatewayStatus struct {
	// ObservedGeneration is the generation gateway-listeners last
	// summarised into Ready, Reconciling and Stalled (kstatus reads the
	// three only when it equals metadata.generation).
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: one per gateway controller, and Ready, the summary that
	// follows the Gateway implementation. Types, owners and reasons are
	// listed in conditions.go.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Listeners of the Gateway, as gateway-listeners last computed and
	// observed them.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	Listeners []TenantGatewayListenerStatus `json:"listeners,omitempty"`
}

// TenantGatewayListenerStatus reports one listener.
type TenantGatewayListenerStatus struct {
	// Name of the listener.
	Name string `json:"name"`
	// Hostname of the listener (empty for the plain-HTTP one).
	// +optional
	Hostname string `json:"hostname,omitempty"`
	// Ready is true when the Gateway implementation reports the listener
	// Accepted and Programmed.
	Ready bool `json:"ready"`
	// CertificateName is the Secret the listener serves (for the HTTP-01
	// and DNS-01 modes also the name of the Certificate that fills it).
	// +optional
	CertificateName string `json:"certificateName,omitempty"`
	// Reason for a listener that is not ready.
	// +optional
	Reason string `json:"reason,omitempty"`
	// Message with details.
	// +optional
	Message string `json:"message,omitempty"`
}

// GetConditions returns the status conditions.
func (t *TenantGateway) GetConditions() []metav1.Condition { return t.Status.Conditions }

// SetConditions replaces the status conditions.
func (t *TenantGateway) SetConditions(c []metav1.Condition) { t.Status.Conditions = c }
