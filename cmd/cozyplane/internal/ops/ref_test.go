package ops

import (
	"strings"
	"testing"
)

func TestParseRef(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    Ref
		wantErr string
	}{
		{in: "postgres/orders", want: Ref{Kind: "postgres", Name: "orders"}},
		{in: "tgw/cozystack", want: Ref{Kind: "tgw", Name: "cozystack"}},
		{in: "Postgres.apps.cozystack.io/orders", want: Ref{Kind: "Postgres.apps.cozystack.io", Name: "orders"}},
		{in: "orders", wantErr: "is not KIND/NAME (for example"},
		{in: "/orders", wantErr: "both parts are needed"},
		{in: "postgres/", wantErr: "both parts are needed"},
		{in: "postgres/ns/orders", wantErr: "give the namespace with -n"},
	} {
		got, err := ParseRef(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: got %v, %v", tc.in, got, err)
		}
	}
}

func TestMatchKind(t *testing.T) {
	pg := Resource{Group: InstanceGroup, Version: "v1alpha1", Kind: "Postgres", Plural: "postgreses", Singular: "postgres"}
	vpc := Resource{Group: InstanceGroup, Version: "v1alpha1", Kind: "VPC", Plural: "vpcs", Singular: "vpc"}
	tgw := Resource{Group: GatewayGroup, Version: "v1alpha1", Kind: "TenantGateway", Plural: "tenantgateways", Singular: "tenantgateway", ShortNames: []string{"tgw"}}
	other := Resource{Group: "example.org", Version: "v1", Kind: "Postgres", Plural: "postgreses", Singular: "postgres"}
	served := []Resource{pg, vpc, tgw}
	for _, tc := range []struct {
		typed   string
		served  []Resource
		want    string
		wantErr string
	}{
		{typed: "postgres", served: served, want: "Postgres"},
		{typed: "Postgres", served: served, want: "Postgres"},
		{typed: "postgreses", served: served, want: "Postgres"},
		{typed: "VPC", served: served, want: "VPC"},
		{typed: "tgw", served: served, want: "TenantGateway"},
		{typed: "tenantgateways", served: served, want: "TenantGateway"},
		{typed: "postgres.apps.cozystack.io", served: []Resource{pg, other}, want: "Postgres"},
		{typed: "postgres", served: []Resource{pg, other}, wantErr: "is ambiguous: Postgres.apps.cozystack.io, Postgres.example.org"},
		{typed: "redis", served: served, wantErr: `no kind "redis" is served; known kinds: postgres, tenantgateway, vpc`},
		{typed: "redis", wantErr: "the cluster serves no instance kinds"},
	} {
		got, err := MatchKind(tc.typed, tc.served)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: error %v, want %q", tc.typed, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got.Kind != tc.want {
			t.Errorf("%q: got %v, %v", tc.typed, got.Kind, err)
		}
	}
}
