package names

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

// The hashes are pinned (computed with `echo -n host | sha256sum | cut -c1-8`):
// changing them renames every listener and certificate of every tenant and
// re-issues every certificate.
func TestHostnameHash(t *testing.T) {
	tests := []struct{ host, want string }{
		{"harbor.example.org", "91fb3185"},
		{"HARBOR.Example.org", "91fb3185"},
		{"harbor.alice.example.org", "45348fe9"},
		{"alice.example.org", "cf290f3a"},
	}
	for _, tt := range tests {
		if got := HostnameHash(tt.host); got != tt.want {
			t.Errorf("HostnameHash(%q) = %q, want %q", tt.host, got, tt.want)
		}
	}
}

func TestNames(t *testing.T) {
	long := strings.Repeat("a", 63)
	tests := []struct{ name, got, want string }{
		{"per-host listener", PerHostListener("harbor.example.org"), "https-harbor-91fb3185"},
		{"per-host listener, upper case", PerHostListener("HARBOR.Example.org"), "https-harbor-91fb3185"},
		{"same first label, other host", PerHostListener("harbor.alice.example.org"), "https-harbor-45348fe9"},
		{"child listener", ChildListener("alice.example.org"), "https-child-alice-cf290f3a"},
		{"per-host listener, long first label cut to 42", PerHostListener(long + ".example.org"), "https-" + strings.Repeat("a", 42) + "-" + HostnameHash(long+".example.org")},
		{"child listener, long first label cut to 42", ChildListener(long + ".example.org"), "https-child-" + strings.Repeat("a", 42) + "-" + HostnameHash(long+".example.org")},
		{"cut ending on a hyphen drops it", PerHostListener(strings.Repeat("a", 41) + "-b.example.org"), "https-" + strings.Repeat("a", 41) + "-" + HostnameHash(strings.Repeat("a", 41)+"-b.example.org")},
		{"odd characters become hyphens", PerHostListener("my_app.example.org"), "https-my-app-" + HostnameHash("my_app.example.org")},
		{"nothing usable leaves the label out", PerHostListener("*.example.org"), "https-" + HostnameHash("*.example.org")},
		{"passthrough listener", PassthroughListener("vm-exportproxy"), "tls-vm-exportproxy"},
		{"passthrough hostname", PassthroughHostname("api", "example.org"), "api.example.org"},
		{"gateway", Gateway("cozystack"), "cozystack"},
		{"issuer", Issuer("cozystack"), "cozystack-gateway"},
		{"acme account", ACMEAccountSecret("cozystack"), "cozystack-acme-account"},
		{"per-listener certificate", PerListenerCertificate("cozystack", "harbor.example.org"), "cozystack-harbor-91fb3185-tls"},
		{"per-listener certificate, upper case", PerListenerCertificate("cozystack", "Harbor.EXAMPLE.org"), "cozystack-harbor-91fb3185-tls"},
		{"wildcard certificate", WildcardCertificate("cozystack"), "cozystack-gateway-tls"},
		{"redirect route", RedirectRoute("cozystack"), "cozystack-http-redirect"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %q, want %q", tt.got, tt.want)
			}
		})
	}
}

// Whatever the hostname, the listener names are DNS-1123 labels (hence valid
// SectionNames) and the certificate names valid object names.
func TestGeneratedNamesAreValid(t *testing.T) {
	hosts := []string{
		"harbor.example.org",
		strings.Repeat("x", 63) + ".example.org",
		strings.Repeat("x", 200),
		"-leading-and-trailing-.example.org",
		"UPPER.example.org",
		"*.example.org",
		"*",
		"",
		".",
		"ünïcode.example.org",
		"a_b.c",
		strings.Repeat("-", 70) + "a",
		"a" + strings.Repeat("-", 60) + "b.example.org",
	}
	for _, h := range hosts {
		assertValidNames(t, h)
	}
}

func FuzzGeneratedNamesAreValid(f *testing.F) {
	for _, h := range []string{"harbor.example.org", "*.x", "", strings.Repeat("a-", 40)} {
		f.Add(h)
	}
	f.Fuzz(assertValidNames)
}

func assertValidNames(t *testing.T, host string) {
	t.Helper()
	for _, n := range []string{PerHostListener(host), ChildListener(host)} {
		if errs := validation.IsDNS1123Label(n); len(errs) > 0 {
			t.Errorf("listener name %q for %q: %v", n, host, errs)
		}
	}
	// The longest TenantGateway name the CRD admits: the Certificate and
	// its Secret still get a valid object name (a DNS-1123 subdomain).
	tgw := strings.Repeat("t", 63)
	if n := PerListenerCertificate(tgw, host); len(validation.IsDNS1123Subdomain(n)) > 0 {
		t.Errorf("certificate name %q for %q: %v", n, host, validation.IsDNS1123Subdomain(n))
	}
}

// The longest name fits exactly: https-child- (12) + 42 + "-" + 8 = 63.
func TestLongestListenerNameIs63(t *testing.T) {
	if n := ChildListener(strings.Repeat("z", 63) + ".example.org"); len(n) != 63 {
		t.Fatalf("len(%q) = %d, want 63", n, len(n))
	}
}

func TestParentRef(t *testing.T) {
	tests := []struct {
		name string
		ref  ParentRef
		want bool
	}{
		{"defaults: the route's namespace, Gateway API's Gateway", ParentRef{Name: "gw"}, true},
		{"explicit group, kind and namespace", ParentRef{Group: "gateway.networking.k8s.io", Kind: "Gateway", Namespace: "tenant-a", Name: "gw"}, true},
		{"another namespace", ParentRef{Namespace: "tenant-b", Name: "gw"}, false},
		{"another name", ParentRef{Name: "other"}, false},
		{"a Service parent (GAMMA)", ParentRef{Group: "", Kind: "Service", Name: "gw"}, false},
		{"another group's Gateway kind", ParentRef{Group: "example.com", Kind: "Gateway", Name: "gw"}, false},
		{"a ListenerSet", ParentRef{Group: "gateway.networking.k8s.io", Kind: "ListenerSet", Name: "gw"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.ref.NamesGateway("tenant-a", "tenant-a", "gw"); got != tt.want {
				t.Errorf("NamesGateway = %v, want %v", got, tt.want)
			}
		})
	}
	if key, ok := (ParentRef{Name: "gw"}).GatewayKey("tenant-a"); !ok || key != "tenant-a/gw" {
		t.Errorf("GatewayKey = %q, %v; want tenant-a/gw, true", key, ok)
	}
	if _, ok := (ParentRef{Kind: "Service", Name: "gw"}).GatewayKey("tenant-a"); ok {
		t.Error("GatewayKey of a Service parent: ok, want not ok")
	}
}
