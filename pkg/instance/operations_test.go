package instance

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/conditions"
	"github.com/cozyplane/cozyplane/pkg/ownership"
)

func instanceWith(ann map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("apps.cozystack.io/v1alpha1")
	u.SetKind("Widget")
	u.SetName("w")
	u.SetGeneration(3)
	u.SetAnnotations(ann)
	return u
}

func backing(spec map[string]any, generation int64, status map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	if status != nil {
		u.Object["status"] = status
	}
	u.SetGeneration(generation)
	return u
}

func TestIsSuspended(t *testing.T) {
	for _, tc := range []struct {
		ann  map[string]string
		want bool
	}{
		{nil, false},
		{map[string]string{appsv1alpha1.AnnotationSuspend: "true"}, true},
		{map[string]string{appsv1alpha1.AnnotationSuspend: "True"}, false},
		{map[string]string{appsv1alpha1.AnnotationSuspend: "false"}, false},
		{map[string]string{appsv1alpha1.AnnotationSuspend: ""}, false},
	} {
		if got := IsSuspended(instanceWith(tc.ann)); got != tc.want {
			t.Errorf("%v: got %t, want %t", tc.ann, got, tc.want)
		}
	}
}

func TestDecideSuspend(t *testing.T) {
	running := backing(map[string]any{"interval": "5m"}, 1, nil)
	explicitFalse := backing(map[string]any{"suspend": false}, 1, nil)
	paused := backing(map[string]any{"suspend": true}, 2, nil)
	for _, tc := range []struct {
		name      string
		suspended bool
		live      *unstructured.Unstructured
		verdict   ownership.Verdict
		external  bool
		want      SuspendAction
	}{
		{"not suspended, running", false, running, ownership.Controlled, false, SuspendApply},
		{"not suspended, suspend false", false, explicitFalse, ownership.Controlled, false, SuspendApply},
		{"not suspended, paused by the controller: resumed", false, paused, ownership.Controlled, false, ResumeSet},
		{"not suspended, paused by someone else: kept, the rest applied", false, paused, ownership.Controlled, true, SuspendKeep},
		{"suspended, running: suspend only", true, running, ownership.Controlled, false, SuspendSet},
		{"suspended, suspend false: suspend only", true, explicitFalse, ownership.Controlled, false, SuspendSet},
		{"suspended and paused: hold", true, paused, ownership.Controlled, false, SuspendHold},
		{"suspended and paused by someone else: hold", true, paused, ownership.Controlled, true, SuspendHold},
		{"suspended, absent: created with the desired state", true, nil, ownership.Absent, false, SuspendApply},
		{"suspended, adopting: the desired state (suspend included)", true, running, ownership.Adopt, false, SuspendApply},
		{"not suspended, adopting a paused object: the desired state", false, paused, ownership.Adopt, false, SuspendApply},
		{"not suspended, adopting an object paused by someone else: the desired state", false, paused, ownership.Adopt, true, SuspendApply},
		{"foreign objects are never patched", true, running, ownership.Foreign, false, SuspendApply},
		{"foreign paused objects are never patched", false, paused, ownership.Foreign, false, SuspendApply},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := DecideSuspend(tc.suspended, tc.live, tc.verdict, tc.external); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestAsksWhoSuspended(t *testing.T) {
	running := backing(map[string]any{"interval": "5m"}, 1, nil)
	paused := backing(map[string]any{"suspend": true}, 2, nil)
	for _, tc := range []struct {
		name      string
		suspended bool
		live      *unstructured.Unstructured
		verdict   ownership.Verdict
		want      bool
	}{
		{"not suspended, paused: who did it decides", false, paused, ownership.Controlled, true},
		{"not suspended, running", false, running, ownership.Controlled, false},
		{"suspended: the annotation decides", true, paused, ownership.Controlled, false},
		{"absent", false, nil, ownership.Absent, false},
		{"adopting", false, paused, ownership.Adopt, false},
		{"foreign", false, paused, ownership.Foreign, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := AsksWhoSuspended(tc.suspended, tc.live, tc.verdict); got != tc.want {
				t.Errorf("got %t, want %t", got, tc.want)
			}
		})
	}
}

// managed is a managed-fields entry of manager owning the fields given as
// FieldsV1 JSON.
func managed(manager string, op metav1.ManagedFieldsOperationType, subresource, fields string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, Subresource: subresource, FieldsType: "FieldsV1",
		FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}}
}

