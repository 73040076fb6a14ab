package v1alpha1

import (
	"errors"
	"fmt"
	"strings"
)

// Where a definition may take its chart and its values from. helm-controller
// installs a HelmRelease's chart, with its values, as the platform; it reads
// valuesFrom in the HelmRelease's namespace (the tenant's) and a chartRef
// without a namespace there too. So every source a definition names must be
// out of the tenant's reach:
//
//   - valuesFrom names only Secrets and ConfigMaps of the reserved name family
//     (ValuesObjectName, or ValuesObjectNamePrefix and a suffix), which the
//     admission policy cozyplane-values-secret-policy
//     (policies/cozystack-values-secret.yaml) lets only the platform write, in
//     every namespace. Any other name is one a tenant with edit creates in its
//     own namespace, and values merged after cozystack-values override the
//     platform's _namespace and _cluster keys.
//   - a Helm chartRef names its namespace, and not a tenant namespace
//     (TenantNamespacePrefix).
//   - a Terraform sourceRef does not name a tenant namespace; without a
//     namespace it resolves in the Terraform object's, the platform namespace
//     cozy-tf-<namespace>, where tenants hold no role.
//
// The CRD refuses new and changed definitions that break these rules (CEL on
// the fields); SourceProblems finds them in definitions stored before, which
// the appdef controller reports (ReasonSourceNotPlatformOwned) and for which
// the backends write nothing.

// Names of the platform's values objects.
const (
	// ValuesObjectName is the Secret every HelmRelease reads first, written by
	// the tenant chart in each tenant namespace.
	ValuesObjectName = "cozystack-values"
	// ValuesObjectNamePrefix starts the names of further values objects the
	// platform provides (Secrets or ConfigMaps cozystack-values-<suffix>).
	ValuesObjectNamePrefix = ValuesObjectName + "-"
	// TenantNamespacePrefix starts the name of every tenant namespace.
	TenantNamespacePrefix = "tenant-"
)

// IsPlatformValuesName reports whether a Secret or ConfigMap of this name is
// written only by the platform: cozystack-values or cozystack-values-<suffix>.
func IsPlatformValuesName(name string) bool {
	return name == ValuesObjectName || strings.HasPrefix(name, ValuesObjectNamePrefix)
}

// IsTenantNamespace reports whether ns is a tenant namespace (tenant-*).
func IsTenantNamespace(ns string) bool {
	return strings.HasPrefix(ns, TenantNamespacePrefix)
}

// SourceFix says what to do about a source a tenant could write.
const SourceFix = "name values objects cozystack-values or cozystack-values-<suffix> (Secrets or ConfigMaps only the platform writes), " +
	"and charts and modules in a platform namespace such as cozy-system"

// SourceProblems lists, field by field, every chart, module or values source
// of the definition that a tenant could write; nil when there is none. Pure.
func (d *ApplicationDefinition) SourceProblems() []string {
	var out []string
	chart := func(field string, t *HelmReleaseTemplate) {
		if t == nil || t.ChartRef == nil {
			return
		}
		ref := t.ChartRef
		switch {
		case ref.Namespace == "":
			out = append(out, fmt.Sprintf("%s.chartRef (%s %s) names no namespace, so it resolves in each HelmRelease's namespace, the tenant's", field, ref.Kind, ref.Name))
		case IsTenantNamespace(ref.Namespace):
			out = append(out, fmt.Sprintf("%s.chartRef (%s %s/%s) is in a tenant namespace", field, ref.Kind, ref.Namespace, ref.Name))
		}
	}
	if d.Spec.Backend == nil {
		// With spec.backend set, spec.release may only repeat it.
		chart("spec.release", releaseTemplate(d.Spec.LegacyRelease()))
	}
	if b := d.Spec.Backend; b != nil {
		if h := b.Helm; h != nil {
			chart("spec.backend.helm", &h.HelmReleaseTemplate)
			for i, v := range h.ValuesFrom {
				if !IsPlatformValuesName(v.Name) {
					out = append(out, fmt.Sprintf("spec.backend.helm.valuesFrom[%d] (%s %s) is not a platform values object (a tenant can create one of that name in its namespace)", i, v.Kind, v.Name))
				}
			}
		}
		if tf := b.Terraform; tf != nil && IsTenantNamespace(tf.SourceRef.Namespace) {
			out = append(out, fmt.Sprintf("spec.backend.terraform.sourceRef (%s %s/%s) is in a tenant namespace", tf.SourceRef.Kind, tf.SourceRef.Namespace, tf.SourceRef.Name))
		}
	}
	return out
}

// CheckSources returns an error naming every source SourceProblems finds and
// what to do instead; nil when every source is the platform's. Pure.
func (d *ApplicationDefinition) CheckSources() error {
	p := d.SourceProblems()
	if len(p) == 0 {
		return nil
	}
	return errors.New(strings.Join(p, "; ") + ". A tenant could supply what helm-controller or tofu-controller installs as the platform: " + SourceFix)
}

func releaseTemplate(r *ApplicationDefinitionRelease) *HelmReleaseTemplate {
	if r == nil {
		return nil
	}
	return &r.HelmReleaseTemplate
}
