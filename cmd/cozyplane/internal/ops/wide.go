package ops

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
)

// SourceGroup serves Flux's sources (HelmChart, OCIRepository,
// GitRepository, Bucket, ExternalArtifact).
const SourceGroup = "source.toolkit.fluxcd.io"

// LastEvents is how many of an object's latest events trace -o wide shows.
const LastEvents = 5

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// WideTrace is what trace -o wide reads beyond InstanceTrace: the backing
// object's chart or module source, the instance's Pods (by the lineage
// labels) and the latest events of the instance and of its backing object.
type WideTrace struct {
	SourceRef ObjectRef
	HasSource bool
	Source    *unstructured.Unstructured
	SourceErr error
	Pods      []unstructured.Unstructured
	PodsErr   error
	// Events of the instance and of the backing object, oldest first.
	InstanceEvents, BackingEvents []unstructured.Unstructured
	EventsErr                     error
	Now                           time.Time
}

// SourceOf is where a backing object's chart or module comes from: a
// HelmRelease's status.helmChart (the HelmChart helm-controller made from
// spec.chart), else its spec.chartRef; a Terraform object's spec.sourceRef.
// A namespace left out is the backing object's. ok is false when none is
// named. Pure.
func SourceOf(backing *unstructured.Unstructured) (ObjectRef, bool) {
	ns := backing.GetNamespace()
	ref := func(path ...string) (ObjectRef, bool) {
		r := ObjectRef{APIVersion: SourceGroup, Kind: str(backing, append(path, "kind")...), Name: str(backing, append(path, "name")...),
			Namespace: str(backing, append(path, "namespace")...)}
		if r.Namespace == "" {
			r.Namespace = ns
		}
		return r, r.Kind != "" && r.Name != ""
	}
	switch backing.GetKind() {
	case "HelmRelease":
		if hc := str(backing, "status", "helmChart"); hc != "" {
			if n, name, ok := strings.Cut(hc, "/"); ok {
				return ObjectRef{APIVersion: SourceGroup, Kind: "HelmChart", Namespace: n, Name: name}, true
			}
		}
		return ref("spec", "chartRef")
	case "Terraform":
		return ref("spec", "sourceRef")
	}
	return ObjectRef{}, false
}

// TraceWide reads what -o wide adds to the trace of inst.
func (g *Gatherer) TraceWide(ctx context.Context, t InstanceTrace) WideTrace {
	w := WideTrace{Now: time.Now()}
	inst := t.Instance
	if t.Backing != nil {
		w.SourceRef, w.HasSource = SourceOf(t.Backing)
	}
	if w.HasSource {
		gvr, err := g.resourceFor(schema.GroupKind{Group: SourceGroup, Kind: w.SourceRef.Kind})
		if err == nil {
			w.Source, err = g.Get(ctx, gvr, w.SourceRef.Namespace, w.SourceRef.Name)
			if apierrors.IsNotFound(err) {
				w.Source, err = nil, nil
			}
		}
		w.SourceErr = err
	}
	sel := labels.SelectorFromSet(labels.Set{
		appsv1alpha1.LabelApplicationGroup: inst.GroupVersionKind().Group,
		appsv1alpha1.LabelApplicationKind:  inst.GetKind(),
		appsv1alpha1.LabelApplicationName:  inst.GetName(),
	})
	w.Pods, w.PodsErr = g.List(ctx, podsGVR, inst.GetNamespace(), metav1.ListOptions{LabelSelector: sel.String()})
	sort.Slice(w.Pods, func(i, j int) bool { return w.Pods[i].GetName() < w.Pods[j].GetName() })
	self := ObjectRef{Kind: inst.GetKind(), Namespace: inst.GetNamespace(), Name: inst.GetName()}
	if w.InstanceEvents, w.EventsErr = g.Events(ctx, []ObjectRef{self}); w.EventsErr == nil && t.Backing != nil {
		w.BackingEvents, w.EventsErr = g.Events(ctx, []ObjectRef{{Kind: t.Ref.Kind, Namespace: t.Ref.Namespace, Name: t.Ref.Name}})
	}
	return w
}

