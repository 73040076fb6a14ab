package ownership

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

func TestDecide(t *testing.T) {
	owner := Owner{GVK: schema.GroupVersionKind{Group: "apps.cozystack.io", Version: "v1alpha1", Kind: "Postgres"}, Name: "db", UID: "inst-1"}
	ours := ControllerRef(owner)
	theirs := ControllerRef(Owner{GVK: owner.GVK, Name: "other", UID: "inst-2"})
	plain := ours
	plain.Controller = nil
	// forged: a controller reference carrying the owner's uid, changed by f.
	forged := func(f func(*metav1.OwnerReference)) metav1.OwnerReference {
		r := ControllerRef(owner)
		f(&r)
		return r
	}
	otherVersion := forged(func(r *metav1.OwnerReference) { r.APIVersion = "apps.cozystack.io/v1beta1" })
	appLabels := map[string]string{
		"apps.cozystack.io/application.kind":  "Postgres",
		"apps.cozystack.io/application.group": "apps.cozystack.io",
		"apps.cozystack.io/application.name":  "db",
	}
	with := func(k, v string) map[string]string {
		out := map[string]string{}
		for kk, vv := range appLabels {
			out[kk] = vv
		}
		if v == "" {
			delete(out, k)
		} else {
			out[k] = v
		}
		return out
	}
	obj := func(uid string, labels map[string]string, refs ...metav1.OwnerReference) *metav1.ObjectMeta {
		return &metav1.ObjectMeta{Name: "postgres-db", Namespace: "tenant-a", UID: types.UID(uid), Labels: labels, OwnerReferences: refs}
	}
	proof := Claim{Owner: owner, AdoptUID: "hr-1", AdoptLabels: appLabels, Hint: "run cozyplane migrate"}
	noProof := Claim{Owner: owner, AdoptLabels: appLabels, Hint: "run cozyplane migrate"}

	tests := []struct {
		name     string
		existing metav1.Object
		claim    Claim
		want     Verdict
		wantErr  []string
	}{
		{"nothing there", nil, proof, Absent, nil},
		{"nothing there, typed nil", (*metav1.ObjectMeta)(nil), proof, Absent, nil},
		{"already ours", obj("hr-1", appLabels, ours), noProof, Controlled, nil},
		{"already ours, proof still present", obj("hr-1", appLabels, ours), proof, Controlled, nil},
		{"upstream-written, proof matches", obj("hr-1", appLabels), proof, Adopt, nil},
		{"upstream-written, non-controller owner reference does not block", obj("hr-1", appLabels, plain), proof, Adopt, nil},
		{"ours under another version of the group", obj("hr-1", appLabels, otherVersion), noProof, Controlled, nil},
		{"owner's uid under another API group", obj("hr-1", nil, forged(func(r *metav1.OwnerReference) { r.APIVersion = "evil.example.com/v1" })), noProof, Foreign,
			[]string{"is controlled by Postgres db (apiVersion evil.example.com/v1)", "does not name the owner", `API group "evil.example.com" (want "apps.cozystack.io")`}},
		{"owner's uid under the group in other case", obj("hr-1", nil, forged(func(r *metav1.OwnerReference) { r.APIVersion = "Apps.Cozystack.io/v1alpha1" })), noProof, Foreign,
			[]string{"does not name the owner", `API group "Apps.Cozystack.io" (want "apps.cozystack.io")`}},
		{"owner's uid under the group without a version", obj("hr-1", nil, forged(func(r *metav1.OwnerReference) { r.APIVersion = "apps.cozystack.io" })), noProof, Foreign,
			[]string{"does not name the owner", `API group "" (want "apps.cozystack.io")`}},
		{"owner's uid under an unparsable apiVersion", obj("hr-1", nil, forged(func(r *metav1.OwnerReference) { r.APIVersion = "apps.cozystack.io/v1/x" })), noProof, Foreign,
			[]string{"does not name the owner", `apiVersion "apps.cozystack.io/v1/x" cannot be parsed`}},
		{"owner's uid under another kind", obj("hr-1", appLabels, forged(func(r *metav1.OwnerReference) { r.Kind = "MySQL" })), noProof, Foreign,
			[]string{"is controlled by MySQL db", "does not name the owner", `kind "MySQL" (want "Postgres")`}},
		{"owner's uid under another name", obj("hr-1", appLabels, forged(func(r *metav1.OwnerReference) { r.Name = "db2" })), noProof, Foreign,
			[]string{"does not name the owner", `name "db2" (want "db")`}},
		{"owner's uid under another group, kind and name, with a proof", obj("hr-1", appLabels, forged(func(r *metav1.OwnerReference) {
			r.APIVersion, r.Kind, r.Name = "evil.example.com/v1", "Evil", "x"
		})), proof, Foreign,
			[]string{`API group "evil.example.com" (want "apps.cozystack.io"), kind "Evil" (want "Postgres"), name "x" (want "db")`,
				"it has a controller, so the adoption proof does not apply"}},
		{"no proof", obj("hr-1", appLabels), noProof, Foreign,
			[]string{"HelmRelease tenant-a/postgres-db already exists and has no controller owner", "run cozyplane migrate"}},
		{"proof for another object (recreated under the same name)", obj("hr-9", appLabels), proof, Foreign,
			[]string{"not adopted: the adoption proof names uid hr-1 but this object's uid is hr-9", "run cozyplane migrate"}},
		{"controlled by another instance", obj("hr-1", appLabels, theirs), proof, Foreign,
			[]string{"is controlled by Postgres other", "it has a controller, so the adoption proof does not apply"}},
		{"written for another instance name", obj("hr-1", with("apps.cozystack.io/application.name", "db2")), proof, Foreign,
			[]string{`apps.cozystack.io/application.name is "db2" (want "db")`}},
		{"written for another kind", obj("hr-1", with("apps.cozystack.io/application.kind", "MySQL")), proof, Foreign,
			[]string{`apps.cozystack.io/application.kind is "MySQL" (want "Postgres")`}},
		{"application group missing", obj("hr-1", with("apps.cozystack.io/application.group", "")), proof, Foreign,
			[]string{`apps.cozystack.io/application.group is missing (want "apps.cozystack.io")`}},
		{"no labels at all", obj("hr-1", nil), proof, Foreign,
			[]string{"its labels do not name this owner", "application.kind is missing", "application.name is missing"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Decide("HelmRelease", tt.existing, tt.claim)
			if got != tt.want {
				t.Fatalf("verdict %v, want %v (err %v)", got, tt.want, err)
			}
			if (err != nil) != (tt.want == Foreign) {
				t.Fatalf("error %v for verdict %v", err, got)
			}
			if err != nil && !IsNotOwned(err) {
				t.Fatalf("error %T is not a NotOwnedError", err)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("message %q lacks %q", err.Error(), w)
				}
			}
		})
	}
}

