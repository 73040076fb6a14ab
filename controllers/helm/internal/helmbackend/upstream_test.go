package helmbackend

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/instance/instancetest"
	"github.com/cozyplane/cozyplane/pkg/reconcileerr"
)

func TestTimeouts(t *testing.T) {
	const in, up = cozyv1alpha1.AnnotationHelmInstallTimeout, cozyv1alpha1.AnnotationHelmUpgradeTimeout
	tests := []struct {
		name                 string
		ann                  map[string]string
		wantInstall, wantUpg time.Duration
		wantErr              string
	}{
		{"defaults", nil, 10 * time.Minute, 10 * time.Minute, ""},
		{"install timeout sets the upgrade timeout too", map[string]string{in: "15m"}, 15 * time.Minute, 15 * time.Minute, ""},
		{"upgrade timeout alone", map[string]string{up: "1h"}, 10 * time.Minute, time.Hour, ""},
		{"upgrade timeout wins over install for upgrades", map[string]string{in: "20m", up: "5m"}, 20 * time.Minute, 5 * time.Minute, ""},
		{"compound duration", map[string]string{in: "1h30m"}, 90 * time.Minute, 90 * time.Minute, ""},
		{"zero means unset, as upstream", map[string]string{in: "0s"}, 10 * time.Minute, 10 * time.Minute, ""},
		{"empty means unset", map[string]string{in: "", up: ""}, 10 * time.Minute, 10 * time.Minute, ""},
		{"words", map[string]string{in: "ten minutes"}, 0, 0, in},
		{"a unit helm-controller refuses", map[string]string{up: "90000us"}, 0, 0, up},
		{"no unit", map[string]string{in: "600"}, 0, 0, in},
		{"negative", map[string]string{in: "-5m"}, 0, 0, in},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			i, u, err := Timeouts(tt.ann)
			if tt.wantErr != "" {
				s, ok := reconcileerr.AsStalled(err)
				if !ok || s.Reason != appsv1alpha1.ReasonInvalidTimeoutAnnotation || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want a stalled %s naming %s", err, appsv1alpha1.ReasonInvalidTimeoutAnnotation, tt.wantErr)
				}
				return
			}
			if err != nil || i != tt.wantInstall || u != tt.wantUpg {
				t.Fatalf("Timeouts = %v, %v, %v; want %v, %v", i, u, err, tt.wantInstall, tt.wantUpg)
			}
		})
	}
}

func TestDisableWait(t *testing.T) {
	k := cozyv1alpha1.AnnotationHelmInstallDisableWait
	for v, want := range map[string]bool{"": false, "true": true, "TRUE": true, " True ": true, "false": false, "False": false} {
		got, err := DisableWait(map[string]string{k: v})
		if err != nil || got != want {
			t.Errorf("%q: %v, %v; want %v", v, got, err, want)
		}
	}
	if _, err := DisableWait(map[string]string{k: "yes"}); err == nil || !strings.Contains(err.Error(), k) {
		t.Errorf("yes: error %v, want one naming the annotation", err)
	} else if s, _ := reconcileerr.AsStalled(err); s == nil || s.Reason != appsv1alpha1.ReasonInvalidDisableWaitAnnotation {
		t.Errorf("yes: not a stalled %s: %v", appsv1alpha1.ReasonInvalidDisableWaitAnnotation, err)
	}
}

