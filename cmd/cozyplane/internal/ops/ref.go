package ops

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Groups the CLI knows.
const (
	// InstanceGroup serves the user-facing kinds of ApplicationDefinitions.
	InstanceGroup = "apps.cozystack.io"
	// GatewayGroup serves TenantGateway.
	GatewayGroup = "gateway.cozystack.io"
	// TenantGatewayKind is the kind trace follows to its Gateway.
	TenantGatewayKind = "TenantGateway"
)

// InputError is a command-line argument that cannot be read (a malformed
// KIND/NAME, an ambiguous kind): nothing was asked of the cluster for it.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

func inputErrorf(format string, args ...any) error {
	return &InputError{Msg: fmt.Sprintf(format, args...)}
}

// NotFoundError is a kind the API server does not serve, or an object that
// does not exist.
type NotFoundError struct{ Msg string }

func (e *NotFoundError) Error() string { return e.Msg }

func notFoundf(format string, args ...any) error {
	return &NotFoundError{Msg: fmt.Sprintf(format, args...)}
}

// Ref is KIND/NAME as typed on the command line.
type Ref struct {
	Kind string
	Name string
}

func (r Ref) String() string { return r.Kind + "/" + r.Name }

// ParseRef reads KIND/NAME. Pure.
func ParseRef(s string) (Ref, error) {
	kind, name, ok := strings.Cut(s, "/")
	switch {
	case !ok:
		return Ref{}, inputErrorf("%q is not KIND/NAME (for example postgres/orders or tgw/cozystack)", s)
	case kind == "" || name == "":
		return Ref{}, inputErrorf("%q is not KIND/NAME: both parts are needed", s)
	case strings.Contains(name, "/"):
		return Ref{}, inputErrorf("%q is not KIND/NAME: the name may not contain '/' (give the namespace with -n)", s)
	}
	return Ref{Kind: kind, Name: name}, nil
}

// Resource is one kind the API server serves, as discovery reports it.
type Resource struct {
	Group      string
	Version    string
	Kind       string
	Plural     string
	Singular   string
	ShortNames []string
}

// GVR is the resource's group, version and plural.
func (r Resource) GVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: r.Group, Version: r.Version, Resource: r.Plural}
}

// GVK is the resource's group, version and kind.
func (r Resource) GVK() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}
}

// names are the spellings that select the resource, lower-case.
func (r Resource) names() []string {
	n := []string{strings.ToLower(r.Kind), strings.ToLower(r.Plural), strings.ToLower(r.Singular)}
	for _, s := range r.ShortNames {
		n = append(n, strings.ToLower(s))
	}
	return n
}

// MatchKind finds the resource a typed kind names, as kubectl does: the kind,
// plural, singular or a short name, case-insensitively, optionally followed
// by .group (postgres.apps.cozystack.io). Pure.
func MatchKind(typed string, served []Resource) (Resource, error) {
	want := strings.ToLower(typed)
	var found []Resource
	for _, r := range served {
		for _, n := range r.names() {
			if n != "" && (want == n || want == n+"."+strings.ToLower(r.Group)) {
				found = append(found, r)
				break
			}
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		kinds := make([]string, 0, len(served))
		for _, r := range served {
			kinds = append(kinds, strings.ToLower(r.Singular))
		}
		sort.Strings(kinds)
		if len(kinds) == 0 {
			return Resource{}, notFoundf("no kind %q: the cluster serves no instance kinds (is any ApplicationDefinition Ready?)", typed)
		}
		return Resource{}, notFoundf("no kind %q is served; known kinds: %s", typed, strings.Join(kinds, ", "))
	}
	var names []string
	for _, r := range found {
		names = append(names, r.Kind+"."+r.Group)
	}
	return Resource{}, inputErrorf("%q is ambiguous: %s; spell out KIND.GROUP", typed, strings.Join(names, ", "))
}
