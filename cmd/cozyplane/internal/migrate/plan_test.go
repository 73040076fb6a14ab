package migrate

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
)

var t0 = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))

// legacyDef is a definition in upstream's form (spec.release), Ready.
func legacyDef(name, kind, plural, prefix string) cozyv1alpha1.ApplicationDefinition {
	d := cozyv1alpha1.ApplicationDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: name, Generation: 1, CreationTimestamp: t0},
		Spec: cozyv1alpha1.ApplicationDefinitionSpec{
			Application: cozyv1alpha1.ApplicationDefinitionApplication{Kind: kind, Plural: plural, Singular: strings.ToLower(kind)},
			Release: &cozyv1alpha1.ApplicationDefinitionRelease{HelmReleaseTemplate: cozyv1alpha1.HelmReleaseTemplate{
				ChartRef: &helmv2.CrossNamespaceSourceReference{Kind: "ExternalArtifact", Name: name, Namespace: "cozy-system"},
				Prefix:   prefix,
			}},
		},
	}
	return withReady(d, metav1.ConditionTrue, cozyv1alpha1.ReasonServed, "served")
}

func withReady(d cozyv1alpha1.ApplicationDefinition, st metav1.ConditionStatus, reason, msg string) cozyv1alpha1.ApplicationDefinition {
	d.Status.ObservedGeneration = d.Generation
	d.Status.Conditions = []metav1.Condition{{Type: cozyv1alpha1.ConditionReady, Status: st, Reason: reason, Message: msg}}
	return d
}

func terraformDef(name, kind, plural string) cozyv1alpha1.ApplicationDefinition {
	d := legacyDef(name, kind, plural, "")
	d.Spec.Release = nil
	d.Spec.Backend = &cozyv1alpha1.ApplicationBackend{Type: cozyv1alpha1.BackendTerraform, Terraform: &cozyv1alpha1.TerraformBackend{Prefix: "tf-"}}
	return d
}

// upstreamRelease is a HelmRelease as upstream's API writes it for
// <kind> <name> with prefix.
func upstreamRelease(ns, prefix, kind, name string) Release {
	return Release{
		Namespace: ns, Name: prefix + name, UID: types.UID("uid-" + ns + "-" + prefix + name), Generation: 1,
		Labels: map[string]string{
			"apps.cozystack.io/application.kind":  kind,
			"apps.cozystack.io/application.group": "apps.cozystack.io",
			"apps.cozystack.io/application.name":  name,
			"apps.cozystack.io-team":              "billing",
			"cozystack.io/ui":                     "true", // the definition's own label: not the tenant's
		},
		Annotations: map[string]string{
			"apps.cozystack.io-example.org/owner": "alice",
			"fluxcd.io/reconcileAt":               "x", // not the tenant's
		},
		Values: map[string]any{"replicas": int64(2), "_cluster": map[string]any{"root-host": "example.org"}, "storage": map[string]any{"_size": "1Gi"}},
	}
}

func instanceRef(kind, name string, uid types.UID) *metav1.OwnerReference {
	return &metav1.OwnerReference{APIVersion: "apps.cozystack.io/v1alpha1", Kind: kind, Name: name, UID: uid, Controller: ptr.To(true)}
}

