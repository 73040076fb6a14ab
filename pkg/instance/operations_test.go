package instance

import (
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
		want      SuspendAction
	}{
		{"not suspended, running", false, running, ownership.Controlled, SuspendApply},
		{"not suspended, suspend false", false, explicitFalse, ownership.Controlled, SuspendApply},
		{"not suspended, paused by someone: resumed", false, paused, ownership.Controlled, ResumeSet},
		{"suspended, running: suspend only", true, running, ownership.Controlled, SuspendSet},
		{"suspended, suspend false: suspend only", true, explicitFalse, ownership.Controlled, SuspendSet},
		{"suspended and paused: hold", true, paused, ownership.Controlled, SuspendHold},
		{"suspended, absent: created with the desired state", true, nil, ownership.Absent, SuspendApply},
		{"suspended, adopting: the desired state (suspend included)", true, running, ownership.Adopt, SuspendApply},
		{"not suspended, adopting a paused object: the desired state", false, paused, ownership.Adopt, SuspendApply},
		{"foreign objects are never patched", true, running, ownership.Foreign, SuspendApply},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := DecideSuspend(tc.suspended, tc.live, tc.verdict); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
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
			v := SuspendedView(tc.inst, tc.target)
			if v.GetGeneration() != tc.wantGen {
				t.Errorf("generation %d, want %d", v.GetGeneration(), tc.wantGen)
			}
			if tc.target.GetGeneration() != before {
				t.Error("the target itself was modified")
			}
		})
	}
	if SuspendedView(suspended, nil) != nil {
		t.Error("nil target")
	}
}

func TestProjectOperations(t *testing.T) {
	handled := backing(map[string]any{}, 1, map[string]any{"lastHandledReconcileAt": "t1"})
	for _, tc := range []struct {
		name        string
		inst        *unstructured.Unstructured
		target      *unstructured.Unstructured
		before      appsv1alpha1.ApplicationStatus
		wantHandled string
		wantCond    metav1.ConditionStatus // "" means absent
	}{
		{name: "mirrors lastHandledReconcileAt", inst: instanceWith(nil), target: handled, wantHandled: "t1"},
		{name: "keeps it while there is no backing object", inst: instanceWith(nil),
			before: appsv1alpha1.ApplicationStatus{LastHandledReconcileAt: "t0"}, wantHandled: "t0"},
		{name: "cleared when the backing object has none", inst: instanceWith(nil), target: backing(nil, 1, nil),
			before: appsv1alpha1.ApplicationStatus{LastHandledReconcileAt: "t0"}},
		{name: "suspended", inst: instanceWith(map[string]string{appsv1alpha1.AnnotationSuspend: "true"}), target: handled,
			wantHandled: "t1", wantCond: metav1.ConditionTrue},
		{name: "resumed: the condition goes", inst: instanceWith(nil), target: handled, wantHandled: "t1",
			before: appsv1alpha1.ApplicationStatus{Conditions: []metav1.Condition{{Type: appsv1alpha1.ConditionSuspended, Status: metav1.ConditionTrue}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := tc.before
			ProjectOperations(tc.inst, tc.target, &st)
			if st.LastHandledReconcileAt != tc.wantHandled {
				t.Errorf("lastHandledReconcileAt %q, want %q", st.LastHandledReconcileAt, tc.wantHandled)
			}
			c := conditions.Get(conditions.Holder{Conditions: &st.Conditions}, appsv1alpha1.ConditionSuspended)
			switch {
			case tc.wantCond == "" && c != nil:
				t.Errorf("Suspended condition %v, want none", c)
			case tc.wantCond != "" && c == nil:
				t.Errorf("no Suspended condition")
			case c != nil:
				if c.Status != tc.wantCond || c.Reason != appsv1alpha1.ReasonSuspended || c.ObservedGeneration != 3 {
					t.Errorf("Suspended condition %+v", c)
				}
			}
		})
	}
}
