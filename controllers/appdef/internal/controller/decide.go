package controller

import (
	"fmt"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
)

// This file holds the decisions of the reconciler as pure functions of what
// it gathered, so they can be table-tested without an API server.

// servedNames are the names a definition claims in apps.cozystack.io. Kinds
// and list kinds share one namespace, plurals and singulars another (as the
// API server's naming controller sees them).
type servedNames struct {
	kinds     []string // kind, kind + "List"
	resources []string // plural, singular
}

func namesOf(d *cozyv1alpha1.ApplicationDefinition) servedNames {
	app := d.Spec.Application
	n := servedNames{kinds: []string{app.Kind, app.Kind + "List"}, resources: []string{app.Plural}}
	if app.Singular != "" && app.Singular != app.Plural {
		n.resources = append(n.resources, app.Singular)
	}
	return n
}

// shared returns the first name a and b both claim, or "".
func (a servedNames) shared(b servedNames) string {
	for _, x := range a.kinds {
		for _, y := range b.kinds {
			if x == y && x != "List" {
				return "kind " + x
			}
		}
	}
	for _, x := range a.resources {
		for _, y := range b.resources {
			if x == y && x != "" {
				return "resource name " + x
			}
		}
	}
	return ""
}

// older reports whether a was created before b (the older definition keeps
// a contested name); the name breaks ties so the answer is stable.
func older(a, b *cozyv1alpha1.ApplicationDefinition) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	return a.Name < b.Name
}

// findClash returns the oldest other definition that claims one of def's
// names and is older than def, and the name they share. Nil when def may
// serve its names.
func findClash(def *cozyv1alpha1.ApplicationDefinition, all []cozyv1alpha1.ApplicationDefinition) (*cozyv1alpha1.ApplicationDefinition, string) {
	mine := namesOf(def)
	var winner *cozyv1alpha1.ApplicationDefinition
	var name string
	for i := range all {
		other := &all[i]
		if other.Name == def.Name || !older(other, def) {
			continue
		}
		if n := mine.shared(namesOf(other)); n != "" && (winner == nil || older(other, winner)) {
			winner, name = other, n
		}
	}
	return winner, name
}

// clashesWith lists the definitions that share a name with d (either may be
// the younger): when d changes, their verdict may change too.
func clashesWith(d *cozyv1alpha1.ApplicationDefinition, all []cozyv1alpha1.ApplicationDefinition) []string {
	mine := namesOf(d)
	var out []string
	for i := range all {
		if all[i].Name != d.Name && mine.shared(namesOf(&all[i])) != "" {
			out = append(out, all[i].Name)
		}
	}
	sort.Strings(out)
	return out
}

// crdState is what the API server says about a CRD we wrote.
type crdState int

const (
	crdEstablished crdState = iota
	crdWaiting
	crdNamesRejected
)

// crdVerdict reads the CRD's Established and NamesAccepted conditions.
func crdVerdict(crd *apiextensionsv1.CustomResourceDefinition) (crdState, string) {
	var established, names *apiextensionsv1.CustomResourceDefinitionCondition
	for i := range crd.Status.Conditions {
		c := &crd.Status.Conditions[i]
		switch c.Type {
		case apiextensionsv1.Established:
			established = c
		case apiextensionsv1.NamesAccepted:
			names = c
		}
	}
	if names != nil && names.Status == apiextensionsv1.ConditionFalse {
		return crdNamesRejected, fmt.Sprintf("the API server did not accept the names of CRD %s: %s", crd.Name, names.Message)
	}
	if established != nil && established.Status == apiextensionsv1.ConditionTrue {
		return crdEstablished, ""
	}
	msg := fmt.Sprintf("waiting for the API server to establish CRD %s", crd.Name)
	if established != nil && established.Message != "" {
		msg += ": " + established.Message
	}
	return crdWaiting, msg
}