func TestComputeEntries(t *testing.T) {
	pg := legacyDef("postgres", "Postgres", "postgreses", "postgres-")
	tf := terraformDef("vpc", "VPC", "vpcs")
	base := func(rs ...Release) Inputs {
		return Inputs{DefinitionsServed: true, Definitions: []cozyv1alpha1.ApplicationDefinition{pg, tf}, Releases: rs, InstancesListed: true}
	}
	r := upstreamRelease("tenant-a", "postgres-", "Postgres", "orders")

	tests := []struct {
		name      string
		in        Inputs
		action    Action
		reason    string
		instance  string
		msgSubstr string
	}{
		{name: "upstream's HelmRelease becomes an instance", in: base(r), action: ActionCreate, instance: "orders"},
		{name: "kind nobody serves", in: base(upstreamRelease("tenant-a", "redis-", "Redis", "cache")), action: ActionSkip, reason: SkipKindNotServed, msgSubstr: "no ApplicationDefinition serves kind Redis"},
		{name: "kind served by Terraform", in: base(upstreamRelease("tenant-a", "tf-", "VPC", "net")), action: ActionSkip, reason: SkipNotHelmBackend, msgSubstr: "Terraform backend"},
		{name: "name without the prefix", in: func() Inputs {
			x := upstreamRelease("tenant-a", "pg-", "Postgres", "stray")
			return base(x)
		}(), action: ActionSkip, reason: SkipNameMismatch, msgSubstr: "its name is not postgres-stray"},
		{name: "name label disagrees with the name", in: func() Inputs {
			x := upstreamRelease("tenant-a", "postgres-", "Postgres", "a")
			x.Labels["apps.cozystack.io/application.name"] = "b"
			return base(x)
		}(), action: ActionSkip, reason: SkipNameMismatch, msgSubstr: "postgres-b"},
		{name: "no name label", in: func() Inputs {
			x := upstreamRelease("tenant-a", "postgres-", "Postgres", "a")
			delete(x.Labels, "apps.cozystack.io/application.name")
			return base(x)
		}(), action: ActionSkip, reason: SkipNameMismatch},
		{name: "being deleted", in: func() Inputs {
			x := r
			x.Deleting = true
			return base(x)
		}(), action: ActionSkip, reason: SkipDeleting, instance: "orders"},
		{name: "values not an object", in: func() Inputs {
			x := r
			x.Values, x.ValuesError = nil, "is not an object"
			return base(x)
		}(), action: ActionSkip, reason: SkipInvalidValues},
		{name: "controlled by something else", in: func() Inputs {
			x := r
			x.Controller = &metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "x", UID: "cm", Controller: ptr.To(true)}
			return base(x)
		}(), action: ActionSkip, reason: SkipControlledElsewhere, msgSubstr: "ConfigMap x"},
		{name: "already adopted by its instance", in: func() Inputs {
			x := r
			x.Controller = instanceRef("Postgres", "orders", "inst")
			in := base(x)
			in.Instances = []Instance{{Kind: "Postgres", Namespace: "tenant-a", Name: "orders", UID: "inst", Adopt: string(r.UID)}}
			return in
		}(), action: ActionNone, instance: "orders"},
		{name: "controlled by a gone instance of the same name", in: func() Inputs {
			x := r
			x.Controller = instanceRef("Postgres", "orders", "old")
			in := base(x)
			in.Instances = []Instance{{Kind: "Postgres", Namespace: "tenant-a", Name: "orders", UID: "new", Adopt: string(r.UID)}}
			return in
		}(), action: ActionSkip, reason: SkipControlledElsewhere},
		{name: "instance created by an earlier run, not adopted yet", in: func() Inputs {
			in := base(r)
			in.Instances = []Instance{{Kind: "Postgres", Namespace: "tenant-a", Name: "orders", UID: "inst", Adopt: string(r.UID)}}
			return in
		}(), action: ActionWait, instance: "orders"},
		{name: "instance without proof", in: func() Inputs {
			in := base(r)
			in.Instances = []Instance{{Kind: "Postgres", Namespace: "tenant-a", Name: "orders", UID: "inst"}}
			return in
		}(), action: ActionSkip, reason: SkipInstanceConflict, msgSubstr: "without the adoption proof"},
		{name: "instance with another object's proof", in: func() Inputs {
			in := base(r)
			in.Instances = []Instance{{Kind: "Postgres", Namespace: "tenant-a", Name: "orders", UID: "inst", Adopt: "someone-else"}}
			return in
		}(), action: ActionSkip, reason: SkipInstanceConflict, msgSubstr: "uid someone-else"},
		{name: "instance being deleted", in: func() Inputs {
			in := base(r)
			in.Instances = []Instance{{Kind: "Postgres", Namespace: "tenant-a", Name: "orders", UID: "inst", Adopt: string(r.UID), Deleting: true}}
			return in
		}(), action: ActionSkip, reason: SkipInstanceConflict, msgSubstr: "being deleted"},
		{name: "an instance in another namespace does not matter", in: func() Inputs {
			in := base(r)
			in.Instances = []Instance{{Kind: "Postgres", Namespace: "tenant-b", Name: "orders", UID: "inst"}}
			return in
		}(), action: ActionCreate},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Compute(tt.in)
			if len(p.Entries) != 1 {
				t.Fatalf("entries %+v", p.Entries)
			}
			e := p.Entries[0]
			if e.Action != tt.action || e.Reason != tt.reason {
				t.Errorf("action %s (%s: %s), want %s (%s)", e.Action, e.Reason, e.Message, tt.action, tt.reason)
			}
			if tt.instance != "" && e.Instance != tt.instance {
				t.Errorf("instance %q, want %q", e.Instance, tt.instance)
			}
			if !strings.Contains(e.Message, tt.msgSubstr) {
				t.Errorf("message %q lacks %q", e.Message, tt.msgSubstr)
			}
			if len(p.Blockers) != 0 {
				t.Errorf("blockers %+v", p.Blockers)
			}
		})
	}
}

