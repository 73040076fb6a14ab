package v1alpha1

import (
	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/kustomize"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tfv1alpha2 "github.com/cozyplane/cozyplane/api/tofu/v1alpha2"
)

// ApplicationDefinition declares a user-facing kind in apps.cozystack.io: its
// names, its OpenAPI schema and the backend that turns each instance into a
// backing object (a Flux HelmRelease or a tofu-controller Terraform).
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=appdef;appdefs,categories=cozystack-platform
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Kind",type=string,JSONPath=`.spec.application.kind`
// +kubebuilder:printcolumn:name="Backend",type=string,JSONPath=`.status.backend`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Instances",type=integer,JSONPath=`.status.instances`,priority=1
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ApplicationDefinition struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ApplicationDefinitionSpec `json:"spec,omitempty"`

	// +optional
	Status ApplicationDefinitionStatus `json:"status,omitempty"`
}

// ApplicationDefinitionList contains a list of ApplicationDefinitions.
//
// +kubebuilder:object:root=true
type ApplicationDefinitionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ApplicationDefinition `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ApplicationDefinition{}, &ApplicationDefinitionList{})
}

// ApplicationDefinitionSpec is the desired state of an ApplicationDefinition.
//
// Exactly one way of naming the backend must be used: spec.backend, or the
// legacy spec.release (which means a Helm backend). Both may be set only when
// they say the same thing, so a definition can migrate without a window in
// which it is invalid. The API server checks the chart, prefix and wait
// strategy (CEL); labels healthCheckExprs and the chart's kind are compared by ResolvedBackend,
// because CEL cost estimation cannot bound a comparison of free-form maps and
// lists, and a disagreement there is reported on the definition's status.
//
// A definition without spec.release reads back with the placeholder release
// (chartRef HelmChart cozyplane-no-helm-release, see PlaceholderChartName),
// which stands for "no release": both rules above ignore it, and the third
// keeps a Helm backend from naming it as its chart.
//
// +kubebuilder:validation:XValidation:rule="has(self.backend) || has(self.release) && self.release.chartRef.name != 'cozyplane-no-helm-release'",message="set spec.backend (type Helm or Terraform), or the legacy spec.release for a Helm backend"
// +kubebuilder:validation:XValidation:rule="!has(self.backend) || !has(self.release) || self.release.chartRef.name == 'cozyplane-no-helm-release' || (self.backend.type == 'Helm' && has(self.backend.helm) && self.backend.helm.chartRef.name == self.release.chartRef.name && has(self.backend.helm.chartRef.__namespace__) == has(self.release.chartRef.__namespace__) && (!has(self.backend.helm.chartRef.__namespace__) || self.backend.helm.chartRef.__namespace__ == self.release.chartRef.__namespace__) && has(self.backend.helm.prefix) == has(self.release.prefix) && (!has(self.backend.helm.prefix) || self.backend.helm.prefix == self.release.prefix) && has(self.backend.helm.waitStrategy) == has(self.release.waitStrategy) && (!has(self.backend.helm.waitStrategy) || self.backend.helm.waitStrategy == self.release.waitStrategy))",message="spec.release and spec.backend disagree: remove spec.release (it is the legacy form of backend.helm), or make backend.type Helm with the same chartRef, prefix and waitStrategy"
// +kubebuilder:validation:XValidation:rule="!has(self.backend) || !has(self.backend.helm) || self.backend.helm.chartRef.name != 'cozyplane-no-helm-release'",message="spec.backend.helm.chartRef names cozyplane-no-helm-release, the placeholder release that stands for no release: name the chart source of the kind"
type ApplicationDefinitionSpec struct {
	// Application names the user-facing kind and carries its schema.
	Application ApplicationDefinitionApplication `json:"application"`

	// Backend says what each instance of the kind becomes.
	// +optional
	Backend *ApplicationBackend `json:"backend,omitempty"`

	// Release is the legacy (upstream Cozystack) form of a Helm backend. When
	// backend is unset it is read as backend {type: Helm, helm: <release>}; the
	// stored object is never rewritten.
	//
	// Absent, the API server fills in a placeholder (chartRef HelmChart
	// cozyplane-no-helm-release, no namespace) that means "no release":
	// upstream's cozystack-api reads spec.release.chartRef of every definition
	// at start without a nil check, and must keep running beside cozyplane
	// for core.cozystack.io (docs/migration.md); upstream's
	// cozystack-controller skips a release whose chartRef names no namespace,
	// so it leaves the kind's HelmReleases alone. ResolvedBackend ignores it.
	// +optional
	// +kubebuilder:default={chartRef:{kind:"HelmChart",name:"cozyplane-no-helm-release"}}
	Release *ApplicationDefinitionRelease `json:"release,omitempty"`

	// Secrets selects the Secrets of an instance that are shown to its tenant.
	// Carried as data for consumers such as the dashboard.
	// +optional
	Secrets ApplicationDefinitionResources `json:"secrets,omitempty"`

	// Services selects the Services of an instance that are shown to its tenant.
	// +optional
	Services ApplicationDefinitionResources `json:"services,omitempty"`

	// Ingresses selects the Ingresses of an instance that are shown to its tenant.
	// +optional
	Ingresses ApplicationDefinitionResources `json:"ingresses,omitempty"`

	// Dashboard describes how the kind appears in a UI. Carried as data.
	// +optional
	Dashboard *ApplicationDefinitionDashboard `json:"dashboard,omitempty"`
}

// ApplicationDefinitionApplication names the user-facing kind.
type ApplicationDefinitionApplication struct {
	// Kind is the CamelCase kind served in apps.cozystack.io, e.g. Postgres.
	// +kubebuilder:validation:Pattern=`^[A-Z][A-Za-z0-9]*$`
	// +kubebuilder:validation:MaxLength=63
	Kind string `json:"kind"`

	// OpenAPISchema is the JSON-encoded OpenAPI v3 schema of an instance's spec.
	OpenAPISchema string `json:"openAPISchema"`

	// Plural is the lower-case plural resource name, e.g. postgreses.
	// +kubebuilder:validation:Pattern=`^[a-z][a-z0-9]*$`
	// +kubebuilder:validation:MaxLength=63
	Plural string `json:"plural"`

	// Singular is the lower-case singular resource name, e.g. postgres.
	// +kubebuilder:validation:Pattern=`^[a-z][a-z0-9]*$`
	// +kubebuilder:validation:MaxLength=63
	Singular string `json:"singular"`
}

// BackendType names a backend.
// +kubebuilder:validation:Enum=Helm;Terraform
type BackendType string

const (
	// BackendHelm materialises each instance as a Flux HelmRelease.
	BackendHelm BackendType = "Helm"
	// BackendTerraform materialises each instance as a tofu-controller Terraform.
	BackendTerraform BackendType = "Terraform"
)

// ApplicationBackend is a discriminated union: type names the backend, and
// exactly the member that matches it is set.
//
// +kubebuilder:validation:XValidation:rule="self.type != 'Helm' || has(self.helm)",message="backend.type is Helm: set backend.helm"
// +kubebuilder:validation:XValidation:rule="self.type != 'Terraform' || has(self.terraform)",message="backend.type is Terraform: set backend.terraform"
// +kubebuilder:validation:XValidation:rule="self.type == 'Helm' || !has(self.helm)",message="backend.helm is set but backend.type is not Helm: remove backend.helm or set type: Helm"
// +kubebuilder:validation:XValidation:rule="self.type == 'Terraform' || !has(self.terraform)",message="backend.terraform is set but backend.type is not Terraform: remove backend.terraform or set type: Terraform"
type ApplicationBackend struct {
	// Type is the backend: Helm or Terraform.
	Type BackendType `json:"type"`

	// Helm configures the Helm backend; set it when type is Helm.
	// +optional
	Helm *HelmBackend `json:"helm,omitempty"`

	// Terraform configures the Terraform backend; set it when type is Terraform.
	// +optional
	Terraform *TerraformBackend `json:"terraform,omitempty"`
}

// HelmReleaseTemplate is what the Helm backend and the legacy release form
// have in common.
type HelmReleaseTemplate struct {
	// ChartRef is the chart source every HelmRelease of the kind installs.
	// It must name its namespace, a platform one such as cozy-system: without
	// one it resolves in each HelmRelease's namespace (the tenant's), and a
	// tenant-* namespace is a tenant's, so the tenant would supply the chart.
	// The placeholder release (see PlaceholderChartName) is the one chartRef
	// without a namespace: it is never installed.
	// +kubebuilder:validation:XValidation:rule="has(self.__namespace__) && !self.__namespace__.startsWith('tenant-') || self.kind == 'HelmChart' && self.name == 'cozyplane-no-helm-release' && !has(self.__namespace__)",messageExpression="'chartRef ' + self.kind + ' ' + self.name + (has(self.__namespace__) ? ' is in the tenant namespace ' + self.__namespace__ : ' names no namespace, so it resolves in each HelmRelease namespace, the tenant one') + ': a tenant could supply the chart helm-controller installs. Set chartRef.namespace to the platform namespace holding the source, such as cozy-system'"
	ChartRef *helmv2.CrossNamespaceSourceReference `json:"chartRef"`

	// Labels are added to every HelmRelease of the kind.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	Labels map[string]string `json:"labels,omitempty"`

	// Prefix is prepended to the instance name to name its HelmRelease
	// (<prefix><name>). Dot-free lower-case DNS characters only.
	// +optional
	// +kubebuilder:validation:Pattern=`^[a-z0-9-]*$`
	// +kubebuilder:validation:MaxLength=52
	Prefix string `json:"prefix,omitempty"`

	// WaitStrategy sets the HelmRelease's spec.waitStrategy.name: poller or
	// legacy. Empty leaves helm-controller's default, except that poller is
	// used when healthCheckExprs is set (only the poller evaluates them).
	// +optional
	// +kubebuilder:validation:Enum=poller;legacy
	// +kubebuilder:validation:MaxLength=16
	WaitStrategy string `json:"waitStrategy,omitempty"`

	// HealthCheckExprs are CEL health checks for custom resources the chart
	// renders, copied to the HelmRelease.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	HealthCheckExprs []kustomize.CustomHealthCheck `json:"healthCheckExprs,omitempty"`
}

// ApplicationDefinitionRelease is the legacy form of a Helm backend, as
// upstream Cozystack writes it.
type ApplicationDefinitionRelease struct {
	HelmReleaseTemplate `json:",inline"`
}

// HelmBackend materialises instances as Flux HelmReleases.
type HelmBackend struct {
	HelmReleaseTemplate `json:",inline"`

	// ValuesFrom is appended to every HelmRelease's valuesFrom, after the
	// tenant's cozystack-values Secret. helm-controller reads them in the
	// HelmRelease's namespace, the tenant's, so they may only name objects
	// the platform writes there: Secrets or ConfigMaps named cozystack-values
	// or cozystack-values-<suffix> (the admission policy
	// cozyplane-values-secret-policy refuses those names to anyone else).
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:XValidation:rule="self.name == 'cozystack-values' || self.name.startsWith('cozystack-values-')",messageExpression="'valuesFrom names ' + self.kind + ' ' + self.name + ', which a tenant can create in its namespace and which, merged after cozystack-values, would override the platform values (_namespace, _cluster). Name only Secrets or ConfigMaps called cozystack-values or cozystack-values-<suffix>, which only the platform writes'"
	ValuesFrom []helmv2.ValuesReference `json:"valuesFrom,omitempty"`
}

// ApprovePlan values of a Terraform backend.
const (
	// ApprovePlanAuto applies every plan without approval.
	ApprovePlanAuto = "auto"
	// ApprovePlanManual waits for a tenant to approve each plan through the
	// instance's approve annotation.
	ApprovePlanManual = ""
)

// TerraformBackend materialises instances as tofu-controller Terraform objects.
type TerraformBackend struct {
	// SourceRef is the Flux source holding the module.
	SourceRef TerraformSourceReference `json:"sourceRef"`

	// Path of the module within the source.
	// +optional
	Path string `json:"path,omitempty"`

	// Prefix is prepended to the instance name to name its Terraform object.
	// +optional
	// +kubebuilder:validation:Pattern=`^[a-z0-9-]*$`
	// +kubebuilder:validation:MaxLength=52
	Prefix string `json:"prefix,omitempty"`

	// Labels are added to every Terraform object of the kind.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	Labels map[string]string `json:"labels,omitempty"`

	// Interval between reconciliations of each Terraform object. Default 10m.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	Interval *metav1.Duration `json:"interval,omitempty"`

	// ApprovePlan is "auto" to apply every plan, or empty to wait for the
	// tenant to approve each pending plan through the instance.
	// +optional
	// +kubebuilder:validation:Enum=auto;""
	ApprovePlan string `json:"approvePlan,omitempty"`

	// DestroyResourcesOnDeletion destroys the module's resources when an
	// instance is deleted; the instance stays (Deleting) until that is done.
	// +optional
	DestroyResourcesOnDeletion bool `json:"destroyResourcesOnDeletion,omitempty"`

	// WriteOutputsToSecret writes the module's outputs to a Secret. Its name
	// may use {{ .name }} for the instance name, e.g. "{{ .name }}-outputs".
	// +optional
	WriteOutputsToSecret *tfv1alpha2.WriteOutputsToSecretSpec `json:"writeOutputsToSecret,omitempty"`

	// RunnerPodTemplate customises the runner pods.
	// +optional
	RunnerPodTemplate *tfv1alpha2.RunnerPodTemplate `json:"runnerPodTemplate,omitempty"`

	// ServiceAccountName the runner pods run as (tofu-controller's default is tf-runner).
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
}

// TerraformSourceReference names the Flux source of a Terraform module.
type TerraformSourceReference struct {
	// Kind of the source.
	// +kubebuilder:validation:Enum=GitRepository;OCIRepository;Bucket
	Kind string `json:"kind"`

	// Name of the source.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Namespace of the source; defaults to the Terraform object's namespace,
	// the platform namespace cozy-tf-<instance namespace>. A tenant-*
	// namespace is refused: the tenant would supply the module.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('tenant-')",messageExpression="'sourceRef.namespace ' + self + ' is a tenant namespace: a tenant could supply the module tofu-controller runs. Name a platform namespace such as cozy-system, or none (the Terraform object namespace, cozy-tf-<namespace>)'"
	Namespace string `json:"namespace,omitempty"`
}

// ApplicationDefinitionResourceSelector is a label selector that may further
// require one of a list of names. Names are Go templates over {{ .name }}
// (the instance name), {{ .kind }} (the lower-cased kind) and
// {{ .namespace }}.
type ApplicationDefinitionResourceSelector struct {
	metav1.LabelSelector `json:",inline"`

	// ResourceNames, when set, requires the resource to have one of these names.
	// +optional
	ResourceNames []string `json:"resourceNames,omitempty"`
}

// ApplicationDefinitionResources includes and excludes resources by selector;
// exclusion wins.
type ApplicationDefinitionResources struct {
	// Exclude hides resources that match any of these selectors.
	// +optional
	Exclude []*ApplicationDefinitionResourceSelector `json:"exclude,omitempty"`

	// Include shows resources that match any of these selectors.
	// +optional
	Include []*ApplicationDefinitionResourceSelector `json:"include,omitempty"`
}

// DashboardTab is a tab a UI may show for the kind.
// +kubebuilder:validation:Enum=workloads;ingresses;services;secrets;yaml
type DashboardTab string

// Dashboard tabs.
const (
	DashboardTabWorkloads DashboardTab = "workloads"
	DashboardTabIngresses DashboardTab = "ingresses"
	DashboardTabServices  DashboardTab = "services"
	DashboardTabSecrets   DashboardTab = "secrets"
	DashboardTabYAML      DashboardTab = "yaml"
)

// ApplicationDefinitionDashboard describes how the kind appears in a UI.
type ApplicationDefinitionDashboard struct {
	// Singular human-readable name, e.g. Bucket.
	Singular string `json:"singular"`
	// Plural human-readable name, e.g. Buckets.
	Plural string `json:"plural"`
	// Name used by the UI, e.g. bucket.
	// +optional
	Name string `json:"name,omitempty"`
	// SingularResource marks a kind with one instance per tenant.
	// +optional
	SingularResource bool `json:"singularResource,omitempty"`
	// Weight orders kinds in the UI, lower first.
	// +optional
	Weight int `json:"weight,omitempty"`
	// Description shown in catalogues.
	// +optional
	Description string `json:"description,omitempty"`
	// Icon as inline SVG, base64 or a data URI.
	// +optional
	Icon string `json:"icon,omitempty"`
	// Category groups kinds in the UI.
	Category string `json:"category"`
	// Tags for search and filtering.
	// +optional
	Tags []string `json:"tags,omitempty"`
	// Tabs the UI shows.
	// +optional
	Tabs []DashboardTab `json:"tabs,omitempty"`
	// KeysOrder orders keys in the YAML view.
	// +optional
	KeysOrder [][]string `json:"keysOrder,omitempty"`
	// Module marks a tenant module.
	// +optional
	Module bool `json:"module,omitempty"`
}

// ApplicationDefinitionStatus is the observed state of an ApplicationDefinition.
type ApplicationDefinitionStatus struct {
	// ObservedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready summarises whether the kind is served; see
	// conditions.go for every type and reason.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Backend is the resolved backend type (Helm for legacy definitions).
	// +optional
	Backend BackendType `json:"backend,omitempty"`

	// CRDName is the CustomResourceDefinition that serves the kind.
	// +optional
	CRDName string `json:"crdName,omitempty"`

	// Instances counts the instances of the kind, reported while the
	// definition is being deleted and instances still hold it.
	// +optional
	Instances *int32 `json:"instances,omitempty"`
}

// GetConditions returns the status conditions.
func (d *ApplicationDefinition) GetConditions() []metav1.Condition { return d.Status.Conditions }

// SetConditions replaces the status conditions.
func (d *ApplicationDefinition) SetConditions(c []metav1.Condition) { d.Status.Conditions = c }
