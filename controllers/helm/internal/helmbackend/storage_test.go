package helmbackend

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/conditions"
	"github.com/cozyplane/cozyplane/pkg/instance/instancetest"
)

func hr(t *testing.T, ns, storage string) *unstructured.Unstructured {
	t.Helper()
	u := instancetest.Object(t, `
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: postgres-db, namespace: `+ns+`}
spec: {interval: 5m}
`)
	if storage != "" {
		if err := unstructured.SetNestedField(u.Object, storage, "spec", "storageNamespace"); err != nil {
			t.Fatal(err)
		}
	}
	return u
}

func TestDesiredStorageNamespace(t *testing.T) {
	for _, tt := range []struct {
		name string
		live *unstructured.Unstructured
		want string
	}{
		{"new HelmRelease: the platform namespace", nil, "cozy-helm-tenant-a"},
		{"earlier version's HelmRelease: kept unset (moving it uninstalls)", hr(t, "tenant-a", ""), ""},
		{"already in the platform namespace: kept", hr(t, "tenant-a", "cozy-helm-tenant-a"), "cozy-helm-tenant-a"},
		{"set by an administrator: kept", hr(t, "tenant-a", "elsewhere"), "elsewhere"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := DesiredStorageNamespace("tenant-a", tt.live); got != tt.want {
				t.Fatalf("DesiredStorageNamespace = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestStorageNamespaceOfLongNamespace(t *testing.T) {
	long := "tenant-" + strings.Repeat("a", 56) // 63 characters
	got := StorageNamespaceOf(long)
	if len(got) > 63 || !strings.HasPrefix(got, "cozy-helm-tenant-aaa") {
		t.Fatalf("StorageNamespaceOf(%q) = %q (%d characters)", long, got, len(got))
	}
	if other := StorageNamespaceOf(long[:62] + "b"); other == got {
		t.Fatalf("two long namespaces share %q", got)
	}
}

func TestStorageNamespace(t *testing.T) {
	b := Backend{}
	for _, tt := range []struct {
		name    string
		desired *unstructured.Unstructured
		want    string
	}{
		{"the platform namespace is created", hr(t, "tenant-a", "cozy-helm-tenant-a"), "cozy-helm-tenant-a"},
		{"unset: nothing to create", hr(t, "tenant-a", ""), ""},
		{"another tenant's platform namespace: never created", hr(t, "tenant-a", "cozy-helm-tenant-b"), ""},
		{"any other namespace: never created", hr(t, "tenant-a", "kube-system"), ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := b.StorageNamespace(tt.desired); got != tt.want {
				t.Fatalf("StorageNamespace = %q, want %q", got, tt.want)
			}
		})
	}
	l := b.StorageNamespaceLabels("tenant-a")
	if l[appsv1alpha1.LabelPlatformNamespace] != "Helm" || l[appsv1alpha1.LabelTenantNamespace] != "tenant-a" || len(l) != 2 {
		t.Fatalf("StorageNamespaceLabels = %v", l)
	}
}

func TestProjectStorage(t *testing.T) {
	for _, tt := range []struct {
		name   string
		target *unstructured.Unstructured
		want   bool
	}{
		{"records in the tenant namespace", hr(t, "tenant-a", ""), true},
		{"storage named as the tenant namespace itself", hr(t, "tenant-a", "tenant-a"), true},
		{"records in the platform namespace", hr(t, "tenant-a", "cozy-helm-tenant-a"), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := &appsv1alpha1.ApplicationStatus{}
			h := conditions.Holder{Generation: 1, Conditions: &st.Conditions}
			// A condition from an earlier pass goes once the records moved.
			conditions.Set(h, appsv1alpha1.ConditionLegacyReleaseStorage, "True", appsv1alpha1.ReasonReleaseStorageInTenantNamespace, "x")
			projectStorage(h, tt.target)
			c := conditions.Get(h, appsv1alpha1.ConditionLegacyReleaseStorage)
			if (c != nil) != tt.want {
				t.Fatalf("LegacyReleaseStorage = %+v, want present %v", c, tt.want)
			}
			if c != nil && (c.Reason != appsv1alpha1.ReasonReleaseStorageInTenantNamespace || !strings.Contains(c.Message, "cozyplane migrate release-storage -n tenant-a")) {
				t.Fatalf("LegacyReleaseStorage = %+v", c)
			}
		})
	}
}