func TestSuspendedElsewhere(t *testing.T) {
	const (
		suspendField = `{"f:spec":{"f:suspend":{}}}`
		valuesField  = `{"f:spec":{"f:values":{}}}`
		statusField  = `{"f:status":{"f:conditions":{}}}`
	)
	paused := func(entries ...metav1.ManagedFieldsEntry) *unstructured.Unstructured {
		u := backing(map[string]any{"suspend": true}, 2, nil)
		u.SetKind("HelmRelease")
		u.SetName("pg-app")
		u.SetNamespace("tenant-a")
		u.SetManagedFields(entries)
		return u
	}
	apply, update := metav1.ManagedFieldsOperationApply, metav1.ManagedFieldsOperationUpdate
	for _, tc := range []struct {
		name string
		obj  *unstructured.Unstructured
		want []string // nil: not external
		ext  bool
	}{
		{"nil", nil, nil, false},
		{"not suspended", backing(map[string]any{"suspend": false}, 1, nil), nil, false},
		{"the controller's suspend patch", paused(managed("cozystack-helm", update, "", suspendField), managed("cozystack-helm", apply, "", valuesField)), nil, false},
		{"the controller's apply (created suspended)", paused(managed("cozystack-helm", apply, "", suspendField)), nil, false},
		{"the controller's create", paused(managed("cozystack-helm-create", update, "", suspendField)), nil, false},
		{"upstream's restore (a full update)", paused(managed("cozystack-helm", apply, "", valuesField),
			managed("backupstrategy-controller", update, "", suspendField)), []string{"backupstrategy-controller"}, true},
		{"claimed by another manager too", paused(managed("cozystack-helm", update, "", suspendField),
			managed("kubectl", apply, "", suspendField)), []string{"kubectl"}, true},
		{"status writers do not count", paused(managed("cozystack-helm", update, "", suspendField),
			managed("helm-controller", update, "status", statusField)), nil, false},
		{"nobody claims it: kept", paused(managed("cozystack-helm", apply, "", valuesField)), []string{}, true},
		{"no managed fields at all: kept", paused(), []string{}, true},
		{"managers sorted, once each", paused(managed("z-tool", update, "", suspendField), managed("a-tool", apply, "", suspendField),
			managed("z-tool", apply, "", suspendField)), []string{"a-tool", "z-tool"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := SuspendedElsewhere(tc.obj, "cozystack-helm")
			if (got != nil) != tc.ext {
				t.Fatalf("external %v, want %t", got, tc.ext)
			}
			if got == nil {
				return
			}
			if strings.Join(got.By, ",") != strings.Join(tc.want, ",") {
				t.Errorf("by %v, want %v", got.By, tc.want)
			}
			if got.Kind != "HelmRelease" || got.Namespace != "tenant-a" || got.Name != "pg-app" {
				t.Errorf("names %+v", got)
			}
		})
	}
}

func TestExternalSuspendMessage(t *testing.T) {
	x := &ExternalSuspend{Kind: "HelmRelease", Namespace: "tenant-a", Name: "pg-app", By: []string{"backupstrategy-controller"}}
	m := x.Message()
	for _, s := range []string{
		"spec.suspend=true on HelmRelease tenant-a/pg-app was set by field manager backupstrategy-controller",
		"is kept",
		"Ask whoever suspended it",
		`kubectl patch helmrelease pg-app -n tenant-a --type=merge -p '{"spec":{"suspend":false}}'`,
	} {
		if !strings.Contains(m, s) {
			t.Errorf("message lacks %q: %s", s, m)
		}
	}
	if m := (&ExternalSuspend{Kind: "Terraform", Namespace: "cozy-tf-a", Name: "x"}).Message(); !strings.Contains(m, "its managed fields do not say who") {
		t.Errorf("unknown manager: %s", m)
	}
}

func TestSuspendPatch(t *testing.T) {
	if got := string(SuspendPatch(true)); got != `{"spec":{"suspend":true}}` {
		t.Errorf("suspend: %s", got)
	}
	if got := string(SuspendPatch(false)); got != `{"spec":{"suspend":false}}` {
		t.Errorf("resume: %s", got)
	}
}