func TestComputeInstanceContent(t *testing.T) {
	pg := legacyDef("postgres", "Postgres", "postgreses", "postgres-")
	r := upstreamRelease("tenant-a", "postgres-", "Postgres", "orders")
	p := Compute(Inputs{DefinitionsServed: true, Definitions: []cozyv1alpha1.ApplicationDefinition{pg}, Releases: []Release{r}, InstancesListed: true})
	e := p.Entries[0]
	u := InstanceObject(&e)
	want := map[string]any{
		"apiVersion": "apps.cozystack.io/v1alpha1",
		"kind":       "Postgres",
		"metadata": map[string]any{
			"name":      "orders",
			"namespace": "tenant-a",
			"labels":    map[string]any{"team": "billing"},
			"annotations": map[string]any{
				"example.org/owner":       "alice",
				"apps.cozystack.io/adopt": "uid-tenant-a-postgres-orders",
			},
		},
		// Only top-level "_" keys are the platform's; nested ones are data.
		"spec": map[string]any{"replicas": int64(2), "storage": map[string]any{"_size": "1Gi"}},
	}
	if !reflect.DeepEqual(u.Object, want) {
		t.Errorf("instance\n got %v\nwant %v", u.Object, want)
	}
	if e.Plural() != "postgreses" {
		t.Errorf("plural %q", e.Plural())
	}
	// The plan never aliases the HelmRelease's values.
	u.Object["spec"].(map[string]any)["replicas"] = int64(9)
	if r.Values["replicas"] != int64(2) {
		t.Error("instance aliases the HelmRelease's values")
	}
}

func TestSpecFromValues(t *testing.T) {
	if SpecFromValues(nil) != nil {
		t.Error("no values: no spec")
	}
	got := SpecFromValues(map[string]any{"_only": 1})
	if got == nil || len(got) != 0 {
		t.Errorf("only platform keys: empty spec, got %v", got)
	}
}

func TestUnprefixed(t *testing.T) {
	got := Unprefixed(map[string]string{"apps.cozystack.io-a": "1", "apps.cozystack.io-b.c/d": "2", "apps.cozystack.io-": "empty key", "apps.cozystack.io/application.kind": "K", "x": "y"}, "apps.cozystack.io-")
	want := map[string]string{"a": "1", "b.c/d": "2"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v", got)
	}
	if Unprefixed(map[string]string{"x": "y"}, "apps.cozystack.io-") != nil {
		t.Error("nothing prefixed: nil")
	}
}

