package tenantgateway

import (
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
)

func TestPlanNamespaces(t *testing.T) {
	const owner = "tenant-root"
	ns := func(name, label, by string) NamespaceState {
		s := NamespaceState{Name: name, Labels: map[string]string{}, Annotations: map[string]string{}}
		if label != "" {
			s.Labels[gatewayv1alpha1.LabelNamespaceGateway] = label
		}
		if by != "" {
			s.Annotations[gatewayv1alpha1.AnnotationAttachedBy] = by
		}
		return s
	}
	tests := []struct {
		name       string
		wanted     []string
		namespaces []NamespaceState
		want       NamespacePlan
	}{
		{"attach the owner and the listed namespaces", []string{owner, "cozy-dashboard", "cozy-keycloak"},
			[]NamespaceState{ns(owner, "", ""), ns("cozy-keycloak", "", ""), ns("cozy-dashboard", "", "")},
			NamespacePlan{Attach: []string{"cozy-dashboard", "cozy-keycloak", owner}}},
		{"already attached by us: nothing", []string{owner, "cozy-dashboard"},
			[]NamespaceState{ns(owner, owner, owner), ns("cozy-dashboard", owner, owner)}, NamespacePlan{}},
		{"chart label with our value is attached and left alone", []string{owner, "tenant-alice"},
			[]NamespaceState{ns(owner, owner, ""), ns("tenant-alice", owner, "")}, NamespacePlan{}},
		{"chart label with another value is a conflict", []string{owner, "tenant-bob"},
			[]NamespaceState{ns(owner, owner, ""), ns("tenant-bob", "tenant-other", "")},
			NamespacePlan{Conflicts: []NamespaceConflict{{Name: "tenant-bob", Value: "tenant-other"}}}},
		{"another owner's attachment is a conflict", []string{owner, "cozy-shared"},
			[]NamespaceState{ns(owner, owner, ""), ns("cozy-shared", "tenant-b", "tenant-b")},
			NamespacePlan{Conflicts: []NamespaceConflict{{Name: "cozy-shared", Value: "tenant-b", AttachedBy: "tenant-b"}}}},
		{"dropped from the list: detached", []string{owner},
			[]NamespaceState{ns(owner, owner, owner), ns("cozy-dashboard", owner, owner)},
			NamespacePlan{Detach: []Detach{{Name: "cozy-dashboard", RemoveLabel: true}}}},
		{"dropped, label changed since: annotation only", []string{owner},
			[]NamespaceState{ns(owner, owner, owner), ns("cozy-dashboard", "tenant-x", owner)},
			NamespacePlan{Detach: []Detach{{Name: "cozy-dashboard"}}}},
		{"chart labels on unlisted namespaces are not ours", []string{owner},
			[]NamespaceState{ns(owner, owner, owner), ns("tenant-alice", owner, "")}, NamespacePlan{}},
		{"no TenantGateway left: everything we wrote goes", nil,
			[]NamespaceState{ns(owner, owner, owner), ns("cozy-dashboard", owner, owner), ns("tenant-alice", owner, "")},
			NamespacePlan{Detach: []Detach{{Name: "cozy-dashboard", RemoveLabel: true}, {Name: owner, RemoveLabel: true}}}},
		{"missing namespace", []string{owner, "cozy-later"},
			[]NamespaceState{ns(owner, owner, owner)}, NamespacePlan{Missing: []string{"cozy-later"}}},
		{"another owner's annotation without its label is taken", []string{owner, "cozy-x"},
			[]NamespaceState{ns(owner, owner, owner), ns("cozy-x", "", "tenant-b")}, NamespacePlan{Attach: []string{"cozy-x"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := PlanNamespaces(owner, tt.wanted, tt.namespaces); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("PlanNamespaces() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestNamespacesAttachedCondition(t *testing.T) {
	plan := NamespacePlan{
		Missing:   []string{"cozy-later", "cozy-not-mine"},
		Conflicts: []NamespaceConflict{{Name: "tenant-bob", Value: "tenant-x"}, {Name: "cozy-shared", Value: "tenant-b", AttachedBy: "tenant-b"}},
	}
	c := NamespacesAttachedCondition([]string{"tenant-root", "cozy-later"}, nil, plan)
	// A namespace that does not exist yet holds nothing down: True, and
	// the message names it.
	if c.Status != metav1.ConditionTrue || c.Reason != gatewayv1alpha1.ReasonNamespacesNotCreated ||
		!strings.Contains(c.Message, "1 namespaces carry") || !strings.Contains(c.Message, "not created yet: cozy-later") || strings.Contains(c.Message, "cozy-not-mine") {
		t.Errorf("missing: %+v", c)
	}
	c = NamespacesAttachedCondition([]string{"tenant-root", "cozy-later", "tenant-bob", "cozy-shared"}, nil, plan)
	if c.Reason != gatewayv1alpha1.ReasonNamespaceLabelConflict || !strings.Contains(c.Message, "tenant-bob has namespace.cozystack.io/gateway=tenant-x, written by the tenant chart") ||
		!strings.Contains(c.Message, "written by the TenantGateways of namespace tenant-b") {
		t.Errorf("conflict: %+v", c)
	}
	_, refused := AllowedAttachments("tenant-alice", []string{"cozy-system"})
	c = NamespacesAttachedCondition([]string{"tenant-alice"}, refused, plan)
	if c.Status != metav1.ConditionFalse || c.Reason != gatewayv1alpha1.ReasonNamespaceNotAllowed ||
		!strings.Contains(c.Message, "cozy-system is a shared namespace") {
		t.Errorf("refused: %+v", c)
	}
	c = NamespacesAttachedCondition([]string{"tenant-root"}, nil, plan)
	if c.Status != metav1.ConditionTrue || c.Reason != gatewayv1alpha1.ReasonReady {
		t.Errorf("attached: %+v", c)
	}
}
