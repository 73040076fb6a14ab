package schema

import (
	"context"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/api/encoding"
)

// Labels on every generated object (CRD, admission policy and binding).
const (
	// LabelDefinition names the ApplicationDefinition the object serves.
	LabelDefinition = "cozystack.io/application-definition"
	// LabelBackend is the definition's resolved backend type: Helm or Terraform.
	LabelBackend = "cozystack.io/backend"
)

// Rules on instances.
const (
	// ReservedKeyPrefix starts the top-level spec keys no kind may use.
	ReservedKeyPrefix = appsv1alpha1.ReservedKeyPrefix
	// HCLIdentifierPattern is what a Terraform kind's top-level spec keys must
	// match: each becomes a Terraform variable (decided by api/encoding).
	HCLIdentifierPattern = encoding.HCLIdentifierPattern
	// DNS1035Pattern is what every instance name must match (at most 63
	// characters): names become Service and Helm release names.
	DNS1035Pattern = `^[a-z]([-a-z0-9]*[a-z0-9])?$`
	// DNS1035MaxLength is the longest DNS-1035 label.
	DNS1035MaxLength = 63
	// HelmReleaseNameMaxLength bounds <prefix><name> for Helm kinds.
	HelmReleaseNameMaxLength = 53
	// TenantKind is the kind whose names follow TenantNamePattern.
	TenantKind = "Tenant"
	// TenantNamePattern is what Tenant names must match, as upstream
	// Cozystack requires (tenant namespaces are built by joining names with
	// dashes, so a name must not contain one).
	TenantNamePattern = `^[a-z][a-z0-9]*$`
)

// Objects are what serves one definition's kind.
type Objects struct {
	// CRD serves the kind.
	CRD *apiextensionsv1.CustomResourceDefinition
	// Policy and Binding check the top-level keys of a spec that preserves
	// unknown fields, which CRD validation rules cannot see. Both are nil
	// when the CRD's own rules suffice.
	Policy  *admissionregistrationv1.ValidatingAdmissionPolicy
	Binding *admissionregistrationv1.ValidatingAdmissionPolicyBinding
}

// CRDName is the name of the CRD serving a kind with this plural.
func CRDName(plural string) string { return plural + "." + appsv1alpha1.GroupVersion.Group }

// PolicyName names the admission policy and binding of a kind with this
// plural: the CRD's name, so each is easy to find from the other.
func PolicyName(plural string) string { return CRDName(plural) }

// BuildCRD returns the CRD that serves def's kind; see Build.
func BuildCRD(def *cozyv1alpha1.ApplicationDefinition) (*apiextensionsv1.CustomResourceDefinition, error) {
	o, err := Build(def)
	if err != nil {
		return nil, err
	}
	return o.CRD, nil
}

// Build returns the objects that serve def's kind. The CRD is validated as
// the API server validates a new CRD (structural schema, defaults, CEL
// compilation and cost, names), so a definition it would refuse is reported
// as an *Error (ReasonInvalidSchema) here. Owner references are the caller's
// business: Build is pure.
func Build(def *cozyv1alpha1.ApplicationDefinition) (*Objects, error) {
	backend, err := def.ResolvedBackend()
	if err != nil {
		return nil, &Error{Reason: reasonInvalidSchema, Field: "spec.backend", Message: err.Error()}
	}
	app := def.Spec.Application
	spec, err := ParseOpenAPISchema(app.OpenAPISchema)
	if err != nil {
		return nil, err
	}
	if err := checkTopLevelKeys(spec, backend.Type); err != nil {
		return nil, err
	}

	rules := keyRules(backend.Type)
	var needPolicy bool
	switch {
	case spec.XPreserveUnknownFields != nil && *spec.XPreserveUnknownFields:
		needPolicy = true
	case spec.AdditionalProperties != nil && spec.AdditionalProperties.Schema != nil:
		if celSeesMap(spec) {
			for _, r := range rules {
				spec.XValidations = append(spec.XValidations, apiextensionsv1.ValidationRule{
					Rule:    r.crdRule,
					Message: r.message,
					Reason:  ptr.To(apiextensionsv1.FieldValueInvalid),
				})
			}
		} else {
			needPolicy = true
		}
	}

	labels := map[string]string{
		LabelDefinition: def.Name,
		LabelBackend:    string(backend.Type),
	}
	crd := &apiextensionsv1.CustomResourceDefinition{
		TypeMeta: metav1.TypeMeta{
			APIVersion: apiextensionsv1.SchemeGroupVersion.String(),
			Kind:       "CustomResourceDefinition",
		},
		ObjectMeta: metav1.ObjectMeta{
			Name:   CRDName(app.Plural),
			Labels: labels,
		},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: appsv1alpha1.GroupVersion.Group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Kind:       app.Kind,
				ListKind:   app.Kind + "List",
				Plural:     app.Plural,
				Singular:   app.Singular,
				Categories: []string{appsv1alpha1.Category},
			},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name:    appsv1alpha1.GroupVersion.Version,
				Served:  true,
				Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{
					OpenAPIV3Schema: rootSchema(def, backend, spec),
				},
				Subresources:             &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				AdditionalPrinterColumns: printerColumns(backend.Type),
			}},
		},
	}
	if err := validateCRD(crd); err != nil {
		return nil, err
	}
	out := &Objects{CRD: crd}
	if needPolicy {
		out.Policy, out.Binding = admissionPolicy(app.Plural, labels, rules)
	}
	return out, nil
}