func TestComputeBlockers(t *testing.T) {
	pg := legacyDef("postgres", "Postgres", "postgreses", "postgres-")
	r := upstreamRelease("tenant-a", "postgres-", "Postgres", "orders")
	stray := upstreamRelease("tenant-a", "redis-", "Redis", "cache")
	upstream := &APIService{Name: "v1alpha1.apps.cozystack.io", Service: "cozy-system/cozystack-api"}
	local := &APIService{Name: "v1alpha1.apps.cozystack.io"}
	shadowedDef := withReady(pg, metav1.ConditionFalse, cozyv1alpha1.ReasonGroupShadowed, "APIService ... shadows")
	tests := []struct {
		name string
		in   Inputs
		want []string // "Reason Object", in order
		subs []string // in the text output
	}{
		{name: "ready to go", in: Inputs{DefinitionsServed: true, APIService: local, Definitions: []cozyv1alpha1.ApplicationDefinition{pg}, Releases: []Release{r}, InstancesListed: true}},
		{name: "no APIService at all is no blocker", in: Inputs{DefinitionsServed: true, Definitions: []cozyv1alpha1.ApplicationDefinition{pg}, Releases: []Release{r}, InstancesListed: true}},
		{name: "upstream's APIService; the definition's GroupShadowed is the same blocker",
			in:   Inputs{DefinitionsServed: true, APIService: upstream, Definitions: []cozyv1alpha1.ApplicationDefinition{shadowedDef}, Releases: []Release{r}},
			want: []string{"GroupShadowed APIService v1alpha1.apps.cozystack.io"},
			subs: []string{"sends every request for apps.cozystack.io/v1alpha1 to Service cozy-system/cozystack-api", "kubectl delete apiservice v1alpha1.apps.cozystack.io", "existing instances could not be listed"}},
		{name: "shadowed, and no appdef controller has looked at the definition",
			in: Inputs{DefinitionsServed: true, APIService: upstream, Definitions: []cozyv1alpha1.ApplicationDefinition{func() cozyv1alpha1.ApplicationDefinition {
				d := pg
				d.Status = cozyv1alpha1.ApplicationDefinitionStatus{}
				return d
			}()}, Releases: []Release{r}},
			want: []string{"GroupShadowed APIService v1alpha1.apps.cozystack.io", "DefinitionNotReady ApplicationDefinition postgres"},
			subs: []string{"has no Ready condition", "install and start the appdef controller"}},
		{name: "definition not Ready for its own reason",
			in:   Inputs{DefinitionsServed: true, Definitions: []cozyv1alpha1.ApplicationDefinition{withReady(pg, metav1.ConditionFalse, cozyv1alpha1.ReasonInvalidSchema, "bad field x")}, Releases: []Release{r, r}, InstancesListed: true},
			want: []string{"DefinitionNotReady ApplicationDefinition postgres"}, // once, for two releases
			subs: []string{"is not Ready: InvalidSchema: bad field x"}},
		{name: "GroupShadowed left over without an APIService still blocks",
			in:   Inputs{DefinitionsServed: true, Definitions: []cozyv1alpha1.ApplicationDefinition{shadowedDef}, Releases: []Release{r}, InstancesListed: true},
			want: []string{"DefinitionNotReady ApplicationDefinition postgres"}},
		{name: "definition changed, not served at that generation yet",
			in: Inputs{DefinitionsServed: true, Definitions: []cozyv1alpha1.ApplicationDefinition{func() cozyv1alpha1.ApplicationDefinition {
				d := pg
				d.Generation = 2
				return d
			}()}, Releases: []Release{r}, InstancesListed: true},
			want: []string{"DefinitionNotReady ApplicationDefinition postgres"},
			subs: []string{"generation 2"}},
		{name: "a definition not Ready blocks nothing when no release of its kind acts",
			in: Inputs{DefinitionsServed: true, Definitions: []cozyv1alpha1.ApplicationDefinition{withReady(pg, metav1.ConditionFalse, cozyv1alpha1.ReasonInvalidSchema, "x")}, Releases: []Release{func() Release {
				x := r
				x.Controller = instanceRef("Postgres", "orders", "")
				return x
			}()}}},
		{name: "decoys block nothing", in: Inputs{DefinitionsServed: true, Definitions: []cozyv1alpha1.ApplicationDefinition{pg}, Releases: []Release{r, stray}, InstancesListed: true}},
		{name: "no ApplicationDefinition API",
			in:   Inputs{APIService: upstream, Releases: []Release{r}},
			want: []string{"GroupShadowed APIService v1alpha1.apps.cozystack.io", "DefinitionsNotServed ApplicationDefinition API"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Compute(tt.in)
			var got []string
			for _, b := range p.Blockers {
				got = append(got, b.Reason+" "+b.Object)
				if b.Message == "" || b.Fix == "" {
					t.Errorf("blocker without message or fix: %+v", b)
				}
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("blockers\n got %q\nwant %q", got, tt.want)
			}
			var buf bytes.Buffer
			if err := WriteText(&buf, &p, false); err != nil {
				t.Fatal(err)
			}
			for _, s := range tt.subs {
				if !strings.Contains(buf.String(), s) {
					t.Errorf("output lacks %q:\n%s", s, buf.String())
				}
			}
		})
	}
}

