package v1alpha1

import (
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
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type TenantGateway struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec TenantGatewaySpec `json:"spec"`

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

// Issuer names (ACME directories).
const (
	IssuerLetsEncryptProd  = "letsencrypt-prod"
	IssuerLetsEncryptStage = "letsencrypt-stage"
)

// TenantGatewaySpec is the desired publishing of one tenant.
//
// The DNS-01 rules apply only with certMode dns01, the only mode that reads
// spec.dns01.
//
// +kubebuilder:validation:XValidation:rule="!has(self.certMode) || self.certMode != 'existingSecret' || has(self.wildcardSecretRef)",message="certMode existingSecret needs spec.wildcardSecretRef: the Secret (in this namespace) holding the certificate for the apex, *.apex and every inheriting child apex"
// +kubebuilder:validation:XValidation:rule="!has(self.certMode) || self.certMode != 'dns01' || !has(self.dns01) || !has(self.dns01.provider) || self.dns01.provider != 'route53' || (has(self.dns01.route53) && has(self.dns01.route53.region) && size(self.dns01.route53.region) > 0)",message="dns01.provider route53 needs spec.dns01.route53.region (the AWS region of the hosted zone, e.g. us-east-1)"
// +kubebuilder:validation:XValidation:rule="!has(self.certMode) || self.certMode != 'dns01' || !has(self.dns01) || !has(self.dns01.provider) || self.dns01.provider != 'route53' || !has(self.dns01.route53) || !has(self.dns01.route53.accessKeyID) || size(self.dns01.route53.accessKeyID) == 0 || (has(self.dns01.route53.secretName) && size(self.dns01.route53.secretName) > 0)",message="spec.dns01.route53.accessKeyID needs spec.dns01.route53.secretName: the Secret holding the matching secret access key (leave both empty to use IRSA or the instance profile)"
// +kubebuilder:validation:XValidation:rule="!has(self.certMode) || self.certMode != 'dns01' || !has(self.dns01) || !has(self.dns01.provider) || self.dns01.provider != 'rfc2136' || (has(self.dns01.rfc2136) && has(self.dns01.rfc2136.nameserver) && size(self.dns01.rfc2136.nameserver) > 0)",message="dns01.provider rfc2136 needs spec.dns01.rfc2136.nameserver (host:port of the authoritative DNS server)"
// +kubebuilder:validation:XValidation:rule="!has(self.certMode) || self.certMode != 'dns01' || !has(self.dns01) || !has(self.dns01.provider) || self.dns01.provider != 'rfc2136' || (has(self.dns01.rfc2136) && has(self.dns01.rfc2136.tsigKeyName) && size(self.dns01.rfc2136.tsigKeyName) > 0 && has(self.dns01.rfc2136.secretName) && size(self.dns01.rfc2136.secretName) > 0)",message="dns01.provider rfc2136 needs spec.dns01.rfc2136.tsigKeyName and spec.dns01.rfc2136.secretName: the TSIG key name and the Secret holding its key material"
// +kubebuilder:validation:XValidation:rule="!has(self.tlsPassthroughServices) || self.tlsPassthroughServices.all(s, size(s) + 1 + size(self.apex) <= 253)",message="every tlsPassthroughServices entry becomes the listener hostname <service>.<apex>, which must fit in 253 characters: shorten the service name or the apex"
type TenantGatewaySpec struct {
	// Apex is the tenant's apex domain, e.g. example.org: a lower-case DNS
	// name. Routes publish <name>.<apex>; the Gateway serves the apex and,
	// in the wildcard modes, *.<apex>. It should equal the
	// namespace.cozystack.io/host label of this namespace, which the
	// admission policies check listener and route hostnames against.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=251
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$`
	Apex string `json:"apex"`

	// CertMode: http01 (a certificate per hostname), dns01 (one wildcard
	// certificate) or existingSecret (a wildcard certificate you provide).
	// +kubebuilder:default=http01
	// +optional
	CertMode CertMode `json:"certMode,omitempty"`

	// IssuerName is the ACME directory: letsencrypt-prod or letsencrypt-stage.
	// +kubebuilder:validation:Enum=letsencrypt-prod;letsencrypt-stage
	// +kubebuilder:default=letsencrypt-prod
	// +optional
	IssuerName string `json:"issuerName,omitempty"`

	// DNS01 configures the DNS-01 solver; read only with certMode dns01.
	// Defaults to Cloudflare with the documented Secret.
	// +kubebuilder:default={provider: cloudflare}
	// +optional
	DNS01 *DNS01 `json:"dns01,omitempty"`

	// WildcardSecretRef names the kubernetes.io/tls Secret, in this
	// namespace, that the HTTPS listeners serve with certMode
	// existingSecret. It must cover the apex, *.apex and, for every
	// inheriting child tenant, the child apex and *.child-apex.
	// +optional
	WildcardSecretRef *SecretReference `json:"wildcardSecretRef,omitempty"`

	// AttachedNamespaces get the label namespace.cozystack.io/gateway=<this
	// namespace>, so their routes may attach to this Gateway's HTTPS and
	// passthrough listeners (typically the cozy-* platform namespaces, and
	// default for the Kubernetes API TLSRoute). A namespace whose label was
	// written by the tenant chart is left alone.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	AttachedNamespaces []string `json:"attachedNamespaces,omitempty"`

	// TLSPassthroughServices get a TLS passthrough listener each, named
	// tls-<service>, hostname <service>.<apex>, admitting TLSRoutes only.
	// The listener exists whether or not a route attaches. An empty list
	// means no passthrough listener.
	// +kubebuilder:default={api,vm-exportproxy,cdi-uploadproxy}
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:items:MaxLength=59
	TLSPassthroughServices []string `json:"tlsPassthroughServices,omitempty"`

	// GatewayClassName of the Gateway. Must name an existing GatewayClass
	// (with Cilium, exactly cilium).
	// +kubebuilder:default=cilium
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +optional
	GatewayClassName string `json:"gatewayClassName,omitempty"`
}

// SecretReference names a Secret in the TenantGateway's namespace.
type SecretReference struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
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

// DNS01 selects and configures the DNS-01 provider. Only the block of the
// selected provider is read.
//
// Defaults: the API server defaults a field only when its parent object
// exists. The cloudflare and digitalocean blocks need nothing from the user,
// so they default to {} and therefore always carry their documented Secret
// name and key, even when only the provider is given (and even when another
// provider is selected: they are then ignored). The route53 and rfc2136 blocks
// need a region or a nameserver, so the CEL rules on the spec make the user
// write the block, whose key defaults then apply. TenantGatewaySpec.EffectiveDNS01
// applies the same defaults in Go for objects that did not come through the
// API server.
type DNS01 struct {
	// Provider of the DNS zone.
	// +kubebuilder:default=cloudflare
	// +optional
	Provider DNS01Provider `json:"provider,omitempty"`

	// Cloudflare: an API token in a Secret of this namespace.
	// +kubebuilder:default={}
	// +optional
	Cloudflare *Cloudflare `json:"cloudflare,omitempty"`
	// Route53: region required; an access key in a Secret, or ambient
	// credentials (IRSA, instance profile) when secretName is empty.
	// +optional
	Route53 *Route53 `json:"route53,omitempty"`
	// DigitalOcean: an API token in a Secret of this namespace.
	// +kubebuilder:default={}
	// +optional
	DigitalOcean *DigitalOcean `json:"digitalocean,omitempty"`
	// RFC2136: nameserver, TSIG key name and the Secret with the TSIG key
	// required.
	// +optional
	RFC2136 *RFC2136 `json:"rfc2136,omitempty"`
}

// Cloudflare holds an API token.
type Cloudflare struct {
	// SecretName of the Secret with the API token.
	// +kubebuilder:default=cloudflare-api-token-secret
	// +optional
	SecretName string `json:"secretName,omitempty"`
	// SecretKey of the token in that Secret.
	// +kubebuilder:default=api-token
	// +optional
	SecretKey string `json:"secretKey,omitempty"`
}

// Route53 uses IRSA / an instance profile, or an access key in a Secret.
// Ambient credentials on a namespaced Issuer need cert-manager's
// --issuer-ambient-credentials flag.
type Route53 struct {
	// Region of the hosted zone (required with provider route53).
	// +optional
	Region string `json:"region,omitempty"`
	// HostedZoneID limits the solver to one zone.
	// +optional
	HostedZoneID string `json:"hostedZoneID,omitempty"`
	// AccessKeyID of the IAM user; empty uses ambient credentials.
	// +optional
	AccessKeyID string `json:"accessKeyID,omitempty"`
	// SecretName of the Secret with the secret access key; empty uses
	// ambient credentials.
	// +optional
	SecretName string `json:"secretName,omitempty"`
	// SecretKey of the secret access key in that Secret.
	// +kubebuilder:default=secret-access-key
	// +optional
	SecretKey string `json:"secretKey,omitempty"`
}

// DigitalOcean holds an API token.
type DigitalOcean struct {
	// SecretName of the Secret with the API token.
	// +kubebuilder:default=digitalocean-api-token-secret
	// +optional
	SecretName string `json:"secretName,omitempty"`
	// SecretKey of the token in that Secret.
	// +kubebuilder:default=access-token
	// +optional
	SecretKey string `json:"secretKey,omitempty"`
}

// RFC2136 updates an authoritative DNS server with TSIG.
type RFC2136 struct {
	// Nameserver is host:port of the DNS server (required with provider rfc2136).
	// +optional
	Nameserver string `json:"nameserver,omitempty"`
	// TSIGKeyName is the TSIG key name.
	// +optional
	TSIGKeyName string `json:"tsigKeyName,omitempty"`
	// TSIGAlgorithm, e.g. HMACSHA256.
	// +kubebuilder:default=HMACSHA256
	// +optional
	TSIGAlgorithm string `json:"tsigAlgorithm,omitempty"`
	// SecretName of the Secret with the TSIG key.
	// +optional
	SecretName string `json:"secretName,omitempty"`
	// SecretKey of the TSIG key in that Secret.
	// +kubebuilder:default=tsig-secret-key
	// +optional
	SecretKey string `json:"secretKey,omitempty"`
}

// TenantGatewayStatus is the observed state.
type TenantGatewayStatus struct {
	// ObservedGeneration is the generation gateway-listeners last
	// summarised into Ready.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: one per gateway controller, and Ready summarising them
	// all. Types, owners and reasons are listed in conditions.go.
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
	Listeners []ListenerStatus `json:"listeners,omitempty"`
}

// ListenerStatus reports one listener.
type ListenerStatus struct {
	// Name of the listener.
	Name string `json:"name"`
	// Hostname of the listener (empty for the plain-HTTP one).
	// +optional
	Hostname string `json:"hostname,omitempty"`
	// Ready is true when the Gateway reports the listener Programmed.
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
