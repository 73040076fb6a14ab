package tfbackend

import (
	"strings"
	"testing"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/instance/instancetest"
	"github.com/cozyplane/cozyplane/pkg/reconcileerr"
)

// TestBuildFailsClosed: a module in a tenant namespace (a definition stored
// before the CRD's rule) and an instance stored with reserved keys get no
// Terraform object; the instance says why.
func TestBuildFailsClosed(t *testing.T) {
	def := func(ns string) string {
		return `
metadata: {name: dns}
spec:
  application: {kind: DNSZone, plural: dnszones, singular: dnszone, openAPISchema: '{}'}
  backend:
    type: Terraform
    terraform:
      sourceRef: {kind: OCIRepository, name: dns` + ns + `}
      approvePlan: auto
`
	}
	const inst = "{kind: DNSZone, metadata: {name: z, namespace: tenant-a}, spec: "
	tests := []struct {
		name, def, spec string
		reason          string // empty: built
		want            string
	}{
		{name: "module from the platform namespace", def: def(""), spec: "{zone: example.org}"},
		{name: "module from cozy-system", def: def(", namespace: cozy-system"), spec: "{zone: example.org, nested: {_x: 1}}"},
		{name: "module from a tenant namespace", def: def(", namespace: tenant-a"), spec: "{zone: example.org}",
			reason: appsv1alpha1.ReasonSourceNotPlatformOwned, want: "spec.backend.terraform.sourceRef (OCIRepository tenant-a/dns) is in a tenant namespace"},
		{name: "reserved keys", def: def(""), spec: "{zone: example.org, _namespace: {host: victim.example.net}}",
			reason: appsv1alpha1.ReasonReservedKey, want: `"_namespace"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Backend{}.Build(instancetest.Definition(t, tc.def), instancetest.Object(t, inst+tc.spec+"}"), nil)
			if tc.reason == "" {
				if err != nil || got == nil {
					t.Fatalf("Build() = %v, %v; want it built", got, err)
				}
				return
			}
			if got != nil {
				t.Errorf("Build() wrote %v, want nothing", got.Object)
			}
			if s, ok := reconcileerr.AsStalled(err); !ok || s.Reason != tc.reason || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Build() error = %v, want Stalled %s naming %q", err, tc.reason, tc.want)
			}
		})
	}
}