func TestDesiredOperations(t *testing.T) {
	for _, tc := range []struct {
		name        string
		ann         map[string]string
		desiredAnn  map[string]string
		wantAnn     map[string]string
		wantSuspend bool
	}{
		{name: "nothing asked", ann: map[string]string{"team": "a"}},
		{
			name:    "reconcile request copied verbatim",
			ann:     map[string]string{appsv1alpha1.AnnotationReconcileRequestedAt: "2026-11-23T16:00:00Z"},
			wantAnn: map[string]string{appsv1alpha1.AnnotationReconcileRequestedAt: "2026-11-23T16:00:00Z"},
		},
		{
			name:       "next to the backend's own annotations",
			ann:        map[string]string{appsv1alpha1.AnnotationReconcileRequestedAt: "any string"},
			desiredAnn: map[string]string{"apps.cozystack.io-team": "a"},
			wantAnn:    map[string]string{"apps.cozystack.io-team": "a", appsv1alpha1.AnnotationReconcileRequestedAt: "any string"},
		},
		{
			name: "force and reset requests copied verbatim with the reconcile request",
			ann: map[string]string{appsv1alpha1.AnnotationReconcileRequestedAt: "t1", appsv1alpha1.AnnotationReconcileForceAt: "t1",
				appsv1alpha1.AnnotationReconcileResetAt: "t1", "team": "a"},
			wantAnn: map[string]string{appsv1alpha1.AnnotationReconcileRequestedAt: "t1", appsv1alpha1.AnnotationReconcileForceAt: "t1",
				appsv1alpha1.AnnotationReconcileResetAt: "t1"},
		},
		{
			name:        "suspended: created suspended",
			ann:         map[string]string{appsv1alpha1.AnnotationSuspend: "true"},
			wantSuspend: true,
		},
		{
			name: "suspend=false is not suspended",
			ann:  map[string]string{appsv1alpha1.AnnotationSuspend: "false"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"interval": "5m"}}}
			d.SetAnnotations(tc.desiredAnn)
			DesiredOperations(instanceWith(tc.ann), d)
			got := d.GetAnnotations()
			if len(got) != len(tc.wantAnn) {
				t.Fatalf("annotations %v, want %v", got, tc.wantAnn)
			}
			for k, v := range tc.wantAnn {
				if got[k] != v {
					t.Errorf("annotation %s=%q, want %q", k, got[k], v)
				}
			}
			s, found, _ := unstructured.NestedBool(d.Object, "spec", "suspend")
			if s != tc.wantSuspend || found != tc.wantSuspend {
				t.Errorf("spec.suspend %t (set: %t), want %t", s, found, tc.wantSuspend)
			}
		})
	}
}

// The request annotations are forwarded verbatim, never with the prefix the
// instance's own annotations get.
func TestOperationAnnotationsAreNotPrefixed(t *testing.T) {
	inst := instanceWith(map[string]string{
		appsv1alpha1.AnnotationReconcileRequestedAt: "now",
		appsv1alpha1.AnnotationReconcileForceAt:     "now",
		appsv1alpha1.AnnotationReconcileResetAt:     "now",
		appsv1alpha1.AnnotationSuspend:              "true",
		"team":                                      "a",
	})
	got := InstanceAnnotations(inst)
	if len(got) != 1 || got[appsv1alpha1.InstanceAnnotationPrefix+"team"] != "a" {
		t.Errorf("InstanceAnnotations = %v", got)
	}
}

func TestSuspendedView(t *testing.T) {
	suspended := instanceWith(map[string]string{appsv1alpha1.AnnotationSuspend: "true"})
	active := instanceWith(nil)
	behind := backing(map[string]any{"suspend": true}, 4, map[string]any{"observedGeneration": int64(3)})
	for _, tc := range []struct {
		name    string
		inst    *unstructured.Unstructured
		target  *unstructured.Unstructured
		wantGen int64
	}{
		{"suspended: the controller's last report is current", suspended, behind, 3},
		{"not suspended: as is", active, behind, 4},
		{"suspended but not paused yet: as is", suspended, backing(map[string]any{}, 4, map[string]any{"observedGeneration": int64(3)}), 4},
		{"never observed: as is", suspended, backing(map[string]any{"suspend": true}, 2, nil), 2},
		{"up to date: as is", suspended, backing(map[string]any{"suspend": true}, 2, map[string]any{"observedGeneration": int64(2)}), 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.target.GetGeneration()
			v := SuspendedView(IsSuspended(tc.inst), tc.target)
			if v.GetGeneration() != tc.wantGen {
				t.Errorf("generation %d, want %d", v.GetGeneration(), tc.wantGen)
			}
			if tc.target.GetGeneration() != before {
				t.Error("the target itself was modified")
			}
		})
	}
	if SuspendedView(true, nil) != nil {
		t.Error("nil target")
	}
}

