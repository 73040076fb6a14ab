package gatewayruntime

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/record"
)

// Write is one object a reconcile created, changed or deleted.
type Write struct {
	// Object is the object written, the event's related object.
	Object runtime.Object
	// Kind and Name name it in the note.
	Kind, Name string
	// Outcome is what the write did: created, updated, deleted.
	Outcome string
	// Why the write was needed.
	Why string
}

// Writes collects the objects one reconcile of a TenantGateway writes, so
// that they are recorded as one event for each of Applied and Deleted
// (Record) rather than one per object: a TenantGateway's Certificates are
// made a dozen at a time, and an event costs the API server what the write
// it tells of costs. Each write is still logged on its own.
type Writes struct {
	mu               sync.Mutex
	applied, deleted []Write
}

type writesKey struct{}

// WithWrites returns ctx carrying a new Writes, which Base.Apply and
// Base.Delete add to instead of recording an event each.
func WithWrites(ctx context.Context) (context.Context, *Writes) {
	w := &Writes{}
	return context.WithValue(ctx, writesKey{}, w), w
}

// writesOf is the Writes ctx carries, nil when none.
func writesOf(ctx context.Context) *Writes {
	w, _ := ctx.Value(writesKey{}).(*Writes)
	return w
}

// add keeps wr among the applied writes, or the deleted ones.
func (w *Writes) add(wr Write, deleted bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if deleted {
		w.deleted = append(w.deleted, wr)
	} else {
		w.applied = append(w.applied, wr)
	}
}

// Record records the collected writes on tgw: one Applied event naming
// every object created or changed, one Deleted event naming every object
// deleted; none for none. Each event's related object is the first it
// names, so that repeated writes of one object fold into one series, as
// they did when each write was its own event.
func (w *Writes) Record(e record.Events, tgw *gatewayv1alpha1.TenantGateway) {
	w.mu.Lock()
	applied, deleted := w.applied, w.deleted
	w.applied, w.deleted = nil, nil
	w.mu.Unlock()
	recordWrites(e, tgw, applied, false)
	recordWrites(e, tgw, deleted, true)
}

// recordWrites records ws, all applied or all deleted, as one event on tgw.
func recordWrites(e record.Events, tgw *gatewayv1alpha1.TenantGateway, ws []Write, deleted bool) {
	switch {
	case len(ws) == 0:
	case deleted:
		e.Normal(tgw, ws[0].Object, gatewayv1alpha1.EventDeleted, "Delete", WritesNote(ws))
	default:
		e.Normal(tgw, ws[0].Object, gatewayv1alpha1.EventApplied, "Apply", WritesNote(ws))
	}
}

// tell records wr: into the Writes ctx carries (WithWrites), or, with
// none, as an event of its own on tgw.
func tell(ctx context.Context, e record.Events, tgw *gatewayv1alpha1.TenantGateway, wr Write, deleted bool) {
	if w := writesOf(ctx); w != nil {
		w.add(wr, deleted)
		return
	}
	recordWrites(e, tgw, []Write{wr}, deleted)
}

// writesNoteBudget is how long WritesNote lets the names grow before it
// counts the rest: an event's note holds 1,024 bytes.
const writesNoteBudget = 900

// WritesNote says what ws did and why, the objects with the same reason
// together, in the order written: "Certificate a created, Certificate b
// created: it did not exist; Gateway g updated: it differed from the
// desired state". One write reads as it did as its own event. Past
// writesNoteBudget the rest are counted ("and 12 more"): the log names
// each. Pure.
func WritesNote(ws []Write) string {
	var whys []string
	byWhy := map[string][]string{}
	for _, wr := range ws {
		if _, ok := byWhy[wr.Why]; !ok {
			whys = append(whys, wr.Why)
		}
		byWhy[wr.Why] = append(byWhy[wr.Why], fmt.Sprintf("%s %s %s", wr.Kind, wr.Name, wr.Outcome))
	}
	var b strings.Builder
	left := len(ws)
	for i, why := range whys {
		if i > 0 {
			b.WriteString("; ")
		}
		for j, entry := range byWhy[why] {
			if b.Len()+len(entry)+len(why) > writesNoteBudget && left < len(ws) {
				b.WriteString(fmt.Sprintf(" and %d more (the log names each)", left))
				return b.String()
			}
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString(entry)
			left--
		}
		b.WriteString(": " + why)
	}
	return b.String()
}
