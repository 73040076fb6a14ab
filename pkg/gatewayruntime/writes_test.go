package gatewayruntime

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/record"
)

func TestWritesNote(t *testing.T) {
	created := func(kind, name string) Write {
		return Write{Kind: kind, Name: name, Outcome: "created", Why: "it did not exist"}
	}
	many := make([]Write, 40)
	for i := range many {
		many[i] = created("Certificate", fmt.Sprintf("cozystack-app-%02d-tenant-example-org-tls", i))
	}
	for _, tc := range []struct {
		name string
		ws   []Write
		want string
	}{
		{"one write reads as its own event did", []Write{created("Gateway", "cozystack")}, "Gateway cozystack created: it did not exist"},
		{"the same reason together, in order", []Write{created("Issuer", "gw"), created("Certificate", "a"), created("Certificate", "b")},
			"Issuer gw created, Certificate a created, Certificate b created: it did not exist"},
		{"different reasons apart", []Write{created("Certificate", "a"),
			{Kind: "Issuer", Name: "gw", Outcome: "updated", Why: "it differed from the desired state"}, created("Certificate", "b")},
			"Certificate a created, Certificate b created: it did not exist; Issuer gw updated: it differed from the desired state"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := WritesNote(tc.ws); got != tc.want {
				t.Errorf("WritesNote = %q, want %q", got, tc.want)
			}
		})
	}
	t.Run("past the budget the rest are counted", func(t *testing.T) {
		got := WritesNote(many)
		if len(got) > 1024 {
			t.Fatalf("note of %d bytes, the API server takes 1,024", len(got))
		}
		named := strings.Count(got, " created")
		if !strings.HasSuffix(got, fmt.Sprintf(" and %d more (the log names each)", len(many)-named)) || named == 0 || named == len(many) {
			t.Errorf("note %q names %d of %d and does not count the rest", got, named, len(many))
		}
	})
}

// recorded keeps each event a recorder is given.
type recorded struct{ events []string }

func (r *recorded) Eventf(_, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	name := ""
	if ref, ok := related.(*corev1.ObjectReference); ok {
		name = ref.Name
	}
	r.events = append(r.events, fmt.Sprintf("%s %s %s related=%s: %s", eventtype, reason, action, name, fmt.Sprintf(note, args...)))
}

func TestWritesRecord(t *testing.T) {
	tgw := &gatewayv1alpha1.TenantGateway{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "cozystack"}}
	obj := func(name string) runtime.Object {
		return &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: name}}
	}
	ctx, w := WithWrites(context.Background())
	if writesOf(ctx) != w || writesOf(context.Background()) != nil {
		t.Fatal("the context does not carry the Writes it was given")
	}
	rec := &recorded{}
	e := record.Events{Recorder: rec}
	w.Record(e, tgw)
	if len(rec.events) != 0 {
		t.Fatalf("a reconcile that wrote nothing recorded %q", rec.events)
	}
	w.add(Write{Object: obj("a"), Kind: "Certificate", Name: "a", Outcome: "created", Why: "it did not exist"}, false)
	w.add(Write{Object: obj("old"), Kind: "Certificate", Name: "old", Outcome: "deleted", Why: "unused"}, true)
	w.add(Write{Object: obj("b"), Kind: "Certificate", Name: "b", Outcome: "created", Why: "it did not exist"}, false)
	w.Record(e, tgw)
	want := []string{
		"Normal Applied Apply related=a: Certificate a created, Certificate b created: it did not exist",
		"Normal Deleted Delete related=old: Certificate old deleted: unused",
	}
	if strings.Join(rec.events, "\n") != strings.Join(want, "\n") {
		t.Errorf("recorded\n%s\nwant\n%s", strings.Join(rec.events, "\n"), strings.Join(want, "\n"))
	}
	// Recorded once: a second Record has nothing left to tell.
	w.Record(e, tgw)
	if len(rec.events) != len(want) {
		t.Errorf("a second Record recorded again: %q", rec.events[len(want):])
	}
}
