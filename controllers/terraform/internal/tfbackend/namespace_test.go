package tfbackend

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
)

func TestTargetNamespace(t *testing.T) {
	long := "tenant-" + strings.Repeat("a", 56) // 63 characters, the longest namespace
	for _, tc := range []struct{ ns, want string }{
		{"tenant-demo", "cozy-tf-tenant-demo"},
		{"tenant-" + strings.Repeat("b", 48), "cozy-tf-tenant-" + strings.Repeat("b", 48)}, // exactly 63
		{long, ""},
	} {
		got := Backend{}.TargetNamespace(tc.ns)
		if errs := validation.IsDNS1123Label(got); len(errs) > 0 {
			t.Errorf("TargetNamespace(%q) = %q is not a namespace name: %v", tc.ns, got, errs)
		}
		if tc.want != "" && got != tc.want {
			t.Errorf("TargetNamespace(%q) = %q, want %q", tc.ns, got, tc.want)
		}
		if !strings.HasPrefix(got, NamespacePrefix) {
			t.Errorf("TargetNamespace(%q) = %q lacks the prefix %s", tc.ns, got, NamespacePrefix)
		}
	}
	// Long names that share their beginning stay apart.
	if a, b := (Backend{}).TargetNamespace(long), (Backend{}).TargetNamespace(long[:62]+"b"); a == b {
		t.Errorf("two long namespaces share the platform namespace %s", a)
	}
	l := Backend{}.TargetNamespaceLabels("tenant-demo")
	if l[appsv1alpha1.LabelPlatformNamespace] != "Terraform" || l[appsv1alpha1.LabelTenantNamespace] != "tenant-demo" {
		t.Errorf("TargetNamespaceLabels = %v", l)
	}
}
