package controller

import (
	"context"
	"strings"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/testenv"
)

// TestSourceNotPlatformOwned: the CRD refuses a definition whose valuesFrom
// names an object a tenant can create; one stored before that rule (the
// rules are taken out of the CRD while it is written) keeps its kind served,
// reports SourceNotPlatformOwned naming the entry, can still be changed in
// other fields (CRD validation ratcheting), and is served again once fixed.
func TestSourceNotPlatformOwned(t *testing.T) {
	ctx := context.Background()
	def := newHelmDef("it-sources", "ItSources", "itsources", `{"type":"object"}`)
	def.Spec.Backend.Helm.ValuesFrom = []helmv2.ValuesReference{{Kind: "ConfigMap", Name: "platform-defaults"}}

	err := k8s.Create(ctx, def.DeepCopy())
	if err == nil || !strings.Contains(err.Error(), "valuesFrom names ConfigMap platform-defaults, which a tenant can create in its namespace") {
		t.Fatalf("creating a definition with a tenant-creatable values source: %v, want the CRD's refusal", err)
	}

	cleanup(t, def.Name)
	if err := testenv.StoreUnchecked(ctx, k8s, "applicationdefinitions.cozystack.io", def); err != nil {
		t.Fatal(err)
	}
	d := waitReason(t, def.Name, cozyv1alpha1.ReasonSourceNotPlatformOwned, metav1.ConditionFalse)
	for _, w := range []string{"CRD itsources.apps.cozystack.io serves kind ItSources, but no backing object is written",
		"spec.backend.helm.valuesFrom[0] (ConfigMap platform-defaults) is not a platform values object", cozyv1alpha1.SourceFix} {
		if !strings.Contains(readyMessage(d), w) {
			t.Errorf("Ready message %q lacks %q", readyMessage(d), w)
		}
	}
	if _, ok := getCRD(t, "itsources.apps.cozystack.io"); !ok {
		t.Error("the kind is no longer served")
	}

	// Ratcheting: the stored source stays acceptable while unchanged...
	if err := update(t, def.Name, func(d *cozyv1alpha1.ApplicationDefinition) { d.Spec.Backend.Helm.Prefix = "its-" }); err != nil {
		t.Fatalf("changing the prefix of a stored definition: %v", err)
	}
	// ...but a changed one is checked.
	err = update(t, def.Name, func(d *cozyv1alpha1.ApplicationDefinition) {
		d.Spec.Backend.Helm.ValuesFrom = []helmv2.ValuesReference{{Kind: "Secret", Name: "overrides"}}
	})
	if err == nil || !strings.Contains(err.Error(), "valuesFrom names Secret overrides") {
		t.Fatalf("changing valuesFrom to another tenant-creatable name: %v, want the CRD's refusal", err)
	}

	if err := update(t, def.Name, func(d *cozyv1alpha1.ApplicationDefinition) {
		d.Spec.Backend.Helm.ValuesFrom = []helmv2.ValuesReference{{Kind: "ConfigMap", Name: "cozystack-values-defaults"}}
	}); err != nil {
		t.Fatalf("fixing the definition: %v", err)
	}
	waitReason(t, def.Name, cozyv1alpha1.ReasonServed, metav1.ConditionTrue)
}