func TestTenantNamespace(t *testing.T) {
	tests := []struct{ ns, prefix, name, want string }{
		{"tenant-root", "tenant-", "root", "tenant-root"},
		{"tenant-root", "tenant-", "alpha", "tenant-alpha"},
		{"tenant-alpha", "tenant-", "beta", "tenant-alpha-beta"},
		{"tenant-alpha-beta", "tenant-", "gamma", "tenant-alpha-beta-gamma"},
		// Only the root tenant's own release name maps to tenant-root.
		{"tenant-root", "t-", "root", "tenant-root"},
		{"tenant-root", "x", "tenant-root", "tenant-tenant-root"},
	}
	for _, tt := range tests {
		if got := TenantNamespace(tt.ns, tt.prefix, tt.name); got != tt.want {
			t.Errorf("TenantNamespace(%q, %q, %q) = %q, want %q", tt.ns, tt.prefix, tt.name, got, tt.want)
		}
	}
	long := "tenant-" + strings.Repeat("a", 40) // 47 characters
	if err := CheckTenantNamespace("Tenant", long, "tenant-", strings.Repeat("b", 15)); err != nil {
		t.Errorf("63 characters refused: %v", err) // 47 + 1 + 15
	}
	err := CheckTenantNamespace("Tenant", long, "tenant-", strings.Repeat("b", 16))
	if err == nil || !strings.Contains(err.Error(), `"`+long+"-"+strings.Repeat("b", 16)+`"`) ||
		!strings.Contains(err.Error(), "64 characters") || !strings.Contains(err.Error(), "at most 63") {
		t.Errorf("64 characters: error %v, want one naming the namespace and the limit", err)
	}
	if err := CheckTenantNamespace("Postgres", long, "postgres-", strings.Repeat("b", 40)); err != nil {
		t.Errorf("only Tenant instances get a namespace: %v", err)
	}
}

func TestOmitUnwrittenDefaults(t *testing.T) {
	const schema = `{"type":"object","properties":{
	  "replicas":{"type":"integer","default":2},
	  "size":{"type":"string","default":"10Gi"},
	  "external":{"type":"boolean","default":false},
	  "resources":{"type":"object","default":{},"properties":{"cpu":{"type":"string","default":"1"},"memory":{"type":"string"}}},
	  "backup":{"type":"object","properties":{"enabled":{"type":"boolean","default":false},"schedule":{"type":"string","default":"0 2 * * *"}}},
	  "users":{"type":"object","additionalProperties":{"type":"object"}}}}`
	// What the API server makes of a tenant's {replicas: 3, backup: {enabled: true}}.
	spec := func() map[string]any {
		return instancetest.Normalise(t, map[string]any{
			"replicas": 3, "size": "10Gi", "external": false, "resources": map[string]any{"cpu": "1"},
			"backup": map[string]any{"enabled": true, "schedule": "0 2 * * *"}, "users": map[string]any{},
		})
	}
	tests := []struct {
		name string
		live map[string]any
		want map[string]any
	}{
		{"no HelmRelease yet: everything", nil, spec()},
		{"upstream stored what the tenant wrote", map[string]any{"replicas": 3, "backup": map[string]any{"enabled": true}},
			map[string]any{"replicas": int64(3), "backup": map[string]any{"enabled": true}, "users": map[string]any{}}},
		{"values written after defaulting keep everything", spec(), spec()},
		{"a value the tenant changed away from its default stays", map[string]any{"replicas": 3, "size": "10Gi"},
			map[string]any{"replicas": int64(3), "size": "20Gi", "users": map[string]any{},
				// absent upstream and not its default as a whole: kept
				"backup": map[string]any{"enabled": true, "schedule": "0 2 * * *"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			values := spec()
			if strings.HasPrefix(tt.name, "a value the tenant changed") {
				values["size"] = "20Gi" // the tenant's change since
			}
			var live map[string]any
			if tt.live != nil {
				live = instancetest.Normalise(t, tt.live)
			}
			if err := OmitUnwrittenDefaults(values, live, schema); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(instancetest.Normalise(t, tt.want), instancetest.Normalise(t, values)); diff != "" {
				t.Fatalf("values (-want +got):\n%s", diff)
			}
		})
	}
	if err := OmitUnwrittenDefaults(map[string]any{"a": 1}, map[string]any{}, "{not json"); err == nil {
		t.Fatal("a broken schema went unnoticed")
	}
}