func TestComputeSortsAndPicksTheServedDefinition(t *testing.T) {
	older := legacyDef("pg-old", "Postgres", "postgreses", "postgres-")
	older = withReady(older, metav1.ConditionFalse, cozyv1alpha1.ReasonInvalidSchema, "x")
	served := legacyDef("pg-served", "Postgres", "pgs", "pg-")
	served.CreationTimestamp = metav1.NewTime(t0.Add(time.Hour))
	in := Inputs{DefinitionsServed: true, Definitions: []cozyv1alpha1.ApplicationDefinition{older, served}, InstancesListed: true,
		Releases: []Release{upstreamRelease("b", "pg-", "Postgres", "x"), upstreamRelease("a", "pg-", "Postgres", "y"), upstreamRelease("a", "pg-", "Postgres", "x")}}
	p := Compute(in)
	var order []string
	for _, e := range p.Entries {
		order = append(order, e.HelmRelease.Namespace+"/"+e.HelmRelease.Name)
		if e.Definition != "pg-served" || e.Action != ActionCreate {
			t.Errorf("%+v", e)
		}
	}
	if strings.Join(order, ",") != "a/pg-x,a/pg-y,b/pg-x" {
		t.Errorf("order %v", order)
	}
	if len(p.Blockers) != 0 {
		t.Errorf("blockers %+v", p.Blockers)
	}
}

func TestExistingInstanceVerdict(t *testing.T) {
	for _, tt := range []struct {
		x    Instance
		want string
	}{
		{Instance{Kind: "K", Name: "a", Adopt: "u1"}, ""},
		{Instance{Kind: "K", Name: "a"}, "without the adoption proof"},
		{Instance{Kind: "K", Name: "a", Adopt: "u2"}, "another object (uid u2)"},
		{Instance{Kind: "K", Name: "a", Adopt: "u1", Deleting: true}, "being deleted"},
	} {
		err := ExistingInstanceVerdict(&tt.x, "u1")
		if (tt.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want %q", tt.x, err, tt.want)
		}
	}
}

