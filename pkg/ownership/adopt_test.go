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