// rootSchema is the instance schema: apiVersion, kind, metadata, the spec
// from the definition and the common status, with the name rules.
func rootSchema(def *cozyv1alpha1.ApplicationDefinition, backend cozyv1alpha1.ApplicationBackend, spec *apiextensionsv1.JSONSchemaProps) *apiextensionsv1.JSONSchemaProps {
	app := def.Spec.Application
	if spec.Description == "" {
		spec.Description = fmt.Sprintf("Spec is the desired state of the %s: the parameters of its %s.", app.Kind, backingKind(backend.Type))
	}
	return &apiextensionsv1.JSONSchemaProps{
		Type: "object",
		Description: fmt.Sprintf("%s is a user-facing kind declared by the ApplicationDefinition %s; "+
			"each %s becomes a %s in its namespace.", app.Kind, def.Name, app.Kind, backingKind(backend.Type)),
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"apiVersion": {Type: "string", Description: "APIVersion defines the versioned schema of this representation of an object."},
			"kind":       {Type: "string", Description: "Kind is a string value representing the REST resource this object represents."},
			// Declaring name (and nothing else, as the API server requires)
			// lets the name rules point at metadata.name.
			"metadata": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"name": {Type: "string"}}},
			"spec":     *spec,
			"status":   statusSchema(),
		},
		XValidations: nameRules(app.Kind, backend),
	}
}

func backingKind(t cozyv1alpha1.BackendType) string {
	if t == cozyv1alpha1.BackendTerraform {
		return "tofu-controller Terraform object"
	}
	return "Flux HelmRelease"
}

// nameRules constrain metadata.name. Names are immutable, so the rules are
// checked on create only (oldSelf is absent): an instance created before a
// definition lengthened its prefix must stay updatable, if only to remove a
// finalizer.
func nameRules(kind string, backend cozyv1alpha1.ApplicationBackend) apiextensionsv1.ValidationRules {
	onCreate := func(rule string) string { return "oldSelf.hasValue() || (" + rule + ")" }
	rules := apiextensionsv1.ValidationRules{{
		Rule: onCreate(fmt.Sprintf("size(self.metadata.name) <= %d && self.metadata.name.matches('%s')", DNS1035MaxLength, DNS1035Pattern)),
		Message: fmt.Sprintf("metadata.name must be a DNS-1035 label: at most %d lower-case letters, digits and '-', "+
			"starting with a letter and ending with a letter or digit (%s)", DNS1035MaxLength, DNS1035Pattern),
		OptionalOldSelf: ptr.To(true),
		Reason:          ptr.To(apiextensionsv1.FieldValueInvalid),
		FieldPath:       ".metadata.name",
	}}
	if backend.Type == cozyv1alpha1.BackendHelm {
		prefix := backend.Prefix()
		limit := HelmReleaseNameMaxLength - len(prefix)
		msg := fmt.Sprintf("metadata.name must be at most %d characters: the HelmRelease is named after it, "+
			"and Helm release names are limited to %d characters", limit, HelmReleaseNameMaxLength)
		if prefix != "" {
			msg = fmt.Sprintf("metadata.name must be at most %d characters: the HelmRelease is named %q + metadata.name, "+
				"and Helm release names are limited to %d characters (len(prefix) + len(name) <= %d)",
				limit, prefix, HelmReleaseNameMaxLength, HelmReleaseNameMaxLength)
		}
		rules = append(rules, apiextensionsv1.ValidationRule{
			Rule:            onCreate(fmt.Sprintf("size(self.metadata.name) + %d <= %d", len(prefix), HelmReleaseNameMaxLength)),
			Message:         msg,
			OptionalOldSelf: ptr.To(true),
			Reason:          ptr.To(apiextensionsv1.FieldValueInvalid),
			FieldPath:       ".metadata.name",
		})
	}
	if kind == TenantKind {
		rules = append(rules, apiextensionsv1.ValidationRule{
			Rule: onCreate(fmt.Sprintf("self.metadata.name.matches('%s')", TenantNamePattern)),
			Message: fmt.Sprintf("Tenant names must match %s: lower-case letters and digits only, starting with a letter, "+
				"no '-' (tenant namespaces join names with '-')", TenantNamePattern),
			OptionalOldSelf: ptr.To(true),
			Reason:          ptr.To(apiextensionsv1.FieldValueInvalid),
			FieldPath:       ".metadata.name",
		})
	}
	return rules
}

