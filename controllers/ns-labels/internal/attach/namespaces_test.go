package attach

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
	c := NamespacesAttachedCondition(Attachments{Allowed: []string{"tenant-root", "cozy-later"}}, plan)
	// A namespace that does not exist yet holds nothing down: True, and
	// the message names it.
	if c.Status != metav1.ConditionTrue || c.Reason != gatewayv1alpha1.ReasonNamespacesNotCreated ||
		!strings.Contains(c.Message, "1 namespaces carry") || !strings.Contains(c.Message, "not created yet: cozy-later") || strings.Contains(c.Message, "cozy-not-mine") {
		t.Errorf("missing: %+v", c)
	}
	c = NamespacesAttachedCondition(Attachments{Allowed: []string{"tenant-root", "cozy-later", "tenant-bob", "cozy-shared"}}, plan)
	if c.Reason != gatewayv1alpha1.ReasonNamespaceLabelConflict || !strings.Contains(c.Message, "tenant-bob has namespace.cozystack.io/gateway=tenant-x, written by the tenant chart") ||
		!strings.Contains(c.Message, "written by the TenantGateways of namespace tenant-b") {
		t.Errorf("conflict: %+v", c)
	}
	c = NamespacesAttachedCondition(SplitAttachments("tenant-alice", []string{"cozy-system"}, nil), plan)
	if c.Status != metav1.ConditionFalse || c.Reason != gatewayv1alpha1.ReasonNamespaceNotAllowed ||
		!strings.Contains(c.Message, "cozy-system is a shared namespace") {
		t.Errorf("refused: %+v", c)
	}
	c = NamespacesAttachedCondition(Attachments{Allowed: []string{"tenant-root"}}, plan)
	if c.Status != metav1.ConditionTrue || c.Reason != gatewayv1alpha1.ReasonReady {
		t.Errorf("attached: %+v", c)
	}
	// Upstream's chart lists the shared namespaces in a child tenant's
	// TenantGateway too: those the root's lists are no error, and named.
	onRoot := SplitAttachments("tenant-alice", []string{"cozy-system", "default"}, []string{"cozy-system", "default"})
	c = NamespacesAttachedCondition(onRoot, plan)
	if c.Status != metav1.ConditionTrue || c.Reason != gatewayv1alpha1.ReasonSharedNamespacesOnRoot ||
		!strings.HasSuffix(c.Message, "not attached here: cozy-system, default") {
		t.Errorf("on root: %+v", c)
	}
	// Still named when another reason leads.
	onRoot.Allowed = append(onRoot.Allowed, "cozy-later")
	c = NamespacesAttachedCondition(onRoot, plan)
	if c.Reason != gatewayv1alpha1.ReasonNamespacesNotCreated || !strings.Contains(c.Message, "not attached here: cozy-system, default") {
		t.Errorf("on root, one missing: %+v", c)
	}
	// A shared namespace the root does not list is still refused.
	c = NamespacesAttachedCondition(SplitAttachments("tenant-alice", []string{"cozy-system", "default"}, []string{"cozy-system"}), plan)
	if c.Status != metav1.ConditionFalse || c.Reason != gatewayv1alpha1.ReasonNamespaceNotAllowed ||
		!strings.Contains(c.Message, "default is a shared namespace") || strings.Contains(c.Message, "cozy-system") {
		t.Errorf("one not on root: %+v", c)
	}
}
