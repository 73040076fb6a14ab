package releasestorage

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"sigs.k8s.io/yaml"
)

func obj(t *testing.T, s string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(s), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

const hrYAML = `
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: app-web
  namespace: tenant-a
  resourceVersion: "7"
  labels: {apps.cozystack.io/application.kind: App, apps.cozystack.io/application.group: apps.cozystack.io, apps.cozystack.io/application.name: web}
  ownerReferences: [{apiVersion: apps.cozystack.io/v1alpha1, kind: App, name: web, uid: u1, controller: true}]
spec: {interval: 5m}
status: {storageNamespace: tenant-a}
`

func rec(t *testing.T, ns string, v int, status string) *unstructured.Unstructured {
	t.Helper()
	return obj(t, strings.NewReplacer("@NS", ns, "@V", string(rune('0'+v)), "@ST", status).Replace(`
apiVersion: v1
kind: Secret
metadata:
  name: sh.helm.release.v1.app-web.v@V
  namespace: @NS
  labels: {owner: helm, name: app-web, status: @ST, version: "@V"}
type: helm.sh/release.v1
data: {release: cmVsZWFzZQ==}
`))
}

func TestDecide(t *testing.T) {
	set := func(u *unstructured.Unstructured, v any, path ...string) *unstructured.Unstructured {
		_ = unstructured.SetNestedField(u.Object, v, path...)
		return u
	}
	foreignNS := obj(t, `{apiVersion: v1, kind: Namespace, metadata: {name: cozy-helm-tenant-a}}`)
	for _, tt := range []struct {
		name    string
		hr      *unstructured.Unstructured
		records []unstructured.Unstructured
		ns      *unstructured.Unstructured
		action  string
		reason  string
	}{
		{"records in the tenant namespace: moved", obj(t, hrYAML), []unstructured.Unstructured{*rec(t, "tenant-a", 2, "deployed"), *rec(t, "tenant-a", 1, "superseded")}, nil, ActionMove, ""},
		{"no record yet: moved (nothing to copy)", obj(t, hrYAML), nil, nil, ActionMove, ""},
		{"already in the platform namespace", set(obj(t, hrYAML), "cozy-helm-tenant-a", "spec", "storageNamespace"), nil, nil, ActionNone, ""},
		{"storage named by an administrator", set(obj(t, hrYAML), "elsewhere", "spec", "storageNamespace"), nil, nil, ActionSkip, SkipOtherStorage},
		{"release name of its own", set(obj(t, hrYAML), "other", "spec", "releaseName"), nil, nil, ActionSkip, SkipNotBackend},
		{"helm-controller upgrading", obj(t, hrYAML), []unstructured.Unstructured{*rec(t, "tenant-a", 1, "superseded"), *rec(t, "tenant-a", 2, "pending-upgrade")}, nil, ActionSkip, SkipReleaseBusy},
		{"platform namespace not the helm controller's", obj(t, hrYAML), nil, foreignNS, ActionSkip, SkipNamespaceNotOwned},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := Decide(tt.hr, tt.records, tt.ns)
			if e.Action != tt.action || e.Reason != tt.reason {
				t.Fatalf("Decide = %s (%s: %s), want %s (%s)", e.Action, e.Reason, e.Message, tt.action, tt.reason)
			}
			if e.StorageNamespace != "cozy-helm-tenant-a" {
				t.Fatalf("StorageNamespace = %q", e.StorageNamespace)
			}
		})
	}
	hr := obj(t, hrYAML)
	hr.SetOwnerReferences(nil)
	if IsBackingRelease(hr) {
		t.Fatal("a HelmRelease without an instance owner is not the helm backend's")
	}
}

func TestApply(t *testing.T) {
	scheme := runtime.NewScheme()
	gvrs := map[schema.GroupVersionResource]string{HelmReleases: "HelmReleaseList", Secrets: "SecretList", Namespaces: "NamespaceList"}
	other := obj(t, `{apiVersion: v1, kind: Secret, metadata: {name: mine, namespace: tenant-a}}`)
	c := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme, gvrs, obj(t, hrYAML), rec(t, "tenant-a", 1, "superseded"), rec(t, "tenant-a", 2, "deployed"), other)
	ctx := context.Background()
	p, err := Gather(ctx, c, "tenant-a")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Entries) != 1 || p.Entries[0].Action != ActionMove || len(p.Entries[0].Records) != 2 {
		t.Fatalf("plan = %+v", p)
	}
	if err := (&Applier{Client: c, FieldManager: "test"}).Apply(ctx, &p); err != nil {
		t.Fatal(err)
	}
	ns, err := c.Resource(Namespaces).Get(ctx, "cozy-helm-tenant-a", metav1.GetOptions{})
	if err != nil || ns.GetLabels()["apps.cozystack.io/platform-namespace"] != "Helm" || ns.GetLabels()["apps.cozystack.io/tenant-namespace"] != "tenant-a" {
		t.Fatalf("platform namespace = %v, %v", ns, err)
	}
	for _, n := range []string{"sh.helm.release.v1.app-web.v1", "sh.helm.release.v1.app-web.v2"} {
		cp, err := c.Resource(Secrets).Namespace("cozy-helm-tenant-a").Get(ctx, n, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		orig, _ := c.Resource(Secrets).Namespace("tenant-a").Get(ctx, n, metav1.GetOptions{})
		if !sameRecord(cp, orig) {
			t.Fatalf("copy of %s differs: %v", n, cp)
		}
	}
	if _, err := c.Resource(Secrets).Namespace("cozy-helm-tenant-a").Get(ctx, "mine", metav1.GetOptions{}); err == nil {
		t.Fatal("a Secret that is not a release record was copied")
	}
	hr, _ := c.Resource(HelmReleases).Namespace("tenant-a").Get(ctx, "app-web", metav1.GetOptions{})
	spec, _, _ := unstructured.NestedString(hr.Object, "spec", "storageNamespace")
	st, _, _ := unstructured.NestedString(hr.Object, "status", "storageNamespace")
	if spec != "cozy-helm-tenant-a" || st != "" {
		t.Fatalf("spec.storageNamespace = %q, status.storageNamespace = %q; want the platform namespace and empty", spec, st)
	}
	if !strings.Contains(p.Entries[0].Result, "moved") {
		t.Fatalf("result = %q", p.Entries[0].Result)
	}
	// A second run changes nothing.
	p2, err := Gather(ctx, c, "")
	if err != nil || len(p2.Entries) != 1 || p2.Entries[0].Action != ActionNone {
		t.Fatalf("second plan = %+v, %v", p2, err)
	}
}