func printerColumns(t cozyv1alpha1.BackendType) []apiextensionsv1.CustomResourceColumnDefinition {
	cols := []apiextensionsv1.CustomResourceColumnDefinition{
		{Name: "Ready", Type: "string", JSONPath: `.status.conditions[?(@.type=="Ready")].status`, Description: "Whether the backing object is ready."},
		{Name: "Reason", Type: "string", JSONPath: `.status.conditions[?(@.type=="Ready")].reason`, Priority: 1, Description: "Why the instance is (not) ready."},
		{Name: "Version", Type: "string", JSONPath: ".status.displayVersion", Description: "Chart version (Helm) or source revision (Terraform) last attempted, " +
			"as upstream Cozystack's table prints it: the part after the last '+'; the whole of it is status.version."},
	}
	if t == cozyv1alpha1.BackendTerraform {
		cols = append(cols, apiextensionsv1.CustomResourceColumnDefinition{
			Name: "Pending Plan", Type: "string", JSONPath: ".status.backend.pendingPlan",
			Description: "The plan waiting for approval; approve it with the " + appsv1alpha1.AnnotationApprovePlan + " annotation.",
		})
	}
	cols = append(cols,
		apiextensionsv1.CustomResourceColumnDefinition{
			Name: "Suspended", Type: "string", JSONPath: `.status.conditions[?(@.type=="` + appsv1alpha1.ConditionSuspended + `")].status`,
			Description: "True while the " + appsv1alpha1.AnnotationSuspend + "=true annotation suspends the instance; empty otherwise.",
		},
		apiextensionsv1.CustomResourceColumnDefinition{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
		apiextensionsv1.CustomResourceColumnDefinition{Name: "Message", Type: "string", JSONPath: `.status.conditions[?(@.type=="Ready")].message`, Priority: 1, Description: "What the instance's Ready condition says."},
	)
	return cols
}

// statusSchema describes appsv1alpha1.ApplicationStatus (a test keeps the
// two in step).
func statusSchema() apiextensionsv1.JSONSchemaProps {
	str := func(d string) apiextensionsv1.JSONSchemaProps {
		return apiextensionsv1.JSONSchemaProps{Type: "string", Description: d}
	}
	return apiextensionsv1.JSONSchemaProps{
		Type:        "object",
		Description: "Status is the observed state of the instance, common to every backend.",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"observedGeneration": {Type: "integer", Format: "int64", Description: "ObservedGeneration is the instance generation the status describes."},
			"conditions": {
				Type:         "array",
				Description:  "Conditions: Ready mirrors the backing object's Ready; Reconciling and Stalled follow kstatus; Suspended is True while the instance is suspended.",
				XListType:    ptr.To("map"),
				XListMapKeys: []string{"type"},
				Items:        &apiextensionsv1.JSONSchemaPropsOrArray{Schema: conditionSchema()},
			},
			"version": str("Version is the chart version (Helm) or source revision (Terraform) the backend last attempted."),
			"displayVersion": str("DisplayVersion is what the VERSION column shows, as upstream Cozystack's table prints version: " +
				"the part after its last '+', the whole version when it has none, <unknown> before there is one."),
			"namespace": str("Namespace is, on a Tenant, the namespace the tenant owns (tenant-root for the root tenant, tenant-<name> below it, <namespace>-<name> further down), as upstream Cozystack computes it."),
			"backend": {
				Type:        "object",
				Description: "Backend holds the details a backend projects from its backing object.",
				Properties: map[string]apiextensionsv1.JSONSchemaProps{
					"type":                str("Type is the backend: Helm or Terraform."),
					"kind":                str("Kind of the backing object."),
					"apiVersion":          str("APIVersion of the backing object."),
					"name":                str("Name of the backing object."),
					"lastAppliedRevision": str("LastAppliedRevision is the source revision last applied (Terraform)."),
					"lastPlannedRevision": str("LastPlannedRevision is the source revision last planned (Terraform)."),
					"pendingApproval":     {Type: "boolean", Description: "PendingApproval is true while a plan waits for the tenant's approval."},
					"pendingPlan":         str("PendingPlan is the id of the plan that waits for approval; approve it with the " + appsv1alpha1.AnnotationApprovePlan + " annotation."),
					"outputs": {
						Type:        "array",
						Description: "Outputs lists the module outputs available (Terraform).",
						Items:       &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "string"}},
					},
				},
			},
			"lastHandledReconcileAt": str("LastHandledReconcileAt mirrors the backing object's status.lastHandledReconcileAt: the last " +
				appsv1alpha1.AnnotationReconcileRequestedAt + " value its controller handled."),
		},
	}
}

