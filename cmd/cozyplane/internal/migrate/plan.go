package migrate

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
)

// InstanceAPIServiceName is the APIService through which the API server
// serves apps.cozystack.io/v1alpha1 (an APIService is named
// <version>.<group>).
var InstanceAPIServiceName = appsv1alpha1.GroupVersion.Version + "." + appsv1alpha1.GroupVersion.Group

// Inputs is everything the plan is computed from, as read from the cluster.
type Inputs struct {
	// Namespace limits the plan to one namespace; empty means all.
	Namespace string
	// APIService is InstanceAPIServiceName as it stands; nil when absent.
	APIService *APIService
	// DefinitionsServed is false when the API server does not serve
	// cozystack.io/v1alpha1 ApplicationDefinition at all.
	DefinitionsServed bool
	Definitions       []cozyv1alpha1.ApplicationDefinition
	// Releases are the HelmReleases carrying the application labels of
	// apps.cozystack.io, in scope.
	Releases []Release
	// Instances of the kinds the releases name, in scope. InstancesListed
	// is false when they could not be listed (while an APIService shadows
	// the group, a list would answer from upstream's API, not from our
	// CRDs).
	Instances       []Instance
	InstancesListed bool
}

// APIService is what matters of an APIService here.
type APIService struct {
	Name string `json:"name"`
	// Service is "<namespace>/<name>" when the APIService proxies the group
	// to a Service; empty when the group is served locally.
	Service string `json:"service,omitempty"`
}

// Release is what matters of a HelmRelease.
type Release struct {
	Namespace   string
	Name        string
	UID         types.UID
	Generation  int64
	Labels      map[string]string
	Annotations map[string]string
	// Values is spec.values; nil when absent.
	Values map[string]any
	// ValuesError is set when spec.values is not a JSON object.
	ValuesError string
	// Controller is its controller ownerReference, if any.
	Controller *metav1.OwnerReference
	Deleting   bool
	// Suspended is its spec.suspend.
	Suspended bool
}

// Instance is what matters of an existing instance.
type Instance struct {
	Kind      string
	Namespace string
	Name      string
	UID       types.UID
	// Adopt is the value of the annotation apps.cozystack.io/adopt.
	Adopt    string
	Deleting bool
	// Ready is its Ready condition, if any.
	Ready *metav1.Condition
}

// Action says what happens to one HelmRelease.
type Action string

const (
	// ActionCreate: the instance does not exist; --apply creates it with
	// the adoption proof.
	ActionCreate Action = "create"
	// ActionWait: the instance exists with the proof naming this
	// HelmRelease; the helm controller has not adopted it yet.
	ActionWait Action = "wait"
	// ActionNone: the HelmRelease is controlled by its instance already.
	ActionNone Action = "none"
	// ActionSkip: the HelmRelease is reported and left alone.
	ActionSkip Action = "skip"
)

// Reasons a HelmRelease is left alone. None of them blocks the others.
const (
	// SkipKindNotServed: no ApplicationDefinition names its kind.
	SkipKindNotServed = "KindNotServed"
	// SkipNotHelmBackend: the definition of its kind has no Helm backend.
	SkipNotHelmBackend = "NotHelmBackend"
	// SkipNameMismatch: its name is not the definition's prefix followed by
	// its application.name label, so upstream's API did not write it (or
	// wrote it under another prefix) and no instance would own it.
	SkipNameMismatch = "NameMismatch"
	// SkipInvalidValues: spec.values is not an object.
	SkipInvalidValues = "InvalidValues"
	// SkipControlledElsewhere: it has a controller ownerReference to an
	// object other than its instance.
	SkipControlledElsewhere = "ControlledElsewhere"
	// SkipDeleting: it is being deleted.
	SkipDeleting = "Deleting"
	// SkipInstanceConflict: an instance with the name exists without the
	// proof for this HelmRelease (none, another uid, or being deleted); it
	// is never overwritten.
	SkipInstanceConflict = "InstanceConflict"
	// SkipRootTenant: the root tenant's HelmRelease (tenant-root in
	// namespace tenant-root), which cozystack-basics installs. No instance
	// takes it over (RootTenantMessage says why and what to use instead).
	SkipRootTenant = "RootTenant"
	// SkipManagedByHelm: a Helm release renders it (Helm's annotation
	// meta.helm.sh/release-name, or its label app.kubernetes.io/managed-by),
	// e.g. a module of upstream's tenant chart. That release chooses its
	// values, timeouts and suspend, and deletes it when it stops rendering
	// it (a module turned off); adopted, the helm backend would rewrite
	// those and recreate it after Helm deleted it.
	SkipManagedByHelm = "ManagedByHelm"
)

