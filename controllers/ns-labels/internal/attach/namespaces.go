package attach

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
)

// NamespaceState is what ns-labels needs of a namespace.
type NamespaceState struct {
	Name        string
	Labels      map[string]string
	Annotations map[string]string
}

// NamespaceConflict: the namespace carries namespace.cozystack.io/gateway
// with another value than the owner's, written by the tenant chart (no
// annotation) or for another owner (AttachedBy).
type NamespaceConflict struct {
	Name       string
	Value      string
	AttachedBy string
}

// Detach: remove the attached-by annotation and, when RemoveLabel, the
// gateway label (someone changed the label since we wrote it: it is not ours
// to remove any more).
type Detach struct {
	Name        string
	RemoveLabel bool
}

// NamespacePlan is what ns-labels does for one owner namespace.
type NamespacePlan struct {
	// Attach: write namespace.cozystack.io/gateway=<owner> and
	// cozystack.io/gateway-attached-by=<owner>.
	Attach []string
	Detach []Detach
	// Missing namespaces are wanted but do not exist yet.
	Missing   []string
	Conflicts []NamespaceConflict
}

// PlanNamespaces decides the gateway labels of the owner namespace's
// TenantGateways. wanted are the namespaces to attach: the owner namespace
// and every attachedNamespaces entry of the TenantGateways there (none when
// no TenantGateway is left). namespaces are the namespaces that exist (at
// least the wanted ones and those annotated as attached by owner).
//
// A label without our annotation belongs to the tenant chart and is never
// touched: with the owner's value the namespace is attached already, with
// another value it is a conflict. Labels we wrote (annotation = owner) on
// namespaces no longer wanted are removed. All lists are sorted by name.
func PlanNamespaces(owner string, wanted []string, namespaces []NamespaceState) NamespacePlan {
	var p NamespacePlan
	want := map[string]bool{}
	for _, n := range wanted {
		want[n] = true
	}
	exists := map[string]bool{}
	for _, ns := range namespaces {
		exists[ns.Name] = true
		label, hasLabel := ns.Labels[gatewayv1alpha1.LabelNamespaceGateway]
		by := ns.Annotations[gatewayv1alpha1.AnnotationAttachedBy]
		switch {
		case want[ns.Name] && !hasLabel:
			p.Attach = append(p.Attach, ns.Name)
		case want[ns.Name] && label == owner:
			// Attached: by us, or by the tenant chart.
		case want[ns.Name]:
			p.Conflicts = append(p.Conflicts, NamespaceConflict{Name: ns.Name, Value: label, AttachedBy: by})
		case by == owner:
			p.Detach = append(p.Detach, Detach{Name: ns.Name, RemoveLabel: hasLabel && label == owner})
		}
	}
	for n := range want {
		if !exists[n] {
			p.Missing = append(p.Missing, n)
		}
	}
	slices.Sort(p.Attach)
	slices.Sort(p.Missing)
	slices.SortFunc(p.Detach, func(a, b Detach) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(p.Conflicts, func(a, b NamespaceConflict) int { return strings.Compare(a.Name, b.Name) })
	return p
}

// NamespacesAttachedCondition reports on the namespaces one TenantGateway
// wants (its own namespace and the attachedNamespaces it may attach, as
// SplitAttachments decided), given the plan of its owner namespace after the
// plan's writes succeeded: False for a refused entry (NamespaceNotAllowed)
// or a label conflict; listed namespaces that do not exist yet keep it True
// with reason NamespacesNotCreated, naming them; shared namespaces published
// through the root tenant's Gateway keep it True with reason
// SharedNamespacesOnRoot, naming them.
func NamespacesAttachedCondition(a Attachments, p NamespacePlan) metav1.Condition {
	wanted, refused := a.Allowed, a.Refused
	mine := map[string]bool{}
	for _, n := range wanted {
		mine[n] = true
	}
	var conflicts, missing []string
	for _, c := range p.Conflicts {
		if !mine[c.Name] {
			continue
		}
		who := "the tenant chart (no " + gatewayv1alpha1.AnnotationAttachedBy + " annotation)"
		if c.AttachedBy != "" {
			who = "the TenantGateways of namespace " + c.AttachedBy
		}
		conflicts = append(conflicts, fmt.Sprintf("%s has %s=%s, written by %s", c.Name, gatewayv1alpha1.LabelNamespaceGateway, c.Value, who))
	}
	for _, n := range p.Missing {
		if mine[n] {
			missing = append(missing, n)
		}
	}
	cond := metav1.Condition{Type: gatewayv1alpha1.ConditionNamespacesAttached}
	switch {
	case len(refused) > 0:
		msgs := make([]string, len(refused))
		for i, r := range refused {
			msgs[i] = r.Message
		}
		cond.Status, cond.Reason = metav1.ConditionFalse, gatewayv1alpha1.ReasonNamespaceNotAllowed
		cond.Message = "not attached: " + strings.Join(msgs, "; ")
		if len(conflicts) > 0 {
			cond.Message += "; also " + strings.Join(conflicts, "; ") + ": left as they are"
		}
	case len(conflicts) > 0:
		cond.Status, cond.Reason = metav1.ConditionFalse, gatewayv1alpha1.ReasonNamespaceLabelConflict
		cond.Message = strings.Join(conflicts, "; ") + ": left as they are; remove the namespace from attachedNamespaces, or change its label where it was written"
	case len(missing) > 0:
		cond.Status, cond.Reason = metav1.ConditionTrue, gatewayv1alpha1.ReasonNamespacesNotCreated
		cond.Message = fmt.Sprintf("%d namespaces carry %s; not created yet: %s (each is labelled as soon as it is created)",
			len(mine)-len(missing), gatewayv1alpha1.LabelNamespaceGateway, strings.Join(missing, ", "))
	case len(a.OnRoot) > 0:
		cond.Status, cond.Reason = metav1.ConditionTrue, gatewayv1alpha1.ReasonSharedNamespacesOnRoot
		cond.Message = fmt.Sprintf("%d namespaces carry %s", len(mine), gatewayv1alpha1.LabelNamespaceGateway)
	default:
		cond.Status, cond.Reason = metav1.ConditionTrue, gatewayv1alpha1.ReasonReady
		cond.Message = fmt.Sprintf("%d namespaces carry %s", len(mine), gatewayv1alpha1.LabelNamespaceGateway)
	}
	if len(a.OnRoot) > 0 && cond.Status == metav1.ConditionTrue {
		cond.Message += fmt.Sprintf("; shared, published through the root tenant's Gateway (listed by the TenantGateway in %s), not attached here: %s",
			RootTenantNamespace, strings.Join(a.OnRoot, ", "))
	}
	return cond
}
