package controller

import (
	"context"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	cozyschema "github.com/cozyplane/cozyplane/pkg/schema"
)

// instanceKeysCovers reports whether the instance keys policy lists plural.
func instanceKeysCovers(t *testing.T, plural string) (bool, string) {
	t.Helper()
	p := &admissionregistrationv1.ValidatingAdmissionPolicy{}
	if err := k8s.Get(context.Background(), types.NamespacedName{Name: InstanceKeysPolicy}, p); err != nil {
		t.Fatalf("policy: %v", err)
	}
	first := p.Spec.MatchConditions[0].Expression
	return strings.Contains(first, "'"+plural+"'"), first
}

func TestFreeFormTerraformKindGetsAPolicy(t *testing.T) {
	ctx := context.Background()
	def := newTerraformDef("it-free", "ItFree", "itfrees", `{"type":"object","additionalProperties":true}`)
	create(t, def)
	cleanup(t, def.Name)
	waitReason(t, def.Name, cozyv1alpha1.ReasonServed, metav1.ConditionTrue)

	if ok, got := instanceKeysCovers(t, "itfrees"); !ok {
		t.Fatalf("the instance keys policy does not cover itfrees: %s", got)
	}
	// The policy takes a moment to be enforced.
	eventually(t, "invalid variable name refused", func() (bool, string) {
		err := k8s.Create(ctx, newInstance("ItFree", "bad", map[string]any{"Bad-Key": "x"}))
		if err == nil {
			_ = k8s.Delete(ctx, newInstance("ItFree", "bad", nil))
			return false, "accepted"
		}
		return strings.Contains(err.Error(), "Bad-Key") && strings.Contains(err.Error(), cozyschema.HCLIdentifierPattern), err.Error()
	})
	if err := k8s.Create(ctx, newInstance("ItFree", "good", map[string]any{"good_key": map[string]any{"Any-Nested": 1}})); err != nil {
		t.Errorf("valid instance refused: %v", err)
	}
	_ = k8s.Delete(ctx, newInstance("ItFree", "good", nil))

	// Closing the schema takes the kind out of the policy: CRD rules suffice.
	if err := update(t, def.Name, func(d *cozyv1alpha1.ApplicationDefinition) {
		d.Spec.Application.OpenAPISchema = `{"type":"object","properties":{"region":{"type":"string"}}}`
	}); err != nil {
		t.Fatal(err)
	}
	waitReason(t, def.Name, cozyv1alpha1.ReasonServed, metav1.ConditionTrue)
	eventually(t, "kind out of the policy", func() (bool, string) {
		ok, got := instanceKeysCovers(t, "itfrees")
		return !ok, got
	})
}

// TestMissingPolicyHoldsFreeFormKinds: without the instance keys policy (or
// its binding), which the controller may not create, a free-form kind is not
// served (PolicyMissing) while a kind whose CRD checks itself is; once the
// policy is back, the free-form kind is served and covered.
func TestMissingPolicyHoldsFreeFormKinds(t *testing.T) {
	ctx := context.Background()
	_, binding := instanceKeysObjects(t)
	if err := k8s.Delete(ctx, binding); err != nil {
		t.Fatal(err)
	}
	restored := false
	restore := func() {
		if !restored {
			restored = true
			_, binding := instanceKeysObjects(t)
			if err := k8s.Create(ctx, binding); err != nil {
				t.Errorf("restoring the binding: %v", err)
			}
		}
	}
	t.Cleanup(restore)

	free := newHelmDef("it-nopolicy", "ItNoPolicy", "itnopolicies", `{"type":"object","x-kubernetes-preserve-unknown-fields":true}`)
	closed := newHelmDef("it-closed", "ItClosed", "itcloseds", `{"type":"object","properties":{"a":{"type":"string"}}}`)
	create(t, free)
	cleanup(t, free.Name)
	create(t, closed)
	cleanup(t, closed.Name)
	d := waitReason(t, free.Name, ReasonPolicyMissing, metav1.ConditionFalse)
	if msg := readyMessage(d); !strings.Contains(msg, "ValidatingAdmissionPolicyBinding "+InstanceKeysPolicy) {
		t.Errorf("message does not name the missing binding: %s", msg)
	}
	if _, found := getCRD(t, "itnopolicies.apps.cozystack.io"); found {
		t.Error("a free-form kind was served without its policy")
	}
	waitReason(t, closed.Name, cozyv1alpha1.ReasonServed, metav1.ConditionTrue)

	restore()
	waitReason(t, free.Name, cozyv1alpha1.ReasonServed, metav1.ConditionTrue)
	if ok, got := instanceKeysCovers(t, "itnopolicies"); !ok {
		t.Errorf("not covered once the policy is back: %s", got)
	}
}