func TestProjectOperations(t *testing.T) {
	handled := backing(map[string]any{}, 1, map[string]any{"lastHandledReconcileAt": "t1"})
	external := &ExternalSuspend{Kind: "HelmRelease", Namespace: "tenant-a", Name: "pg-app", By: []string{"backupstrategy-controller"}}
	externally := appsv1alpha1.ApplicationStatus{Conditions: []metav1.Condition{{Type: appsv1alpha1.ConditionSuspended, Status: metav1.ConditionTrue,
		Reason: appsv1alpha1.ReasonSuspendedExternally, ObservedGeneration: 3}}}
	for _, tc := range []struct {
		name        string
		inst        *unstructured.Unstructured
		target      *unstructured.Unstructured
		external    *ExternalSuspend
		before      appsv1alpha1.ApplicationStatus
		wantHandled string
		wantReason  string // "" means no Suspended condition
	}{
		{name: "mirrors lastHandledReconcileAt", inst: instanceWith(nil), target: handled, wantHandled: "t1"},
		{name: "keeps it while there is no backing object", inst: instanceWith(nil),
			before: appsv1alpha1.ApplicationStatus{LastHandledReconcileAt: "t0"}, wantHandled: "t0"},
		{name: "cleared when the backing object has none", inst: instanceWith(nil), target: backing(nil, 1, nil),
			before: appsv1alpha1.ApplicationStatus{LastHandledReconcileAt: "t0"}},
		{name: "suspended", inst: instanceWith(map[string]string{appsv1alpha1.AnnotationSuspend: "true"}), target: handled,
			wantHandled: "t1", wantReason: appsv1alpha1.ReasonSuspended},
		{name: "resumed: the condition goes", inst: instanceWith(nil), target: handled, wantHandled: "t1",
			before: appsv1alpha1.ApplicationStatus{Conditions: []metav1.Condition{{Type: appsv1alpha1.ConditionSuspended, Status: metav1.ConditionTrue}}}},
		{name: "suspended by someone else", inst: instanceWith(nil), target: handled, external: external,
			wantHandled: "t1", wantReason: appsv1alpha1.ReasonSuspendedExternally},
		{name: "the annotation's suspend is the one reported", inst: instanceWith(map[string]string{appsv1alpha1.AnnotationSuspend: "true"}),
			target: handled, external: external, wantHandled: "t1", wantReason: appsv1alpha1.ReasonSuspended},
		{name: "resumed by whoever suspended it: the condition goes", inst: instanceWith(nil), target: handled,
			before: externally, wantHandled: "t1"},
		{name: "nothing read this time: an external suspend stays reported", inst: instanceWith(nil),
			before: externally, wantReason: appsv1alpha1.ReasonSuspendedExternally},
		{name: "nothing read this time: the annotation's suspend goes with the annotation", inst: instanceWith(nil),
			before: appsv1alpha1.ApplicationStatus{Conditions: []metav1.Condition{{Type: appsv1alpha1.ConditionSuspended, Status: metav1.ConditionTrue,
				Reason: appsv1alpha1.ReasonSuspended}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := *tc.before.DeepCopy()
			ProjectOperations(tc.inst, tc.target, tc.external, &st)
			if st.LastHandledReconcileAt != tc.wantHandled {
				t.Errorf("lastHandledReconcileAt %q, want %q", st.LastHandledReconcileAt, tc.wantHandled)
			}
			c := conditions.Get(conditions.Holder{Conditions: &st.Conditions}, appsv1alpha1.ConditionSuspended)
			switch {
			case tc.wantReason == "" && c != nil:
				t.Errorf("Suspended condition %v, want none", c)
			case tc.wantReason != "" && c == nil:
				t.Errorf("no Suspended condition")
			case c != nil:
				if c.Status != metav1.ConditionTrue || c.Reason != tc.wantReason || c.ObservedGeneration != 3 {
					t.Errorf("Suspended condition %+v, want reason %s", c, tc.wantReason)
				}
				if tc.external != nil && c.Reason == appsv1alpha1.ReasonSuspendedExternally && c.Message != tc.external.Message() {
					t.Errorf("message %q", c.Message)
				}
			}
		})
	}
}