func TestOwnerIs(t *testing.T) {
	owner := Owner{GVK: schema.GroupVersionKind{Group: "apps.cozystack.io", Version: "v1alpha1", Kind: "Postgres"}, Name: "db", UID: "inst-1"}
	core := Owner{GVK: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, Name: "cm", UID: "cm-1"}
	ref := func(apiVersion, kind, name, uid string) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: types.UID(uid)}
	}
	tests := []struct {
		name  string
		owner Owner
		ref   metav1.OwnerReference
		want  bool
	}{
		{"the owner", owner, ref("apps.cozystack.io/v1alpha1", "Postgres", "db", "inst-1"), true},
		{"another version of its group", owner, ref("apps.cozystack.io/v1", "Postgres", "db", "inst-1"), true},
		{"another group", owner, ref("evil.example.com/v1alpha1", "Postgres", "db", "inst-1"), false},
		{"its group in upper case", owner, ref("Apps.Cozystack.io/v1alpha1", "Postgres", "db", "inst-1"), false},
		{"its group without a version", owner, ref("apps.cozystack.io", "Postgres", "db", "inst-1"), false},
		{"a subdomain of its group", owner, ref("x.apps.cozystack.io/v1alpha1", "Postgres", "db", "inst-1"), false},
		{"unparsable apiVersion", owner, ref("apps.cozystack.io/v1alpha1/x", "Postgres", "db", "inst-1"), false},
		{"another kind", owner, ref("apps.cozystack.io/v1alpha1", "postgres", "db", "inst-1"), false},
		{"another name", owner, ref("apps.cozystack.io/v1alpha1", "Postgres", "db2", "inst-1"), false},
		{"another uid", owner, ref("apps.cozystack.io/v1alpha1", "Postgres", "db", "inst-2"), false},
		{"no uid on either side", Owner{GVK: owner.GVK, Name: "db"}, ref("apps.cozystack.io/v1alpha1", "Postgres", "db", ""), false},
		{"a core owner", core, ref("v1", "ConfigMap", "cm", "cm-1"), true},
		{"a core owner named under a group", core, ref("evil.example.com/v1", "ConfigMap", "cm", "cm-1"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.owner.Is(tt.ref); got != tt.want {
				t.Errorf("Is(%+v) = %v, want %v", tt.ref, got, tt.want)
			}
			c := tt.ref
			c.Controller = ptrTo(true)
			obj := &metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{c}}
			if got := IsControlledBy(obj, tt.owner); got != tt.want {
				t.Errorf("IsControlledBy = %v, want %v", got, tt.want)
			}
			c.Controller = nil
			obj.OwnerReferences = []metav1.OwnerReference{c}
			if IsControlledBy(obj, tt.owner) {
				t.Error("IsControlledBy is true for a reference that is not a controller")
			}
		})
	}
}

func ptrTo[T any](v T) *T { return &v }