// Marks of the HelmReleases a Helm release renders.
const (
	// AnnotationHelmReleaseName and AnnotationHelmReleaseNamespace name the
	// Helm release that rendered an object; Helm writes them on every object
	// it installs.
	AnnotationHelmReleaseName      = "meta.helm.sh/release-name"
	AnnotationHelmReleaseNamespace = "meta.helm.sh/release-namespace"
	// LabelManagedBy is "Helm" on what Helm renders from charts that follow
	// its conventions (upstream's tenant chart does).
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// LabelTenantModule is "true" on the HelmReleases of upstream's tenant
	// chart that are a tenant's modules (etcd, monitoring, ingress,
	// seaweedfs...: packages/apps/tenant/templates).
	LabelTenantModule = "internal.cozystack.io/tenantmodule"
)

// The root tenant as cozystack-basics installs it
// (packages/system/cozystack-basics/templates/tenant-root.yaml): a
// HelmRelease of kind Tenant named tenant-root in namespace tenant-root,
// whose application.name label is tenant-root (upstream's API serves it as
// Tenant root by cutting the prefix off its name).
const (
	RootTenantNamespace = "tenant-root"
	RootTenantRelease   = "tenant-root"
	TenantKind          = "Tenant"
)

// Reasons of blockers: while one stands, --apply changes nothing.
const (
	// BlockGroupShadowed: an APIService proxies apps.cozystack.io/v1alpha1
	// to a Service, so instances cannot be created in (or read from) the
	// CRDs.
	BlockGroupShadowed = "GroupShadowed"
	// BlockDefinitionsNotServed: the API server does not serve
	// ApplicationDefinitions.
	BlockDefinitionsNotServed = "DefinitionsNotServed"
	// BlockDefinitionNotReady: the definition of a kind in use is not
	// Ready, so its kind is not served (or not yet) by our CRD.
	BlockDefinitionNotReady = "DefinitionNotReady"
)

// Ref names a HelmRelease.
type Ref struct {
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	UID       types.UID `json:"uid"`
}

// Entry is the plan for one HelmRelease.
type Entry struct {
	HelmRelease Ref    `json:"helmRelease"`
	Kind        string `json:"kind"`
	// Definition serving Kind; empty when none does.
	Definition string `json:"definition,omitempty"`
	// Instance is the name of the instance it becomes (or belongs to).
	Instance string `json:"instance,omitempty"`
	Action   Action `json:"action"`
	// Reason and Message say why a HelmRelease is skipped, or what is
	// awaited.
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	// The instance to create (ActionCreate).
	Spec        map[string]any    `json:"spec,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`

	// Result is filled in by --apply: what happened.
	Result string `json:"result,omitempty"`
	// InstanceReady is the instance's Ready condition after --apply.
	InstanceReady *metav1.Condition `json:"instanceReady,omitempty"`

	// plural of Kind, to address instances.
	plural string
}

// Plural is the resource name of the entry's kind.
func (e *Entry) Plural() string { return e.plural }

// Blocker stops --apply.
type Blocker struct {
	Reason string `json:"reason"`
	// Object names what blocks, e.g. "APIService v1alpha1.apps.cozystack.io".
	Object  string `json:"object"`
	Message string `json:"message"`
	// Fix says what to do about it.
	Fix string `json:"fix"`
}

// Plan is the outcome of Compute.
type Plan struct {
	// Namespace of the plan; empty for all namespaces.
	Namespace string    `json:"namespace,omitempty"`
	Blockers  []Blocker `json:"blockers"`
	Entries   []Entry   `json:"helmReleases"`
	// Notes are facts worth knowing that change nothing.
	Notes []string `json:"notes,omitempty"`
}

// Count returns how many entries have the action.
func (p *Plan) Count(a Action) int {
	n := 0
	for i := range p.Entries {
		if p.Entries[i].Action == a {
			n++
		}
	}
	return n
}

