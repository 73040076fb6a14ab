package record

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
)

func TestEvents(t *testing.T) {
	rec := events.NewFakeRecorder(4)
	e := Events{Recorder: rec}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tenant-a"}}
	e.Normal(ns, nil, "Labelled", "Label", "a note with 100% kept verbatim")
	e.Warning(ns, nil, "NotOwned", "Apply", "someone else's")
	for _, want := range []string{"Normal Labelled a note with 100% kept verbatim", "Warning NotOwned someone else's"} {
		if got := <-rec.Events; got != want {
			t.Errorf("event %q, want %q", got, want)
		}
	}
	// A nil recorder records nothing and does not panic.
	Events{}.Warning(ns, nil, "NotOwned", "Apply", "dropped")
}
