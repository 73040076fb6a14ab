package conditions

import (
	"strings"
	"testing"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

type fake struct {
	gen   int64
	conds []metav1.Condition
}

func (f *fake) GetGeneration() int64               { return f.gen }
func (f *fake) GetConditions() []metav1.Condition  { return f.conds }
func (f *fake) SetConditions(c []metav1.Condition) { f.conds = c }

// kstatusOf renders the fake as a custom resource and asks kstatus.
func kstatusOf(t *testing.T, f *fake, observed int64) status.Status {
	t.Helper()
	conds := make([]any, 0, len(f.conds))
	for _, c := range f.conds {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&c)
		if err != nil {
			t.Fatal(err)
		}
		conds = append(conds, m)
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps.cozystack.io/v1alpha1",
		"kind":       "Thing",
		"metadata":   map[string]any{"name": "x", "namespace": "y", "generation": f.gen},
		"status":     map[string]any{"observedGeneration": observed, "conditions": conds},
	}}
	res, err := status.Compute(u)
	if err != nil {
		t.Fatal(err)
	}
	return res.Status
}

func TestKstatusConformance(t *testing.T) {
	tests := []struct {
		name     string
		mark     func(*fake)
		observed int64
		want     status.Status
	}{
		{"ready", func(f *fake) { MarkReady(f, "Served", "ok") }, 3, status.CurrentStatus},
		{"ready but stale generation", func(f *fake) { MarkReady(f, "Served", "ok") }, 2, status.InProgressStatus},
		{"reconciling", func(f *fake) { MarkReconciling(f, "Progressing", "applying") }, 3, status.InProgressStatus},
		{"stalled", func(f *fake) { MarkStalled(f, "InvalidSchema", "bad") }, 3, status.FailedStatus},
		{"not ready", func(f *fake) { MarkNotReady(f, "Waiting", "dependency") }, 3, status.InProgressStatus},
		{"not ready, reconciling", func(f *fake) { MarkNotReadyReconciling(f, "Waiting", "dependency") }, 3, status.InProgressStatus},
		{"stalled then fixed", func(f *fake) {
			MarkStalled(f, "InvalidSchema", "bad")
			MarkReady(f, "Served", "ok")
		}, 3, status.CurrentStatus},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fake{gen: 3}
			tt.mark(f)
			if got := kstatusOf(t, f, tt.observed); got != tt.want {
				t.Fatalf("kstatus = %s, want %s (conditions %+v)", got, tt.want, f.conds)
			}
		})
	}
}

func TestSetStampsGenerationAndKeepsTransitionTime(t *testing.T) {
	f := &fake{gen: 7}
	Set(f, Ready, metav1.ConditionFalse, "A", "first")
	first := Get(f, Ready).LastTransitionTime
	f.gen = 8
	Set(f, Ready, metav1.ConditionFalse, "B", "second")
	c := Get(f, Ready)
	if c.ObservedGeneration != 8 || c.Reason != "B" || c.Message != "second" {
		t.Fatalf("condition not updated: %+v", c)
	}
	if !c.LastTransitionTime.Equal(&first) {
		t.Fatalf("transition time moved without a status change")
	}
}

func TestMessagesAreBounded(t *testing.T) {
	f := &fake{gen: 1}
	long := make([]byte, MaxMessage+10)
	for i := range long {
		long[i] = 'x'
	}
	Set(f, Ready, metav1.ConditionFalse, "A", string(long))
	if n := len(Get(f, Ready).Message); n != MaxMessage {
		t.Fatalf("message length %d, want %d", n, MaxMessage)
	}
}

func TestHolder(t *testing.T) {
	var conds []metav1.Condition
	h := Holder{Generation: 2, Conditions: &conds}
	MarkStalled(h, "R", "m")
	if len(conds) != 2 || !IsTrue(h, Stalled) {
		t.Fatalf("holder did not write through: %+v", conds)
	}
}

func TestTruncateKeepsCharactersWhole(t *testing.T) {
	// "é" is two bytes: a cut at MaxMessage-3 would fall inside one.
	s := strings.Repeat("é", MaxMessage)
	got := Truncate(s)
	if len(got) > MaxMessage || !utf8.ValidString(got) || !strings.HasSuffix(got, "...") {
		t.Fatalf("Truncate: %d bytes, valid UTF-8 %v, suffix %q", len(got), utf8.ValidString(got), got[len(got)-3:])
	}
	if short := "no cut"; Truncate(short) != short {
		t.Errorf("Truncate(%q) = %q", short, Truncate(short))
	}
}
