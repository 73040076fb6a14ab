package gateway

import (
	"strings"
	"testing"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
)

var testScope = HostnameScope{
	Apex:        "example.org",
	ChildApexes: []string{"alice.example.org", "bob.alice.example.org"},
	Reserved:    map[string]string{"api.example.org": "tls-api"},
}

func TestIsWithin(t *testing.T) {
	tests := []struct {
		host, domain string
		want         bool
	}{
		{"example.org", "example.org", true},
		{"a.example.org", "example.org", true},
		{"a.b.example.org", "example.org", true},
		{"*.example.org", "example.org", true},
		{"badexample.org", "example.org", false}, // a suffix, not a subdomain
		{"example.org.evil.com", "example.org", false},
		{"org", "example.org", false},
	}
	for _, tt := range tests {
		if got := IsWithin(tt.host, tt.domain); got != tt.want {
			t.Errorf("IsWithin(%q, %q) = %v, want %v", tt.host, tt.domain, got, tt.want)
		}
	}
}

func TestCheckListenerHostname(t *testing.T) {
	tests := []struct {
		host       string
		wantHost   string
		wantReason string // "" = accepted
	}{
		{"harbor.example.org", "harbor.example.org", ""},
		{"Harbor.Example.ORG", "harbor.example.org", ""},
		{"example.org", "example.org", ""},
		{"deep.er.example.org", "deep.er.example.org", ""},
		{"harbor.bob.alice.example.org", "harbor.bob.alice.example.org", ""},
		{"", "", gatewayv1alpha1.ReasonInvalidHostname},
		{"*.example.org", "*.example.org", gatewayv1alpha1.ReasonWildcardHostname},
		{"*.alice.example.org", "*.alice.example.org", gatewayv1alpha1.ReasonWildcardHostname},
		{"a.*.example.org", "a.*.example.org", gatewayv1alpha1.ReasonInvalidHostname},
		{"under_score.example.org", "under_score.example.org", gatewayv1alpha1.ReasonInvalidHostname},
		{"trailing.example.org.", "trailing.example.org.", gatewayv1alpha1.ReasonInvalidHostname},
		{strings.Repeat("a", 64) + ".example.org", strings.Repeat("a", 64) + ".example.org", gatewayv1alpha1.ReasonInvalidHostname},
		{"harbor.example.com", "harbor.example.com", gatewayv1alpha1.ReasonHostnameOutsideApex},
		{"badexample.org", "badexample.org", gatewayv1alpha1.ReasonHostnameOutsideApex},
		{"*.example.com", "*.example.com", gatewayv1alpha1.ReasonHostnameOutsideApex},
		{"api.example.org", "api.example.org", gatewayv1alpha1.ReasonReservedHostname},
		{"API.example.org", "api.example.org", gatewayv1alpha1.ReasonReservedHostname},
		{"x.api.example.org", "x.api.example.org", ""}, // only the exact name is reserved
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			h, rej := testScope.CheckListenerHostname(tt.host)
			if h != tt.wantHost {
				t.Errorf("hostname = %q, want %q", h, tt.wantHost)
			}
			assertReason(t, rej, tt.wantReason)
		})
	}
}

func TestCheckCoveredHostname(t *testing.T) {
	tests := []struct {
		host       string
		wantReason string
	}{
		{"example.org", ""},
		{"harbor.example.org", ""},
		{"*.example.org", ""},
		{"alice.example.org", ""},
		{"harbor.alice.example.org", ""},
		{"*.alice.example.org", ""},
		{"harbor.bob.alice.example.org", ""},
		{"Harbor.Example.org", ""},
		{"a.b.example.org", gatewayv1alpha1.ReasonHostnameNotCovered},
		{"*.b.example.org", gatewayv1alpha1.ReasonHostnameNotCovered},
		{"x.y.alice.example.org", gatewayv1alpha1.ReasonHostnameNotCovered},
		{"harbor.example.com", gatewayv1alpha1.ReasonHostnameOutsideApex},
		{"api.example.org", gatewayv1alpha1.ReasonReservedHostname},
		{"a..example.org", gatewayv1alpha1.ReasonInvalidHostname},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			_, rej := testScope.CheckCoveredHostname(tt.host)
			assertReason(t, rej, tt.wantReason)
		})
	}
}

func assertReason(t *testing.T, rej *RejectedHostname, want string) {
	t.Helper()
	switch {
	case want == "" && rej != nil:
		t.Fatalf("rejected: %+v", *rej)
	case want != "" && rej == nil:
		t.Fatalf("accepted, want %s", want)
	case rej != nil && rej.Reason != want:
		t.Fatalf("reason %s (%s), want %s", rej.Reason, rej.Message, want)
	case rej != nil && !strings.Contains(rej.Message, rej.Hostname):
		t.Fatalf("message %q does not name the hostname %q", rej.Message, rej.Hostname)
	}
}
