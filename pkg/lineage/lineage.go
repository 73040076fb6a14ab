// Package lineage computes the labels that tie an object rendered for an
// application instance back to that instance, and whether its tenant may see
// it. The labels and the verdict are those upstream Cozystack's lineage
// webhook gives, so the dashboard, the core.cozystack.io tenantsecrets
// resource and the other consumers that select on them see the same objects
// whichever of the two wrote them.
package lineage

import (
	"bytes"
	"strings"
	"text/template"

	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Label keys written on an instance's objects.
const (
	LabelManaged        = "internal.cozystack.io/managed-by-cozystack"
	LabelGroup          = "apps.cozystack.io/application.group"
	LabelKind           = "apps.cozystack.io/application.kind"
	LabelName           = "apps.cozystack.io/application.name"
	LabelTenantResource = "internal.cozystack.io/tenantresource"
)

// Keys lists every label this package decides, in a fixed order.
var Keys = []string{LabelManaged, LabelGroup, LabelKind, LabelName, LabelTenantResource}

// Instance names the application instance an object belongs to.
type Instance struct {
	Group     string // API group of the instance's kind, e.g. apps.cozystack.io
	Kind      string // e.g. Postgres
	Name      string // the instance's name
	Namespace string // the object's (and the instance's) namespace
}

// Object is what the verdict looks at: the object's kind, name and labels.
type Object struct {
	GroupKind schema.GroupKind
	Name      string
	Labels    map[string]string
}

// Labels returns the labels an object rendered for inst must carry: the three
// application labels, managed-by-cozystack "true", and tenantresource "true"
// or "false" by the definition's selectors for the object's kind (Secrets:
// spec.secrets, Services: spec.services, Ingresses: spec.ingresses; every
// other kind "false"). def may be nil (no definition known): the verdict is
// then "false". Pure; a Terraform outputs Secret or any other object an
// instance owns is labelled the same way by calling this.
func Labels(def *cozyv1alpha1.ApplicationDefinitionSpec, inst Instance, obj Object) map[string]string {
	out := map[string]string{
		LabelManaged: "true",
		LabelGroup:   truncateGroup(inst.Group),
		LabelKind:    inst.Kind,
		LabelName:    inst.Name,
	}
	verdict := "false"
	if TenantResource(def, inst, obj) {
		verdict = "true"
	}
	out[LabelTenantResource] = verdict
	return out
}

// TenantResource reports whether obj is shown to the tenant: it matches no
// exclude selector and at least one include selector of the definition's
// resources for its kind. A selector matches when its label selector matches
// the object's labels and, if resourceNames is set (even empty), one of the
// names, rendered as a Go template over .name (instance name), .kind (kind,
// lower-cased) and .namespace, equals the object's name. A selector or name
// template that does not parse or render matches nothing.
func TenantResource(def *cozyv1alpha1.ApplicationDefinitionSpec, inst Instance, obj Object) bool {
	res := selectors(def, obj.GroupKind)
	if res == nil {
		return false
	}
	ctx := map[string]string{
		"kind":      strings.ToLower(inst.Kind),
		"name":      inst.Name,
		"namespace": inst.Namespace,
	}
	if matchAny(res.Exclude, obj, ctx) {
		return false
	}
	return matchAny(res.Include, obj, ctx)
}

func selectors(def *cozyv1alpha1.ApplicationDefinitionSpec, gk schema.GroupKind) *cozyv1alpha1.ApplicationDefinitionResources {
	if def == nil {
		return nil
	}
	switch {
	case gk.Group == "" && gk.Kind == "Secret":
		return &def.Secrets
	case gk.Group == "" && gk.Kind == "Service":
		return &def.Services
	case gk.Group == "networking.k8s.io" && gk.Kind == "Ingress":
		return &def.Ingresses
	}
	return nil
}

func matchAny(ss []*cozyv1alpha1.ApplicationDefinitionResourceSelector, obj Object, ctx map[string]string) bool {
	for _, s := range ss {
		if s != nil && match(s, obj, ctx) {
			return true
		}
	}
	return false
}

func match(s *cozyv1alpha1.ApplicationDefinitionResourceSelector, obj Object, ctx map[string]string) bool {
	sel, err := metav1.LabelSelectorAsSelector(&s.LabelSelector)
	if err != nil {
		return false
	}
	if !sel.Matches(labels.Set(obj.Labels)) {
		return false
	}
	if s.ResourceNames == nil {
		return true
	}
	for _, t := range s.ResourceNames {
		tmpl, err := template.New("resourceName").Parse(t)
		if err != nil {
			continue
		}
		var buf bytes.Buffer
		if err := tmpl.Execute(&buf, ctx); err != nil {
			continue
		}
		if buf.String() == obj.Name {
			return true
		}
	}
	return false
}

// truncateGroup keeps a group shorter than 63 characters; a longer one is cut
// to 63 and then shortened step by step exactly as upstream's webhook does
// (its loop tests one character and then drops the last one, so a cut that
// ends on a non-alphanumeric character loses one character more than that
// run), so both write the same value.
func truncateGroup(s string) string {
	if len(s) < 63 {
		return s
	}
	s = s[:63]
	for b := s[62]; !alnum(b) && len(s) > 0; s = s[:len(s)-1] {
		b = s[len(s)-1]
	}
	return s
}

func alnum(b byte) bool {
	return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9')
}