// renamed returns a message when def no longer matches the CRD it serves:
// the plural changed (owned holds a CRD of another name) or the kind
// changed (the CRD of the same name serves another kind). A kind is never
// renamed in place, and a second CRD is never created for it.
func renamed(def *cozyv1alpha1.ApplicationDefinition, desiredName string, owned []apiextensionsv1.CustomResourceDefinition) string {
	app := def.Spec.Application
	for i := range owned {
		crd := &owned[i]
		servedKind := crd.Spec.Names.Kind
		if crd.Name != desiredName || servedKind != app.Kind {
			return fmt.Sprintf("the definition now names kind %s (plural %s), but CRD %s serves kind %s (plural %s) for it; "+
				"a served kind is never renamed in place: restore the old names, or delete the definition (once its instances are gone) "+
				"and create it again with the new names", app.Kind, app.Plural, crd.Name, servedKind, crd.Spec.Names.Plural)
		}
	}
	return ""
}

// maxNamed bounds how many instances a status message names.
const maxNamed = 5

// instancesMessage says what holds a deleting definition.
func instancesMessage(kind string, total int, sample []metav1.PartialObjectMetadata) string {
	names := make([]string, 0, len(sample))
	for _, o := range sample {
		names = append(names, o.Namespace+"/"+o.Name)
	}
	sort.Strings(names)
	if len(names) > maxNamed {
		names = names[:maxNamed]
	}
	what, verb := "instances", "remain"
	if total == 1 {
		what, verb = "instance", "remains"
	}
	more := ""
	if total > len(names) {
		more = fmt.Sprintf(" and %d more", total-len(names))
	}
	return fmt.Sprintf("the definition is being deleted and %d %s of %s %s (%s%s); "+
		"it is kept, with its CRD, until they are deleted", total, what, kind, verb, strings.Join(names, ", "), more)
}

// instanceAPIServiceName is the APIService through which the API server
// serves the instances' group and version: an APIService is always named
// <version>.<group>. For a group of CRDs kube-apiserver maintains a local
// one itself; upstream Cozystack installs one that proxies the group to its
// aggregated API server.
var instanceAPIServiceName = appsv1alpha1.GroupVersion.Version + "." + appsv1alpha1.GroupVersion.Group

// apiServiceGVK is the kube-aggregator's APIService, read as unstructured:
// only spec.service matters here, which does not justify a dependency on
// the aggregator's types.
var apiServiceGVK = schema.GroupVersionKind{Group: "apiregistration.k8s.io", Version: "v1", Kind: "APIService"}

// apiServiceRoute is where an APIService sends its group.
type apiServiceRoute struct {
	Name string
	// Service is "<namespace>/<name>" when the APIService proxies the group
	// to a Service; empty when the group is served locally (CRDs or
	// built-in types).
	Service string
}

// routeOf reads the route of an APIService; nil for nil.
func routeOf(u *unstructured.Unstructured) *apiServiceRoute {
	if u == nil {
		return nil
	}
	r := &apiServiceRoute{Name: u.GetName()}
	svc, found, _ := unstructured.NestedMap(u.Object, "spec", "service")
	if found && svc != nil {
		ns, _, _ := unstructured.NestedString(svc, "namespace")
		name, _, _ := unstructured.NestedString(svc, "name")
		r.Service = ns + "/" + name
	}
	return r
}

// shadowMessage says why the kind is not served although its CRD is
// established, or returns "" when nothing stands between the API server and
// the CRD: no APIService (kube-apiserver creates its local one shortly), or
// a local one.
func shadowMessage(route *apiServiceRoute, kind, crdName string) string {
	if route == nil || route.Service == "" {
		return ""
	}
	return fmt.Sprintf("APIService %s sends every request for %s to Service %s, so the API server never reaches CRD %s and kind %s is not served from it; "+
		"this is usually upstream Cozystack's aggregated API server: stop it and delete the APIService (kubectl delete apiservice %s, see docs/migration.md), "+
		"then kube-apiserver serves the group from the CRDs",
		route.Name, appsv1alpha1.GroupVersion.String(), route.Service, crdName, kind, route.Name)
}