func TestAdopted(t *testing.T) {
	for _, tt := range []struct {
		ref  *metav1.OwnerReference
		want bool
	}{
		{nil, false},
		{instanceRef("Postgres", "orders", "inst"), true},
		{instanceRef("Postgres", "orders", "other"), false},
		{instanceRef("Redis", "orders", "inst"), false},
		{instanceRef("Postgres", "billing", "inst"), false},
		// The controller takes another version of the group for the instance.
		{&metav1.OwnerReference{APIVersion: "apps.cozystack.io/v1beta1", Kind: "Postgres", Name: "orders", UID: "inst"}, true},
		// The instance's uid under another group is not the instance.
		{&metav1.OwnerReference{APIVersion: "evil.example.com/v1alpha1", Kind: "Postgres", Name: "orders", UID: "inst"}, false},
		{&metav1.OwnerReference{APIVersion: "Apps.Cozystack.io/v1alpha1", Kind: "Postgres", Name: "orders", UID: "inst"}, false},
		{&metav1.OwnerReference{APIVersion: "apps.cozystack.io", Kind: "Postgres", Name: "orders", UID: "inst"}, false},
	} {
		if got := Adopted(tt.ref, "Postgres", "orders", "inst"); got != tt.want {
			t.Errorf("%+v: %v", tt.ref, got)
		}
	}
}

func TestReleaseFrom(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
		"metadata": map[string]any{"name": "postgres-a", "namespace": "t", "uid": "u", "generation": int64(3),
			"ownerReferences": []any{
				map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "not-controller", "uid": "c1"},
				map[string]any{"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Postgres", "name": "a", "uid": "i", "controller": true},
			}},
		"spec": map[string]any{"values": map[string]any{"a": int64(1)}},
	}}
	r := ReleaseFrom(u)
	if r.Generation != 3 || r.UID != "u" || r.Values["a"] != int64(1) || r.Controller == nil || r.Controller.Name != "a" || r.Suspended {
		t.Errorf("%+v", r)
	}
	u.Object["spec"] = map[string]any{"suspend": true}
	if r := ReleaseFrom(u); !r.Suspended {
		t.Errorf("suspended: %+v", r)
	}
	u.Object["spec"] = map[string]any{"values": "text"}
	if r := ReleaseFrom(u); r.ValuesError == "" || r.Values != nil {
		t.Errorf("string values: %+v", r)
	}
	delete(u.Object, "spec")
	if r := ReleaseFrom(u); r.ValuesError != "" || r.Values != nil {
		t.Errorf("no spec: %+v", r)
	}
}

func TestInstanceFromReadsReady(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Postgres",
		"metadata": map[string]any{"name": "a", "namespace": "t", "uid": "i", "annotations": map[string]any{"apps.cozystack.io/adopt": "u"}},
		"status": map[string]any{"conditions": []any{
			map[string]any{"type": "Released", "status": "True", "reason": "x", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"},
			map[string]any{"type": "Ready", "status": "True", "reason": "InstallSucceeded", "message": "ok", "lastTransitionTime": "2026-01-01T00:00:00Z"},
		}},
	}}
	x := InstanceFrom(u)
	if x.Adopt != "u" || x.UID != "i" || x.Ready == nil || x.Ready.Reason != "InstallSucceeded" {
		t.Errorf("%+v", x)
	}
}

func TestWriteTextAfterApply(t *testing.T) {
	p := Plan{Entries: []Entry{
		{HelmRelease: Ref{Namespace: "t", Name: "postgres-a"}, Kind: "Postgres", Instance: "a", Action: ActionCreate, Result: ResultAdopted,
			InstanceReady: &metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "InstallSucceeded"}},
		{HelmRelease: Ref{Namespace: "t", Name: "pg-b"}, Kind: "Postgres", Action: ActionSkip, Reason: SkipNameMismatch, Message: "its name is not postgres-b"},
	}}
	var buf bytes.Buffer
	if err := WriteText(&buf, &p, true); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, s := range []string{"all namespaces: 1 to create", "RESULT", "adopted; Ready=True (InstallSucceeded)", "skip (NameMismatch)", "HelmRelease t/pg-b: NameMismatch: its name is not postgres-b"} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
}

