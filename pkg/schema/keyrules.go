package schema

// Top-level keys: which keys of a definition's spec each backend can use,
// refused when the definition is read where the schema names them and
// checked by an admission policy where the spec preserves unknown fields.

import (
	"fmt"
	"sort"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/api/encoding"
)

// checkTopLevelKeys refuses, when the definition is read, top-level keys the
// schema names (properties or required) that no instance could use.
func checkTopLevelKeys(spec *apiextensionsv1.JSONSchemaProps, backend cozyv1alpha1.BackendType) error {
	names := map[string]bool{}
	for k := range spec.Properties {
		names[k] = true
	}
	for _, k := range spec.Required {
		names[k] = true
	}
	var reserved, invalid []string
	for k := range names {
		if strings.HasPrefix(k, ReservedKeyPrefix) {
			reserved = append(reserved, k)
		}
		if backend == cozyv1alpha1.BackendTerraform && !encoding.IsHCLIdentifier(k) {
			invalid = append(invalid, k)
		}
	}
	sort.Strings(reserved)
	sort.Strings(invalid)
	if len(reserved) > 0 {
		return &Error{
			Reason: reasonReservedField,
			Field:  fmt.Sprintf("%s.properties[%s]", schemaRoot, reserved[0]),
			Message: fmt.Sprintf("openAPISchema names top-level keys starting with %q, which are reserved: %s",
				ReservedKeyPrefix, quoteList(reserved)),
		}
	}
	if len(invalid) > 0 {
		return &Error{
			Reason: reasonInvalidVariableName,
			Field:  fmt.Sprintf("%s.properties[%s]", schemaRoot, invalid[0]),
			Message: fmt.Sprintf("openAPISchema names top-level keys that are not valid Terraform variable names (%s): %s",
				HCLIdentifierPattern, quoteList(invalid)),
		}
	}
	return nil
}

func quoteList(keys []string) string {
	q := make([]string, len(keys))
	for i, k := range keys {
		q[i] = fmt.Sprintf("%q", k)
	}
	return strings.Join(q, ", ")
}

// keyRule checks the top-level keys of a free-form spec, as a CRD rule (on
// spec, self is the map) or an admission policy expression (object is the
// instance).
type keyRule struct {
	name              string
	crdRule           string
	policyExpression  string
	message           string
	messageExpression string
}

func keyRules(backend cozyv1alpha1.BackendType) []keyRule {
	rules := []keyRule{{
		name:    "reserved-keys",
		crdRule: "self.all(k, !k.startsWith('_'))",
		policyExpression: "!has(object.spec) || type(object.spec) != map || " +
			"object.spec.all(k, !k.startsWith('_'))",
		message: "top-level spec keys starting with \"_\" are reserved (rule: no key may start with \"_\")",
		messageExpression: "'top-level spec keys starting with \"_\" are reserved (rule: no key may start with \"_\"): ' + " +
			"object.spec.filter(k, k.startsWith('_')).join(', ')",
	}}
	if backend == cozyv1alpha1.BackendTerraform {
		rules = append(rules, keyRule{
			name:    "terraform-variable-names",
			crdRule: "self.all(k, k.matches('" + HCLIdentifierPattern + "'))",
			policyExpression: "!has(object.spec) || type(object.spec) != map || " +
				"object.spec.all(k, k.matches('" + HCLIdentifierPattern + "'))",
			message: "top-level spec keys of a Terraform kind become Terraform variables and must match " + HCLIdentifierPattern,
			messageExpression: "'top-level spec keys of a Terraform kind become Terraform variables and must match " +
				HCLIdentifierPattern + ": ' + object.spec.filter(k, !k.matches('" + HCLIdentifierPattern + "')).join(', ')",
		})
	}
	return rules
}

// celSeesMap reports whether CRD validation rules on spec can iterate its
// keys: spec is a map whose values CEL can represent. It asks the API
// server's own CEL type mapping, so the answer is exact.
func celSeesMap(spec *apiextensionsv1.JSONSchemaProps) bool {
	internal := &apiextensions.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(spec, internal, nil); err != nil {
		return false
	}
	ss, err := structuralschema.NewStructural(internal)
	if err != nil {
		return false
	}
	dt := model.SchemaDeclType(ss, false)
	return dt != nil && dt.IsMap()
}

// InstancePolicy is a ValidatingAdmissionPolicy named name that checks the
// instances of the apps.cozystack.io resources given ("*": all of them) on
// create and update, failing closed.
func InstancePolicy(name string, resources []string, match []admissionregistrationv1.MatchCondition,
	validations []admissionregistrationv1.Validation) *admissionregistrationv1.ValidatingAdmissionPolicy {
	return &admissionregistrationv1.ValidatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: admissionregistrationv1.SchemeGroupVersion.String(), Kind: "ValidatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
						Rule: admissionregistrationv1.Rule{
							APIGroups:   []string{appsv1alpha1.GroupVersion.Group},
							APIVersions: []string{appsv1alpha1.GroupVersion.Version},
							Resources:   resources,
							Scope:       ptr.To(admissionregistrationv1.NamespacedScope),
						},
					},
				}},
			},
			MatchConditions: match,
			Validations:     validations,
		},
	}
}

// admissionPolicy checks the top-level keys of a spec that preserves unknown
// fields. On update it only runs when the spec changed, so an instance stored
// before the policy existed can still get its finalizers removed.
func admissionPolicy(plural string, labels map[string]string, rules []keyRule) (*admissionregistrationv1.ValidatingAdmissionPolicy, *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	name := PolicyName(plural)
	validations := make([]admissionregistrationv1.Validation, 0, len(rules))
	for _, r := range rules {
		reason := metav1.StatusReasonInvalid
		validations = append(validations, admissionregistrationv1.Validation{
			Expression:        r.policyExpression,
			Message:           r.message,
			MessageExpression: r.messageExpression,
			Reason:            &reason,
		})
	}
	policy := InstancePolicy(name, []string{plural}, []admissionregistrationv1.MatchCondition{{
		Name:       "spec-changed",
		Expression: "oldObject == null || !has(object.spec) || !has(oldObject.spec) || object.spec != oldObject.spec",
	}}, validations)
	policy.Labels = copyLabels(labels)
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		TypeMeta: metav1.TypeMeta{APIVersion: admissionregistrationv1.SchemeGroupVersion.String(), Kind: "ValidatingAdmissionPolicyBinding"},
		ObjectMeta: metav1.ObjectMeta{
			Name:   name,
			Labels: copyLabels(labels),
		},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		},
	}
	return policy, binding
}

func copyLabels(in map[string]string) map[string]string {
	out := make(map[string]string, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}
