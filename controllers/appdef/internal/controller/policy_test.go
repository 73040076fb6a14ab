package controller

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	cozyschema "github.com/cozyplane/cozyplane/pkg/schema"
	"github.com/cozyplane/cozyplane/pkg/testenv"
)

// kindPolicy is the policy pkg/schema builds for one free-form kind.
func kindPolicy(t *testing.T, def *cozyv1alpha1.ApplicationDefinition) *admissionregistrationv1.ValidatingAdmissionPolicy {
	t.Helper()
	objs, err := cozyschema.Build(def)
	if err != nil {
		t.Fatal(err)
	}
	if objs.Policy == nil {
		t.Fatalf("%s: no policy built", def.Name)
	}
	return objs.Policy
}

func TestInstanceKeysPolicy(t *testing.T) {
	const free = `{"type":"object","additionalProperties":true}`
	helm := kindPolicy(t, newHelmDef("a", "Aa", "aas", free))
	tf := kindPolicy(t, newTerraformDef("b", "Bb", "bbs", free))
	reserved, variables := helm.Spec.Validations[0].Expression, tf.Spec.Validations[1].Expression
	specChanged := helm.Spec.MatchConditions[0].Expression

	cases := []struct {
		name   string
		checks []keyCheck
		// want: match conditions and validation expressions, in order
		conds, vals []string
		// want: the resources matchConstraints take in
		resources []string
	}{{
		name:      "no kind matches nothing",
		conds:     []string{"request.resource.resource in []"},
		resources: []string{NoFreeFormKind},
		vals:      []string{"true"},
	}, {
		name:      "one Helm kind: its rules as they are",
		checks:    []keyCheck{{"aas", helm}},
		conds:     []string{"request.resource.resource in ['aas']", specChanged},
		vals:      []string{reserved},
		resources: []string{"aas"},
	}, {
		name:      "Helm and Terraform kinds: the shared rule once, the Terraform rule guarded",
		checks:    []keyCheck{{"bbs", tf}, {"aas", helm}},
		conds:     []string{"request.resource.resource in ['aas', 'bbs']", specChanged},
		vals:      []string{reserved, "!(request.resource.resource in ['bbs']) || (" + variables + ")"},
		resources: []string{"aas", "bbs"},
	}, {
		name:      "two Terraform kinds and one Helm kind",
		checks:    []keyCheck{{"ccs", tf}, {"aas", helm}, {"bbs", tf}},
		conds:     []string{"request.resource.resource in ['aas', 'bbs', 'ccs']", specChanged},
		vals:      []string{reserved, "!(request.resource.resource in ['bbs', 'ccs']) || (" + variables + ")"},
		resources: []string{"aas", "bbs", "ccs"},
	}, {
		name:      "a plural listed twice (a renamed kind's old CRD) counts once",
		checks:    []keyCheck{{"bbs", tf}, {"bbs", tf}},
		conds:     []string{"request.resource.resource in ['bbs']", specChanged},
		vals:      []string{reserved, variables},
		resources: []string{"bbs"},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := instanceKeysPolicy(c.checks)
			if p.Name != InstanceKeysPolicy {
				t.Errorf("name %q", p.Name)
			}
			var conds, vals []string
			for _, m := range p.Spec.MatchConditions {
				conds = append(conds, m.Expression)
			}
			for _, v := range p.Spec.Validations {
				vals = append(vals, v.Expression)
			}
			if strings.Join(conds, "\n") != strings.Join(c.conds, "\n") {
				t.Errorf("match conditions:\n%s\nwant:\n%s", strings.Join(conds, "\n"), strings.Join(c.conds, "\n"))
			}
			if strings.Join(vals, "\n") != strings.Join(c.vals, "\n") {
				t.Errorf("validations:\n%s\nwant:\n%s", strings.Join(vals, "\n"), strings.Join(c.vals, "\n"))
			}
			rr := p.Spec.MatchConstraints.ResourceRules
			if len(rr) != 1 || strings.Join(rr[0].APIGroups, ",") != "apps.cozystack.io" {
				t.Fatalf("matches %+v, want apps.cozystack.io only", rr)
			}
			if got, want := strings.Join(rr[0].Resources, ","), strings.Join(c.resources, ","); got != want {
				t.Errorf("matches the resources %s, want %s", got, want)
			}
		})
	}
}

func TestKeyChecksSkipClashLosersAndClosedKinds(t *testing.T) {
	const free = `{"type":"object","additionalProperties":true}`
	older := newHelmDef("old", "Dup", "dups", free)
	older.CreationTimestamp = metav1.Unix(1, 0)
	younger := newTerraformDef("young", "Dup", "dups", free)
	younger.CreationTimestamp = metav1.Unix(2, 0)
	closed := newHelmDef("closed", "Closed", "closeds", `{"type":"object","properties":{"a":{"type":"string"}}}`)
	broken := newHelmDef("broken", "Broken", "brokens", `{`)
	got := keyChecks([]cozyv1alpha1.ApplicationDefinition{*older, *younger, *closed, *broken}, nil, cozyschema.Build)
	if len(got) != 1 || got[0].plural != "dups" || len(got[0].policy.Spec.Validations) != 1 {
		t.Fatalf("got %+v, want the older Helm kind only", got)
	}
}

// instanceKeysObjects reads the policy and binding as the policies chart
// installs them.
func instanceKeysObjects(t testing.TB) (*admissionregistrationv1.ValidatingAdmissionPolicy, *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "policies", "appdef-instance-keys.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(string(b), "\n---\n")
	if len(docs) != 2 {
		t.Fatalf("want a policy and a binding, got %d documents", len(docs))
	}
	p := &admissionregistrationv1.ValidatingAdmissionPolicy{}
	bd := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
	if err := yaml.UnmarshalStrict([]byte(docs[0]), p); err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict([]byte(docs[1]), bd); err != nil {
		t.Fatal(err)
	}
	return p, bd
}

// TestInstalledPolicyIsTheEmptyOne: the policies chart installs exactly what
// the controller writes when no kind is free-form, so the first apply only
// fills in kinds, and the binding bounds the policy to apps.cozystack.io.
func TestInstalledPolicyIsTheEmptyOne(t *testing.T) {
	p, b := instanceKeysObjects(t)
	want := instanceKeysPolicy(nil)
	if p.Name != want.Name || !equality.Semantic.DeepEqual(p.Spec, want.Spec) {
		t.Errorf("policies/appdef-instance-keys.yaml:\n%+v\nwant:\n%+v", p.Spec, want.Spec)
	}
	if b.Name != InstanceKeysPolicy || b.Spec.PolicyName != InstanceKeysPolicy {
		t.Errorf("binding %s of %s", b.Name, b.Spec.PolicyName)
	}
	if b.Spec.ParamRef != nil || len(b.Spec.ValidationActions) != 1 || b.Spec.ValidationActions[0] != admissionregistrationv1.Deny {
		t.Errorf("binding must deny, without params: %+v", b.Spec)
	}
	mr := b.Spec.MatchResources
	if mr == nil || len(mr.ResourceRules) != 1 || strings.Join(mr.ResourceRules[0].APIGroups, ",") != "apps.cozystack.io" ||
		mr.ResourceRules[0].Scope == nil || *mr.ResourceRules[0].Scope != admissionregistrationv1.NamespacedScope {
		t.Errorf("binding must limit the policy to namespaced apps.cozystack.io resources: %+v", mr)
	}
}