// WideInstanceTree is InstanceTree with the source below the backing
// object, the Pods below the instance, and the latest events as notes of
// the object they are about. Pure.
func WideInstanceTree(t InstanceTrace, w WideTrace) *Node {
	root := InstanceTree(t)
	root.Notes = append(root.Notes, eventNotes(w.InstanceEvents, w.Now)...)
	if w.EventsErr != nil {
		root.Notes = append(root.Notes, "events unreadable: "+w.EventsErr.Error())
	}
	var backing *Node
	if t.Backing != nil {
		for _, c := range root.Children {
			if c.Kind == t.Ref.Kind && c.Name == t.Ref.Name {
				backing = c
			}
		}
	}
	if backing != nil {
		backing.Notes = append(backing.Notes, eventNotes(w.BackingEvents, w.Now)...)
		if w.HasSource {
			backing.Add(sourceNode(w))
		} else {
			backing.Add(&Node{Kind: "(source)", Name: "unknown", Message: "the backing object names no chart or module source"})
		}
	}
	switch {
	case w.PodsErr != nil:
		root.Add(&Node{Kind: "Pod", Namespace: t.Instance.GetNamespace(), Name: "*", Reason: "Unreadable", Message: w.PodsErr.Error()})
	default:
		for i := range w.Pods {
			root.Add(podNode(&w.Pods[i]))
		}
	}
	return root
}

func sourceNode(w WideTrace) *Node {
	r := w.SourceRef
	n := &Node{Kind: r.Kind, Namespace: r.Namespace, Name: r.Name, Reason: "NotFound", Message: "does not exist"}
	switch {
	case w.SourceErr != nil:
		n.Reason, n.Message = "Unreadable", w.SourceErr.Error()
	case w.Source != nil:
		n = conditionNode(w.Source, r.Kind, "Ready")
		if c := str(w.Source, "spec", "chart"); c != "" {
			v := str(w.Source, "spec", "version")
			if v == "" {
				v = "*"
			}
			n.Notes = append(n.Notes, fmt.Sprintf("chart %s, version %s", c, v))
		}
		if u := str(w.Source, "spec", "url"); u != "" {
			n.Notes = append(n.Notes, "url: "+u)
		}
		if v := str(w.Source, "status", "artifact", "revision"); v != "" {
			n.Notes = append(n.Notes, "artifact revision: "+v)
		}
	}
	return n
}

func podNode(p *unstructured.Unstructured) *Node {
	n := conditionNode(p, "Pod", "Ready")
	if phase := str(p, "status", "phase"); phase != "" {
		n.Notes = append(n.Notes, "phase: "+phase)
	}
	statuses, _, _ := unstructured.NestedSlice(p.Object, "status", "containerStatuses")
	for _, s := range statuses {
		m, ok := s.(map[string]any)
		if !ok {
			continue
		}
		name, _ := m["name"].(string)
		restarts, _ := m["restartCount"].(int64)
		if f, ok := m["restartCount"].(float64); ok {
			restarts = int64(f)
		}
		line := fmt.Sprintf("container %s: ready=%v, restarts %d", name, m["ready"], restarts)
		if st, ok := m["state"].(map[string]any); ok {
			if wt, ok := st["waiting"].(map[string]any); ok {
				if reason, _ := wt["reason"].(string); reason != "" {
					line += ", waiting: " + reason
				}
			}
		}
		n.Notes = append(n.Notes, line)
	}
	return n
}

// eventNotes are the last LastEvents events as notes, oldest first. Pure.
func eventNotes(events []unstructured.Unstructured, now time.Time) []string {
	if len(events) > LastEvents {
		events = events[len(events)-LastEvents:]
	}
	out := make([]string, 0, len(events))
	for i := range events {
		e := &events[i]
		ago := "-"
		if t := EventTime(e); !t.IsZero() {
			ago = duration.HumanDuration(now.Sub(t)) + " ago"
		}
		line := fmt.Sprintf("event %s: %s %s: %s", ago, dash(str(e, "type")), dash(str(e, "reason")), oneLine(str(e, "message")))
		if n := count(e); n > 1 {
			line += fmt.Sprintf(" (x%d)", n)
		}
		out = append(out, line)
	}
	return out
}