// Compute decides, for every HelmRelease upstream's API wrote, the instance
// it becomes, and lists what blocks the migration. Pure.
func Compute(in Inputs) Plan {
	p := Plan{Namespace: in.Namespace, Blockers: []Blocker{}, Entries: []Entry{}}

	shadowed := in.APIService != nil && in.APIService.Service != ""
	if shadowed {
		p.Blockers = append(p.Blockers, Blocker{
			Reason: BlockGroupShadowed,
			Object: "APIService " + in.APIService.Name,
			Message: fmt.Sprintf("APIService %s sends every request for %s to Service %s (upstream Cozystack's aggregated API server), "+
				"so the API server never reaches the CRDs that serve the kinds", in.APIService.Name, appsv1alpha1.GroupVersion, in.APIService.Service),
			Fix: fmt.Sprintf("suspend the Flux HelmRelease that installs upstream's API (cozy-system/cozystack-api) and scale its Deployment down, "+
				"then delete the APIService: kubectl delete apiservice %s (docs/migration.md, step by step)", in.APIService.Name),
		})
	}
	if !in.DefinitionsServed {
		p.Blockers = append(p.Blockers, Blocker{
			Reason:  BlockDefinitionsNotServed,
			Object:  "ApplicationDefinition API",
			Message: "the API server does not serve cozystack.io/v1alpha1 ApplicationDefinition",
			Fix:     "install the ApplicationDefinition CRD (charts/crds) and the appdef and helm controllers (docs/migration.md)",
		})
	}

	defs := definitionsByKind(in.Definitions)
	instances := map[instanceKey]*Instance{}
	for i := range in.Instances {
		x := &in.Instances[i]
		instances[instanceKey{x.Kind, x.Namespace, x.Name}] = x
	}

	notReady := map[string]bool{} // definitions already reported
	for i := range in.Releases {
		r := &in.Releases[i]
		e := planRelease(r, defs, instances, in.InstancesListed)
		if e.Action == ActionCreate || e.Action == ActionWait {
			d := defs[e.Kind]
			if b, blocks := definitionBlocker(d, shadowed); blocks && !notReady[d.Name] {
				notReady[d.Name] = true
				p.Blockers = append(p.Blockers, b)
			}
		}
		p.Entries = append(p.Entries, e)
	}
	sort.SliceStable(p.Entries, func(i, j int) bool {
		a, b := p.Entries[i].HelmRelease, p.Entries[j].HelmRelease
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	sort.SliceStable(p.Blockers, func(i, j int) bool {
		return blockerRank(p.Blockers[i]) < blockerRank(p.Blockers[j]) ||
			blockerRank(p.Blockers[i]) == blockerRank(p.Blockers[j]) && p.Blockers[i].Object < p.Blockers[j].Object
	})
	if !in.InstancesListed && (p.Count(ActionCreate) > 0) {
		p.Notes = append(p.Notes, "existing instances could not be listed while the group is shadowed: "+
			"the plan assumes none exists; --apply looks again before it creates anything")
	}
	return p
}

type instanceKey struct{ kind, namespace, name string }

func blockerRank(b Blocker) int {
	switch b.Reason {
	case BlockGroupShadowed:
		return 0
	case BlockDefinitionsNotServed:
		return 1
	}
	return 2
}

// definitionsByKind picks, for each kind, the definition that serves it: the
// Ready one when several name the kind (the appdef controller serves only
// one of them), else the oldest.
func definitionsByKind(all []cozyv1alpha1.ApplicationDefinition) map[string]*cozyv1alpha1.ApplicationDefinition {
	out := map[string]*cozyv1alpha1.ApplicationDefinition{}
	for i := range all {
		d := &all[i]
		kind := d.Spec.Application.Kind
		cur, ok := out[kind]
		if !ok || better(d, cur) {
			out[kind] = d
		}
	}
	return out
}

func better(a, b *cozyv1alpha1.ApplicationDefinition) bool {
	ra, rb := ready(a), ready(b)
	if ra != rb {
		return ra
	}
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	return a.Name < b.Name
}

func ready(d *cozyv1alpha1.ApplicationDefinition) bool {
	c := meta.FindStatusCondition(d.Status.Conditions, cozyv1alpha1.ConditionReady)
	return c != nil && c.Status == metav1.ConditionTrue && d.Status.ObservedGeneration == d.Generation
}

// definitionBlocker reports a definition that does not serve its kind yet.
// A definition that is only GroupShadowed is covered by the APIService's
// own blocker.
func definitionBlocker(d *cozyv1alpha1.ApplicationDefinition, shadowed bool) (Blocker, bool) {
	if ready(d) {
		return Blocker{}, false
	}
	b := Blocker{Reason: BlockDefinitionNotReady, Object: "ApplicationDefinition " + d.Name}
	c := meta.FindStatusCondition(d.Status.Conditions, cozyv1alpha1.ConditionReady)
	switch {
	case c == nil:
		b.Message = fmt.Sprintf("ApplicationDefinition %s (kind %s) has no Ready condition: no appdef controller has served it yet", d.Name, d.Spec.Application.Kind)
		b.Fix = "install and start the appdef controller (charts/appdef); it serves the kind within seconds"
	case c.Reason == cozyv1alpha1.ReasonGroupShadowed && shadowed:
		return Blocker{}, false
	case c.Status == metav1.ConditionTrue:
		b.Message = fmt.Sprintf("ApplicationDefinition %s (kind %s) changed (generation %d) and the appdef controller has not served that generation yet (observed %d)",
			d.Name, d.Spec.Application.Kind, d.Generation, d.Status.ObservedGeneration)
		b.Fix = "wait a few seconds and run again; if it persists, check that the appdef controller is running"
	default:
		b.Message = fmt.Sprintf("ApplicationDefinition %s (kind %s) is not Ready: %s: %s", d.Name, d.Spec.Application.Kind, c.Reason, c.Message)
		b.Fix = "fix what its Ready condition names (kubectl describe applicationdefinition " + d.Name + "); the kind must be served before its instances can be created"
	}
	return b, true
}

// planRelease decides for one HelmRelease.
func planRelease(r *Release, defs map[string]*cozyv1alpha1.ApplicationDefinition, instances map[instanceKey]*Instance, listed bool) Entry {
	kind := r.Labels[appsv1alpha1.LabelApplicationKind]
	appName := r.Labels[appsv1alpha1.LabelApplicationName]
	e := Entry{HelmRelease: Ref{Namespace: r.Namespace, Name: r.Name, UID: r.UID}, Kind: kind, Action: ActionSkip}
	skip := func(reason, format string, args ...any) Entry {
		e.Reason, e.Message = reason, fmt.Sprintf(format, args...)
		return e
	}

	if r.Namespace == RootTenantNamespace && r.Name == RootTenantRelease && kind == TenantKind {
		return skip(SkipRootTenant, "%s", RootTenantMessage(r))
	}
	if owner, managed := HelmOwner(r); managed {
		return skip(SkipManagedByHelm, "%s", helmManagedMessage(r, owner, defs[kind]))
	}

	d := defs[kind]
	if d == nil {
		return skip(SkipKindNotServed, "no ApplicationDefinition serves kind %s: left alone (once a definition serves it, run migrate again)", kind)
	}
	e.Definition = d.Name
	e.plural = d.Spec.Application.Plural
	be, err := d.ResolvedBackend()
	if err != nil {
		return skip(SkipNotHelmBackend, "ApplicationDefinition %s has no usable backend (%v): left alone", d.Name, err)
	}
	if be.Type != cozyv1alpha1.BackendHelm {
		return skip(SkipNotHelmBackend, "ApplicationDefinition %s serves kind %s with the %s backend, not Helm: left alone", d.Name, kind, be.Type)
	}
	prefix := be.Prefix()
	if appName == "" || r.Name != prefix+appName {
		want := prefix + "<" + appsv1alpha1.LabelApplicationName + ">"
		if appName != "" {
			want = prefix + appName
		}
		return skip(SkipNameMismatch, "its name is not %s (the name upstream's API gives the HelmRelease of %s %s with prefix %q): no instance would own it; left alone",
			want, kind, orDash(appName), prefix)
	}
	e.Instance = appName

	if r.Deleting {
		return skip(SkipDeleting, "it is being deleted: left alone")
	}
	if ref := r.Controller; ref != nil {
		if isInstanceRef(ref, kind, appName) {
			if x := instances[instanceKey{kind, r.Namespace, appName}]; x == nil || x.UID == ref.UID || !listed {
				e.Action = ActionNone
				e.Message = fmt.Sprintf("already controlled by %s %s", kind, appName)
				return e
			}
		}
		return skip(SkipControlledElsewhere, "it is controlled by %s %s (%s, uid %s), not by its instance: left alone", ref.Kind, ref.Name, ref.APIVersion, ref.UID)
	}
	if r.ValuesError != "" {
		return skip(SkipInvalidValues, "spec.values %s: left alone", r.ValuesError)
	}

	if x := instances[instanceKey{kind, r.Namespace, appName}]; x != nil {
		switch {
		case x.Deleting:
			return skip(SkipInstanceConflict, "%s %s/%s exists and is being deleted: run migrate again once it is gone", kind, r.Namespace, appName)
		case x.Adopt == "":
			return skip(SkipInstanceConflict, "%s %s/%s exists without the adoption proof (annotation %s): it was not created for this HelmRelease and is not overwritten; "+
				"if it should adopt it, delete the instance (it owns nothing yet) and run migrate again", kind, r.Namespace, appName, appsv1alpha1.AnnotationAdopt)
		case x.Adopt != string(r.UID):
			return skip(SkipInstanceConflict, "%s %s/%s exists with an adoption proof for another object (uid %s, this HelmRelease is %s): not overwritten",
				kind, r.Namespace, appName, x.Adopt, r.UID)
		}
		e.Action = ActionWait
		e.Message = fmt.Sprintf("%s %s/%s exists with the proof; waiting for the helm controller to adopt the HelmRelease", kind, r.Namespace, appName)
		return e
	}

	e.Action = ActionCreate
	if r.Suspended {
		e.Message = "its spec.suspend=true is kept: whoever suspended it resumes it; meanwhile the instance reports " +
			"Suspended, reason " + appsv1alpha1.ReasonSuspendedExternally
	}
	e.Spec = SpecFromValues(r.Values)
	e.Labels = Unprefixed(r.Labels, appsv1alpha1.InstanceLabelPrefix)
	e.Annotations = Unprefixed(r.Annotations, appsv1alpha1.InstanceAnnotationPrefix)
	if e.Annotations == nil {
		e.Annotations = map[string]string{}
	}
	e.Annotations[appsv1alpha1.AnnotationAdopt] = string(r.UID)
	return e
}

// HelmOwner reports whether a Helm release renders the HelmRelease, and
// which ("<namespace>/<name>" from Helm's annotations; "" when only the
// managed-by label says so). Pure.
func HelmOwner(r *Release) (string, bool) {
	if name := r.Annotations[AnnotationHelmReleaseName]; name != "" {
		if ns := r.Annotations[AnnotationHelmReleaseNamespace]; ns != "" {
			return ns + "/" + name, true
		}
		return name, true
	}
	return "", r.Labels[LabelManagedBy] == "Helm"
}

// RootTenantMessage says why the root tenant's HelmRelease is left alone and
// how it is read and changed without upstream's API. Pure.
func RootTenantMessage(r *Release) string {
	by := "cozystack-basics"
	if owner, ok := HelmOwner(r); ok && owner != "" {
		by += " (Helm release " + owner + ")"
	}
	return fmt.Sprintf("the root tenant, installed by %s with its own interval, timeout and values; "+
		"no Tenant instance can own it safely: the helm backend would apply its own interval and timeouts over cozystack-basics' "+
		"at every upgrade of either, and deleting the instance would delete the root tenant and every tenant under it. "+
		"Left alone, so `kubectl get tenants -n %s root` finds nothing once upstream's API is gone: read it with "+
		"`kubectl get helmrelease -n %s %s`, and change its values as an administrator with "+
		"`kubectl patch helmrelease -n %s %s --type=merge -p '{\"spec\":{\"values\":{...}}}'` (cozystack-basics keeps values it does not set; "+
		"docs/migration.md, \"The root tenant\")",
		by, r.Namespace, r.Namespace, r.Name, r.Namespace, r.Name)
}

// helmManagedMessage says which Helm release renders r, why it is left
// alone, and, when an earlier migrate adopted it, how to hand it back.
func helmManagedMessage(r *Release, owner string, d *cozyv1alpha1.ApplicationDefinition) string {
	by := "a Helm release (label " + LabelManagedBy + "=Helm)"
	if owner != "" {
		by = "the Helm release " + owner
	}
	what := "rendered by " + by
	how := "change it through that release's values"
	if r.Labels[LabelTenantModule] == "true" {
		what = "a tenant module rendered by " + by + " (upstream's tenant chart)"
		how = "turn the module on or off, and change it, through its Tenant"
	}
	msg := fmt.Sprintf("%s, which chooses its values, timeouts and suspend and deletes it when it stops rendering it; "+
		"adopted, the helm backend would rewrite those and recreate it after Helm deleted it. Left alone: %s (docs/migration.md, \"Releases Helm manages\")",
		what, how)
	if ref := r.Controller; ref != nil && isInstanceRef(ref, r.Labels[appsv1alpha1.LabelApplicationKind], r.Labels[appsv1alpha1.LabelApplicationName]) {
		plural := strings.ToLower(ref.Kind) + "s"
		if d != nil && d.Spec.Application.Plural != "" {
			plural = d.Spec.Application.Plural
		}
		msg += fmt.Sprintf(". It is controlled by %s %s already (an earlier migrate adopted it): to hand it back to Helm, an administrator deletes "+
			"that instance keeping the HelmRelease: kubectl delete %s %s -n %s --cascade=orphan", ref.Kind, ref.Name, plural, ref.Name, r.Namespace)
	}
	return msg
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// isInstanceRef reports whether ref points at the instance kind/name.