// moduleRelease is a module HelmRelease as upstream's tenant chart renders it
// (packages/apps/tenant/templates/etcd.yaml): named as its kind's module, in
// the tenant's namespace, with Helm's marks naming the Tenant's release.
func moduleRelease(ns, name, kind, tenantRelease string) Release {
	return Release{
		Namespace: ns, Name: name, UID: types.UID("uid-" + ns + "-" + name), Generation: 1,
		Labels: map[string]string{
			"apps.cozystack.io/application.kind":  kind,
			"apps.cozystack.io/application.group": "apps.cozystack.io",
			"apps.cozystack.io/application.name":  name,
			"internal.cozystack.io/tenantmodule":  "true",
			"app.kubernetes.io/instance":          tenantRelease,
			"app.kubernetes.io/managed-by":        "Helm",
			"sharding.fluxcd.io/key":              "tenants",
		},
		Annotations: map[string]string{"meta.helm.sh/release-name": tenantRelease, "meta.helm.sh/release-namespace": "tenant-root"},
	}
}

// rootRelease is the root tenant's HelmRelease as cozystack-basics installs
// it (packages/system/cozystack-basics/templates/tenant-root.yaml).
func rootRelease() Release {
	return Release{
		Namespace: "tenant-root", Name: "tenant-root", UID: "uid-root", Generation: 1,
		Labels: map[string]string{
			"apps.cozystack.io/application.kind":  "Tenant",
			"apps.cozystack.io/application.group": "apps.cozystack.io",
			"apps.cozystack.io/application.name":  "tenant-root",
			"app.kubernetes.io/managed-by":        "Helm",
		},
		Annotations: map[string]string{"meta.helm.sh/release-name": "cozystack-basics", "meta.helm.sh/release-namespace": "cozy-system",
			"helm.sh/resource-policy": "keep"},
	}
}

