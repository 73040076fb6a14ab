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
// +kubebuilder:validation:XValidation:rule="self.certMode != 'existingSecret' || has(self.wildcardSecretRef)",message="certMode existingSecret needs spec.wildcardSecretRef: the Secret (in this namespace) holding the certificate for the apex and *.apex"
// +kubebuilder:validation:XValidation:rule="!has(self.dns01) || self.dns01.provider != 'route53' || (has(self.dns01.route53) && has(self.dns01.route53.region) && size(self.dns01.route53.region) > 0)",message="dns01.provider route53 needs spec.dns01.route53.region"
// +kubebuilder:validation:XValidation:rule="!has(self.dns01) || self.dns01.provider != 'rfc2136' || (has(self.dns01.rfc2136) && has(self.dns01.rfc2136.nameserver) && size(self.dns01.rfc2136.nameserver) > 0)",message="dns01.provider rfc2136 needs spec.dns01.rfc2136.nameserver (host:port of the authoritative DNS server)"
type TenantGatewaySpec struct {
	// Apex is the tenant's apex domain, e.g. example.org; routes publish
	// <name>.<apex>.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
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

	// DNS01 configures the DNS-01 solver (certMode dns01).
	// +kubebuilder:default={provider: cloudflare}
	// +optional
	DNS01 *DNS01 `json:"dns01,omitempty"`

	// WildcardSecretRef names the Secret with the wildcard certificate
	// (certMode existingSecret).
	// +optional
	WildcardSecretRef *SecretReference `json:"wildcardSecretRef,omitempty"`

	// AttachedNamespaces are labelled so their routes may attach to this
	// Gateway (typically the cozy-* platform namespaces).
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=63
	AttachedNamespaces []string `json:"attachedNamespaces,omitempty"`

	// TLSPassthroughServices get a TLS passthrough listener each, hostname
	// <service>.<apex>.
	// +kubebuilder:default={api,vm-exportproxy,cdi-uploadproxy}
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:items:MaxLength=59
	TLSPassthroughServices []string `json:"tlsPassthroughServices,omitempty"`

	// GatewayClassName of the Gateway.
	// +kubebuilder:default=cilium
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +optional
	GatewayClassName string `json:"gatewayClassName,omitempty"`
}

// SecretReference names a Secret in the TenantGateway's namespace.
type SecretReference struct {
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
// selected provider is read; its defaults apply even when the block is
// omitted (see the Effective* methods).
type DNS01 struct {
	// Provider of the DNS zone.
	// +kubebuilder:default=cloudflare
	// +optional
	Provider DNS01Provider `json:"provider,omitempty"`

	// +optional
	Cloudflare *Cloudflare `json:"cloudflare,omitempty"`
	// +optional
	Route53 *Route53 `json:"route53,omitempty"`
	// +optional
	DigitalOcean *DigitalOcean `json:"digitalocean,omitempty"`
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
	// +kubebuilder:default=digitalocean-api-token-secret
	// +optional
	SecretName string `json:"secretName,omitempty"`
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
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: one per gateway controller, and Ready summarising them
	// all (see conditions.go).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Listeners of the Gateway, as the gateway-listeners controller sees them.
	// +optional
	// +listType=map
	// +listMapKey=name
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
	// CertificateName is the Secret the listener serves.
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
