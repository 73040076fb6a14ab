// Package attach holds ns-labels' decisions, as pure functions: which
// namespaces a TenantGateway may attach (MayAttach, SplitAttachments), the
// labels to write and remove in one owner namespace's tree (PlanNamespaces),
// and NamespacesAttached for each TenantGateway (NamespacesAttachedCondition).
package attach
