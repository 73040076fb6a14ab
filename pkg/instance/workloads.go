package instance

// What upstream Cozystack's API shows on an application beside its backing
// object's conditions: the WorkloadsReady condition from the application's
// WorkloadMonitors, a Tenant's namespace, and the version its table prints.
// The facts are those of upstream's pkg/registry/apps/application/rest.go.

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/dynamicwatch"
)

// WorkloadMonitorGVK is upstream Cozystack's WorkloadMonitor: its controller
// counts the pods a selector matches and sets status.operational.
var WorkloadMonitorGVK = schema.GroupVersionKind{Group: "cozystack.io", Version: "v1alpha1", Kind: "WorkloadMonitor"}

// TenantReleasePrefix prefixes a Tenant's HelmRelease name upstream; the
// root tenant's release is tenant-root in namespace tenant-root.
const TenantReleasePrefix = "tenant-"

// TenantNamespace is the namespace a Tenant named name in namespace ns
// owns, as upstream computes it: tenant-root for the root tenant (named
// root in tenant-root), tenant-<name> for a tenant in tenant-root, and
// <ns>-<name> below that (tenant-a's child b gets tenant-a-b).
func TenantNamespace(ns, name string) string {
	switch {
	case ns == "tenant-root" && TenantReleasePrefix+name == "tenant-root":
		return "tenant-root"
	case ns == "tenant-root":
		return TenantReleasePrefix + name
	default:
		return ns + "-" + name
	}
}

// WorkloadsNamespace is where the WorkloadMonitors of an instance live: the
// instance's namespace, or for a Tenant the tenant's own namespace.
func WorkloadsNamespace(kind, ns, name string) string {
	if kind == "Tenant" {
		return TenantNamespace(ns, name)
	}
	return ns
}

// WorkloadMonitorLabels select an instance's WorkloadMonitors: the
// application labels of its kind, group and name.
func WorkloadMonitorLabels(kind, name string) map[string]string {
	return map[string]string{
		appsv1alpha1.LabelApplicationKind:  kind,
		appsv1alpha1.LabelApplicationGroup: appsv1alpha1.GroupVersion.Group,
		appsv1alpha1.LabelApplicationName:  name,
	}
}

// MonitorOperational reads a WorkloadMonitor's status.operational: nil
// while its controller has not set it.
func MonitorOperational(m *unstructured.Unstructured) *bool {
	v, ok, err := unstructured.NestedBool(m.Object, "status", "operational")
	if !ok || err != nil {
		return nil
	}
	return &v
}

// WorkloadsReady is the WorkloadsReady condition of an instance whose
// monitors report operational (one entry per monitor, nil for a monitor
// with no status.operational yet), or nil when it has no monitor: upstream
// then shows no such condition. A monitor that is not operational wins
// over one not yet reconciled. generation is the instance's.
func WorkloadsReady(operational []*bool, generation int64) *metav1.Condition {
	if len(operational) == 0 {
		return nil
	}
	var failing, pending int
	for _, o := range operational {
		switch {
		case o == nil:
			pending++
		case !*o:
			failing++
		}
	}
	c := &metav1.Condition{Type: appsv1alpha1.ConditionWorkloadsReady, ObservedGeneration: generation, Reason: appsv1alpha1.ReasonWorkloadMonitorCheck}
	switch {
	case failing > 0:
		c.Status = metav1.ConditionFalse
		c.Message = fmt.Sprintf("%d of %d workload monitors report the workload not operational", failing, len(operational))
	case pending > 0:
		c.Status = metav1.ConditionUnknown
		c.Reason = appsv1alpha1.ReasonWorkloadsPending
		c.Message = fmt.Sprintf("%d of %d workload monitors have not been reconciled yet", pending, len(operational))
	default:
		c.Status = metav1.ConditionTrue
		c.Message = fmt.Sprintf("all %d workload monitors report the workload operational", len(operational))
	}
	return c
}

// VersionColumn is what upstream's table prints in its VERSION column for
// status.version: the part after the last '+' (the chart's build metadata,
// e.g. 0.1.4+abcdef prints abcdef), the whole version when it has none, and
// <unknown> when there is no version yet.
func VersionColumn(version string) string {
	if version == "" {
		return "<unknown>"
	}
	if i := strings.LastIndex(version, "+"); i >= 0 && i < len(version)-1 {
		return version[i+1:]
	}
	return version
}

// watchMonitors watches the WorkloadMonitors labelled for instances, when
// their CRD is served: upstream Cozystack installs it; a cluster without it
// gets no WorkloadsReady condition. The CRD must be there when the
// controller starts (a restart picks up one installed later).
func (r *Reconciler) watchMonitors(mgr ctrl.Manager) error {
	_, err := mgr.GetRESTMapper().RESTMapping(WorkloadMonitorGVK.GroupKind(), WorkloadMonitorGVK.Version)
	if meta.IsNoMatchError(err) {
		mgr.GetLogger().Info("WorkloadMonitors are not served: instances get no WorkloadsReady condition", "kind", WorkloadMonitorGVK.String())
		return nil
	}
	if err != nil {
		return err
	}
	if err := r.watches.Watch(WorkloadMonitorGVK, dynamicwatch.Options{Map: mapMonitor, Filter: hasApplicationLabels}); err != nil {
		return err
	}
	r.monitors = true
	return nil
}

// mapMonitor names the instance a WorkloadMonitor is labelled for: in the
// monitor's namespace, or for a Tenant the namespace TenantNamespace maps to
// the monitor's (the reconcile checks the mapping again).
func mapMonitor(o client.Object) []dynamicwatch.Request {
	l := o.GetLabels()
	kind, name, ns := l[appsv1alpha1.LabelApplicationKind], l[appsv1alpha1.LabelApplicationName], o.GetNamespace()
	if kind == "Tenant" {
		switch {
		case ns == TenantNamespace("tenant-root", name):
			ns = "tenant-root"
		case strings.HasSuffix(ns, "-"+name):
			ns = strings.TrimSuffix(ns, "-"+name)
		default:
			return nil
		}
	}
	return []dynamicwatch.Request{{
		GVK:            appsv1alpha1.GroupVersion.WithKind(kind),
		NamespacedName: types.NamespacedName{Namespace: ns, Name: name},
	}}
}

// projectUpstreamView adds to status what upstream Cozystack's API shows
// beside the backing object's conditions: WorkloadsReady from the
// instance's WorkloadMonitors (when they are watched) and a Tenant's
// namespace.
func (r *Reconciler) projectUpstreamView(ctx context.Context, inst *unstructured.Unstructured, status *appsv1alpha1.ApplicationStatus) error {
	kind, ns, name := inst.GetKind(), inst.GetNamespace(), inst.GetName()
	if kind == "Tenant" {
		status.Namespace = TenantNamespace(ns, name)
	}
	if !r.monitors {
		return nil
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(WorkloadMonitorGVK.GroupVersion().WithKind(WorkloadMonitorGVK.Kind + "List"))
	if err := r.Client.List(ctx, list, client.InNamespace(WorkloadsNamespace(kind, ns, name)), client.MatchingLabels(WorkloadMonitorLabels(kind, name))); err != nil {
		return err
	}
	operational := make([]*bool, 0, len(list.Items))
	for i := range list.Items {
		operational = append(operational, MonitorOperational(&list.Items[i]))
	}
	c := WorkloadsReady(operational, inst.GetGeneration())
	if c == nil {
		meta.RemoveStatusCondition(&status.Conditions, appsv1alpha1.ConditionWorkloadsReady)
		return nil
	}
	meta.SetStatusCondition(&status.Conditions, *c)
	return nil
}