func TestComputeHelmManagedAndRoot(t *testing.T) {
	defs := []cozyv1alpha1.ApplicationDefinition{
		legacyDef("tenant", "Tenant", "tenants", "tenant-"),
		legacyDef("etcd", "Etcd", "etcds", ""),
		legacyDef("postgres", "Postgres", "postgreses", "postgres-"),
		terraformDef("vpc", "VPC", "vpcs"),
	}
	etcd := moduleRelease("tenant-foo", "etcd", "Etcd", "tenant-foo")
	tests := []struct {
		name    string
		r       Release
		action  Action
		reason  string
		want    []string
		notWant []string
	}{
		{name: "a tenant module is left to the tenant chart", r: etcd, action: ActionSkip, reason: SkipManagedByHelm,
			want: []string{"a tenant module rendered by the Helm release tenant-root/tenant-foo", "chooses its values, timeouts and suspend",
				"recreate it after Helm deleted it", "turn the module on or off, and change it, through its Tenant"},
			notWant: []string{"--cascade=orphan"}},
		{name: "a module an earlier migrate adopted: how to hand it back", r: func() Release {
			x := etcd
			x.Controller = instanceRef("Etcd", "etcd", "inst")
			return x
		}(), action: ActionSkip, reason: SkipManagedByHelm,
			want: []string{"controlled by Etcd etcd already", "kubectl delete etcds etcd -n tenant-foo --cascade=orphan"}},
		{name: "any Helm-managed release, by its annotation", r: func() Release {
			x := upstreamRelease("tenant-a", "postgres-", "Postgres", "orders")
			x.Annotations = map[string]string{"meta.helm.sh/release-name": "bundle", "meta.helm.sh/release-namespace": "cozy-system"}
			return x
		}(), action: ActionSkip, reason: SkipManagedByHelm, want: []string{"rendered by the Helm release cozy-system/bundle", "change it through that release's values"}},
		{name: "any Helm-managed release, by its label alone", r: func() Release {
			x := upstreamRelease("tenant-a", "postgres-", "Postgres", "orders")
			x.Labels["app.kubernetes.io/managed-by"] = "Helm"
			return x
		}(), action: ActionSkip, reason: SkipManagedByHelm, want: []string{"rendered by a Helm release (label app.kubernetes.io/managed-by=Helm)"}},
		{name: "managed-by another tool is not Helm's", r: func() Release {
			x := upstreamRelease("tenant-a", "postgres-", "Postgres", "orders")
			x.Labels["app.kubernetes.io/managed-by"] = "cozystack"
			return x
		}(), action: ActionCreate},
		{name: "the root tenant", r: rootRelease(), action: ActionSkip, reason: SkipRootTenant,
			want: []string{"the root tenant, installed by cozystack-basics (Helm release cozy-system/cozystack-basics)",
				"`kubectl get tenants -n tenant-root root` finds nothing once upstream's API is gone",
				"kubectl get helmrelease -n tenant-root tenant-root", "kubectl patch helmrelease -n tenant-root tenant-root --type=merge",
				"delete the root tenant and every tenant under it"}},
		{name: "the root tenant without Helm's marks", r: func() Release {
			x := rootRelease()
			x.Annotations, x.Labels["app.kubernetes.io/managed-by"] = nil, ""
			return x
		}(), action: ActionSkip, reason: SkipRootTenant, want: []string{"installed by cozystack-basics with its own"}},
		{name: "a child tenant upstream's API wrote becomes an instance", r: upstreamRelease("tenant-root", "tenant-", "Tenant", "foo"), action: ActionCreate},
		{name: "a suspended release is adopted, its suspend kept", r: func() Release {
			x := upstreamRelease("tenant-foo", "postgres-", "Postgres", "db")
			x.Suspended = true
			return x
		}(), action: ActionCreate, want: []string{"spec.suspend=true is kept", "SuspendedExternally"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Compute(Inputs{DefinitionsServed: true, Definitions: defs, Releases: []Release{tt.r}, InstancesListed: true})
			if len(p.Entries) != 1 {
				t.Fatalf("entries %+v", p.Entries)
			}
			e := p.Entries[0]
			if e.Action != tt.action || e.Reason != tt.reason {
				t.Errorf("action %s (%s: %s), want %s (%s)", e.Action, e.Reason, e.Message, tt.action, tt.reason)
			}
			for _, s := range tt.want {
				if !strings.Contains(e.Message, s) {
					t.Errorf("message lacks %q: %s", s, e.Message)
				}
			}
			for _, s := range tt.notWant {
				if strings.Contains(e.Message, s) {
					t.Errorf("message has %q: %s", s, e.Message)
				}
			}
			if e.Action == ActionSkip && (e.Spec != nil || e.Annotations != nil) {
				t.Errorf("a skipped release gets an instance: %+v", e)
			}
		})
	}
}

func TestWriteTextSaysWhatHappensToEachRelease(t *testing.T) {
	defs := []cozyv1alpha1.ApplicationDefinition{legacyDef("tenant", "Tenant", "tenants", "tenant-"), legacyDef("etcd", "Etcd", "etcds", "")}
	suspended := upstreamRelease("tenant-root", "tenant-", "Tenant", "foo")
	suspended.Suspended = true
	p := Compute(Inputs{DefinitionsServed: true, Definitions: defs, InstancesListed: true,
		Releases: []Release{rootRelease(), moduleRelease("tenant-foo", "etcd", "Etcd", "tenant-foo"), suspended}})
	var buf bytes.Buffer
	if err := WriteText(&buf, &p, false); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, s := range []string{"1 to create, 0 waiting for adoption, 0 already adopted, 2 left alone",
		"skip (ManagedByHelm)", "skip (RootTenant)",
		"Adopted as their owner left them:\n  - HelmRelease tenant-root/tenant-foo: its spec.suspend=true is kept",
		"HelmRelease tenant-foo/etcd: ManagedByHelm: a tenant module", "HelmRelease tenant-root/tenant-root: RootTenant: the root tenant"} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
}
