package ops

import (
	"context"
	"fmt"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"
)

// EventsGVR is core/v1 Events, the ones controllers record (controller-runtime's
// recorder, Flux's controllers).
var EventsGVR = schema.GroupVersionResource{Version: "v1", Resource: "events"}

// Events reads the Events about each of objects (kind, namespace and name),
// oldest first.
func (g *Gatherer) Events(ctx context.Context, objects []ObjectRef) ([]unstructured.Unstructured, error) {
	var out []unstructured.Unstructured
	for _, o := range objects {
		sel := fields.Set{"involvedObject.kind": o.Kind, "involvedObject.name": o.Name}
		items, err := g.List(ctx, EventsGVR, o.Namespace, metav1.ListOptions{FieldSelector: sel.AsSelector().String()})
		if err != nil {
			return nil, fmt.Errorf("listing the events of %s: %w", o, err)
		}
		out = append(out, EventsAbout(items, o)...)
	}
	SortEvents(out)
	return out, nil
}

// EventsAbout keeps the events whose involvedObject is o (the API server
// filters by field selector already; a client that does not, does not
// widen the answer). Pure.
func EventsAbout(items []unstructured.Unstructured, o ObjectRef) []unstructured.Unstructured {
	var out []unstructured.Unstructured
	for i := range items {
		e := &items[i]
		if str(e, "involvedObject", "kind") == o.Kind && str(e, "involvedObject", "name") == o.Name &&
			(o.Namespace == "" || e.GetNamespace() == o.Namespace) {
			out = append(out, *e)
		}
	}
	return out
}

// EventTime is when the event was last seen: lastTimestamp, else the
// series' lastObservedTime, else eventTime, else its creation. Pure.
func EventTime(e *unstructured.Unstructured) time.Time {
	for _, path := range [][]string{{"lastTimestamp"}, {"series", "lastObservedTime"}, {"eventTime"}} {
		if v := str(e, path...); v != "" {
			if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
				return t
			}
		}
	}
	return e.GetCreationTimestamp().Time
}

// SortEvents orders events oldest first (then by name, for a stable
// order). Pure.
func SortEvents(items []unstructured.Unstructured) {
	sort.SliceStable(items, func(i, j int) bool {
		a, b := EventTime(&items[i]), EventTime(&items[j])
		if !a.Equal(b) {
			return a.Before(b)
		}
		return items[i].GetName() < items[j].GetName()
	})
}

// FormatEvents renders events as a table (tab-separated, for a tabwriter):
// how long ago, type, reason, the object (Kind/name), the count when more
// than one, and the message on one line. Pure.
func FormatEvents(items []unstructured.Unstructured, now time.Time) []string {
	out := []string{"LAST SEEN\tTYPE\tREASON\tOBJECT\tMESSAGE"}
	for i := range items {
		e := &items[i]
		seen := "-"
		if t := EventTime(e); !t.IsZero() {
			seen = duration.HumanDuration(now.Sub(t))
		}
		msg := oneLine(str(e, "message"))
		if n := count(e); n > 1 {
			msg = fmt.Sprintf("%s (x%d)", msg, n)
		}
		out = append(out, fmt.Sprintf("%s\t%s\t%s\t%s/%s\t%s", seen, dash(str(e, "type")), dash(str(e, "reason")),
			str(e, "involvedObject", "kind"), str(e, "involvedObject", "name"), dash(msg)))
	}
	return out
}

// count is the event's count (an int64 from the API server; a float64 when
// decoded from YAML or JSON into a plain map).
func count(e *unstructured.Unstructured) int64 {
	v, _, _ := unstructured.NestedFieldNoCopy(e.Object, "count")
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	}
	return 0
}