// conditionSchema is metav1.Condition's schema, as controller-gen writes it.
func conditionSchema() *apiextensionsv1.JSONSchemaProps {
	return &apiextensionsv1.JSONSchemaProps{
		Type:        "object",
		Description: "Condition contains details for one aspect of the current state of this API Resource.",
		Required:    []string{"lastTransitionTime", "message", "reason", "status", "type"},
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"lastTransitionTime": {Type: "string", Format: "date-time", Description: "lastTransitionTime is the last time the condition transitioned from one status to another."},
			"message":            {Type: "string", MaxLength: ptr.To[int64](32768), Description: "message is a human readable message indicating details about the transition."},
			"observedGeneration": {Type: "integer", Format: "int64", Minimum: ptr.To[float64](0), Description: "observedGeneration represents the .metadata.generation that the condition was set based upon."},
			"reason": {Type: "string", MinLength: ptr.To[int64](1), MaxLength: ptr.To[int64](1024),
				Pattern:     `^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`,
				Description: "reason contains a programmatic identifier indicating the reason for the condition's last transition."},
			"status": {Type: "string", Enum: []apiextensionsv1.JSON{{Raw: []byte(`"True"`)}, {Raw: []byte(`"False"`)}, {Raw: []byte(`"Unknown"`)}},
				Description: "status of the condition, one of True, False, Unknown."},
			"type": {Type: "string", MaxLength: ptr.To[int64](316),
				Pattern:     `^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$`,
				Description: "type of condition in CamelCase or in foo.example.com/CamelCase."},
		},
	}
}

// validateCRD runs the API server's validation of a new CRD.
func validateCRD(crd *apiextensionsv1.CustomResourceDefinition) error {
	c := crd.DeepCopy()
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(c)
	internal := &apiextensions.CustomResourceDefinition{}
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(c, internal, nil); err != nil {
		return newError(reasonInvalidSchema, "", "cannot convert the generated CRD: %v", err)
	}
	// As the API server's create strategy does before validating.
	internal.Generation = 1
	internal.Status = apiextensions.CustomResourceDefinitionStatus{StoredVersions: []string{appsv1alpha1.GroupVersion.Version}}
	errs := validation.ValidateCustomResourceDefinition(context.Background(), internal)
	if len(errs) == 0 {
		return nil
	}
	return fromFieldErrors(reasonInvalidSchema, "the API server would refuse the CRD for this definition", errs)
}
