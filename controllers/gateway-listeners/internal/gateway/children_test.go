package gateway

import (
	"slices"
	"strings"
	"testing"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
)

func ns(name, gateway, host string) Namespace {
	l := map[string]string{}
	if gateway != "" {
		l[gatewayv1alpha1.LabelNamespaceGateway] = gateway
	}
	if host != "" {
		l[gatewayv1alpha1.LabelNamespaceHost] = host
	}
	return Namespace{Name: name, Labels: l}
}

func TestInheritingChildApexes(t *testing.T) {
	tests := []struct {
		name         string
		namespaces   []Namespace
		want         []string
		wantRejected []string // "hostname reason"
	}{
		{
			name: "children sorted and deduplicated, case folded",
			namespaces: []Namespace{
				ns("tenant-bob", "tenant-root", "bob.example.org"),
				ns("tenant-alice", "tenant-root", "alice.example.org"),
				ns("tenant-alice2", "tenant-root", "ALICE.example.org"),
				ns("tenant-carol-dave", "tenant-root", "dave.carol.example.org"),
			},
			want: []string{"alice.example.org", "bob.example.org", "dave.carol.example.org"},
		},
		{
			name: "owner namespace, owner apex, other gateways, unlabelled and hostless namespaces are skipped",
			namespaces: []Namespace{
				ns("tenant-root", "tenant-root", "example.org"),
				ns("tenant-same-apex", "tenant-root", "Example.org"),
				ns("tenant-other", "tenant-acme", "x.example.org"),
				ns("plain", "", "y.example.org"),
				ns("cozy-dashboard", "tenant-root", ""),
			},
			want: nil,
		},
		{
			// Even when its host label disagrees with spec.apex, the owner
			// namespace is never its own child.
			name:       "the owner namespace is never a child",
			namespaces: []Namespace{ns("tenant-root", "tenant-root", "www.example.org")},
			want:       nil,
		},
		{
			name: "host labels this Gateway cannot serve are rejected",
			namespaces: []Namespace{
				ns("tenant-acme", "tenant-root", "customer1.example"),
				ns("tenant-wild", "tenant-root", "*.example.org"),
				ns("tenant-bad", "tenant-root", "bad_label.example.org"),
				ns("tenant-ok", "tenant-root", "ok.example.org"),
			},
			want: []string{"ok.example.org"},
			wantRejected: []string{
				"*.example.org " + gatewayv1alpha1.ReasonWildcardHostname,
				"bad_label.example.org " + gatewayv1alpha1.ReasonInvalidHostname,
				"customer1.example " + gatewayv1alpha1.ReasonHostnameOutsideApex,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, rejected := InheritingChildApexes(ChildrenInput{OwnerNamespace: "tenant-root", Apex: "example.org", Namespaces: tt.namespaces})
			if !slices.Equal(got, tt.want) {
				t.Errorf("apexes = %v, want %v", got, tt.want)
			}
			var gotRejected []string
			for _, r := range rejected {
				gotRejected = append(gotRejected, r.Hostname+" "+r.Reason)
			}
			if !slices.Equal(gotRejected, tt.wantRejected) {
				t.Errorf("rejected = %v, want %v", gotRejected, tt.wantRejected)
			}
		})
	}
}

// Two namespaces with the same bad label: one rejection, naming the
// namespace that sorts first, whatever the input order.
func TestInheritingChildApexesRejectionIsDeterministic(t *testing.T) {
	a := ns("tenant-a", "tenant-root", "other.example")
	b := ns("tenant-b", "tenant-root", "other.example")
	for _, order := range [][]Namespace{{a, b}, {b, a}} {
		_, rejected := InheritingChildApexes(ChildrenInput{OwnerNamespace: "tenant-root", Apex: "example.org", Namespaces: order})
		if len(rejected) != 1 || !strings.Contains(rejected[0].Message, "namespace tenant-a") {
			t.Fatalf("rejected = %+v, want one naming tenant-a", rejected)
		}
	}
}
