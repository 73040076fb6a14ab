package ops

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/duration"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
)

// ObjectRef names an object of any kind.
type ObjectRef struct {
	APIVersion string
	Kind       string
	Namespace  string
	Name       string
}

func (r ObjectRef) String() string {
	if r.Namespace == "" {
		return r.Kind + " " + r.Name
	}
	return r.Kind + " " + r.Namespace + "/" + r.Name
}

// Condition is one status condition as read from an unstructured object.
type Condition struct {
	Type, Status, Reason, Message string
}

// FindCondition returns the condition of type t in obj's status.conditions.
// Pure.
func FindCondition(obj *unstructured.Unstructured, t string) (Condition, bool) {
	if obj == nil {
		return Condition{}, false
	}
	list, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	return findIn(list, t)
}

func findIn(list []any, t string) (Condition, bool) {
	for _, c := range list {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != t {
			continue
		}
		s := func(k string) string { v, _ := m[k].(string); return v }
		return Condition{Type: t, Status: s("status"), Reason: s("reason"), Message: s("message")}, true
	}
	return Condition{}, false
}

// str reads a string field.
func str(obj *unstructured.Unstructured, path ...string) string {
	if obj == nil {
		return ""
	}
	v, _, _ := unstructured.NestedString(obj.Object, path...)
	return v
}

// BackingRef is where the instance says its backing object is
// (status.backend: apiVersion, kind, name, and namespace when the backend
// keeps it outside the instance's namespace). ok is false while the
// instance reports none. Pure.
func BackingRef(inst *unstructured.Unstructured) (ObjectRef, bool) {
	ref := ObjectRef{
		APIVersion: str(inst, "status", "backend", "apiVersion"),
		Kind:       str(inst, "status", "backend", "kind"),
		Name:       str(inst, "status", "backend", "name"),
		Namespace:  str(inst, "status", "backend", "namespace"),
	}
	if ref.Kind == "" || ref.Name == "" || ref.APIVersion == "" {
		return ObjectRef{}, false
	}
	if ref.Namespace == "" {
		ref.Namespace = inst.GetNamespace()
	}
	return ref, true
}

// IsTerraformBacked reports an instance whose backend is Terraform. Pure.
func IsTerraformBacked(inst *unstructured.Unstructured) bool {
	return str(inst, "status", "backend", "type") == "Terraform" || str(inst, "status", "backend", "kind") == "Terraform"
}

// SecretState is what trace found of a Secret an object writes.
type SecretState struct {
	Namespace, Name string
	Exists          bool
	// Err: it could not be read (e.g. forbidden).
	Err error
}

// InstanceTrace is everything trace read about one instance.
type InstanceTrace struct {
	Instance *unstructured.Unstructured
	// Ref is where the backing object was looked for; Backing is nil when
	// it was not found (BackingErr says why when it could not be read).
	Ref        ObjectRef
	HasRef     bool
	Backing    *unstructured.Unstructured
	BackingErr error
	// Outputs is the Terraform object's outputs Secret (nil: none named).
	Outputs *SecretState
}

// InstanceTree builds the trace of an instance: the instance, its backing
// object and, for Terraform, the pending plan and the outputs Secret. Pure.
func InstanceTree(t InstanceTrace) *Node {
	inst := t.Instance
	root := conditionNode(inst, inst.GetKind(), "Ready")
	if c, ok := FindCondition(inst, appsv1alpha1.ConditionSuspended); ok && c.Status == "True" {
		if c.Reason == appsv1alpha1.ReasonSuspendedExternally {
			root.Notes = append(root.Notes, "suspended by someone else, kept until they resume it: "+c.Message)
		} else {
			root.Notes = append(root.Notes, notef("suspended: resume with `cozyplane resume %s/%s`", strings.ToLower(inst.GetKind()), inst.GetName()))
		}
	}
	if v := str(inst, "status", "lastHandledReconcileAt"); v != "" {
		root.Notes = append(root.Notes, "last handled reconcile request: "+v)
	}
	if p := str(inst, "status", "backend", "pendingPlan"); p != "" {
		root.Notes = append(root.Notes, notef("plan %s waits for approval: `cozyplane approve %s/%s`", p, strings.ToLower(inst.GetKind()), inst.GetName()))
	}
	if !t.HasRef {
		return root.Add(&Node{Kind: "(backing object)", Name: "unknown", Message: "the instance reports no backing object yet (status.backend is empty)"})
	}
	if t.Backing == nil {
		n := &Node{Kind: t.Ref.Kind, Namespace: t.Ref.Namespace, Name: t.Ref.Name, Reason: "NotFound", Message: "does not exist"}
		if t.BackingErr != nil {
			n.Reason, n.Message = "Unreadable", t.BackingErr.Error()
		}
		return root.Add(n)
	}
	b := conditionNode(t.Backing, t.Ref.Kind, "Ready")
	if s, _, _ := unstructured.NestedBool(t.Backing.Object, "spec", "suspend"); s {
		b.Notes = append(b.Notes, "spec.suspend=true: its controller does not reconcile it")
	}
	if v := str(t.Backing, "status", "lastAttemptedRevision"); v != "" {
		b.Notes = append(b.Notes, "last attempted revision: "+v)
	}
	if v := str(t.Backing, "status", "lastHandledReconcileAt"); v != "" {
		b.Notes = append(b.Notes, "last handled reconcile request: "+v)
	}
	if t.Ref.Kind == "Terraform" {
		pending := str(t.Backing, "status", "plan", "pending")
		approved := str(t.Backing, "spec", "approvePlan")
		switch {
		case pending != "" && approved != pending && approved != "auto":
			b.Notes = append(b.Notes, "pending plan: "+pending+" (not approved)")
		case pending != "":
			b.Notes = append(b.Notes, "pending plan: "+pending+" (approved)")
		}
		if outs, _, _ := unstructured.NestedStringSlice(t.Backing.Object, "status", "availableOutputs"); len(outs) > 0 {
			b.Notes = append(b.Notes, "outputs: "+strings.Join(outs, ", "))
		}
	}
	root.Add(b)
	if t.Outputs != nil {
		s := &Node{Kind: "Secret", Namespace: t.Outputs.Namespace, Name: t.Outputs.Name, Condition: "Exists", Status: "False",
			Message: "the outputs Secret is written once the module is applied"}
		switch {
		case t.Outputs.Err != nil:
			s.Status, s.Reason, s.Message = "Unknown", "Unreadable", t.Outputs.Err.Error()
		case t.Outputs.Exists:
			s.Status, s.Message = "True", "module outputs"
		}
		b.Add(s)
	}
	return root
}

// conditionNode is a node for obj showing its condition of type cond.
func conditionNode(obj *unstructured.Unstructured, kind, cond string) *Node {
	n := &Node{Kind: kind, Namespace: obj.GetNamespace(), Name: obj.GetName(), Condition: cond}
	if c, ok := FindCondition(obj, cond); ok {
		n.Status, n.Reason, n.Message = c.Status, c.Reason, c.Message
	}
	return n
}

// OutputsSecretName is the Secret a Terraform object writes its outputs to
// (spec.writeOutputsToSecret.name), or "". Pure.
func OutputsSecretName(tf *unstructured.Unstructured) string {
	return str(tf, "spec", "writeOutputsToSecret", "name")
}

// Row is one line of `cozyplane get`.
type Row struct {
	Namespace, Kind, Name, Ready, Reason, Suspended, Age, Backing, Message string
}

// Rows builds the get table from instances, in the order given. Pure.
func Rows(items []unstructured.Unstructured, now time.Time) []Row {
	rows := make([]Row, 0, len(items))
	for i := range items {
		inst := &items[i]
		r := Row{Namespace: inst.GetNamespace(), Kind: inst.GetKind(), Name: inst.GetName(), Ready: "-", Backing: "-"}
		if c, ok := FindCondition(inst, "Ready"); ok {
			r.Ready, r.Reason, r.Message = c.Status, c.Reason, oneLine(c.Message)
		}
		if c, ok := FindCondition(inst, appsv1alpha1.ConditionSuspended); ok && c.Status == "True" {
			r.Suspended = "True"
		}
		if ts := inst.GetCreationTimestamp(); !ts.IsZero() {
			r.Age = duration.HumanDuration(now.Sub(ts.Time))
		}
		if ref, ok := BackingRef(inst); ok {
			r.Backing = ref.Kind + "/" + ref.Name
			if ref.Namespace != inst.GetNamespace() {
				r.Backing = ref.Kind + "/" + ref.Namespace + "/" + ref.Name
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// FormatRows renders rows as a table (tab-separated, for a tabwriter). Pure.
func FormatRows(rows []Row, allNamespaces bool) []string {
	head := "KIND\tNAME\tREADY\tREASON\tSUSPENDED\tAGE\tBACKING OBJECT\tMESSAGE"
	if allNamespaces {
		head = "NAMESPACE\t" + head
	}
	out := []string{head}
	for _, r := range rows {
		line := fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s", r.Kind, r.Name, r.Ready, dash(r.Reason), dash(r.Suspended), dash(r.Age), r.Backing, dash(r.Message))
		if allNamespaces {
			line = r.Namespace + "\t" + line
		}
		out = append(out, line)
	}
	return out
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Statuses `cozyplane get --status` selects.
const (
	// StatusReady: Ready is True.
	StatusReady = "ready"
	// StatusNotReady: Ready is False.
	StatusNotReady = "not-ready"
	// StatusUnknown: Ready is Unknown, or the instance reports none yet.
	StatusUnknown = "unknown"
	// StatusSuspended: the Suspended condition is True.
	StatusSuspended = "suspended"
)

// Statuses are the values of `get --status`, in the order help lists them.
var Statuses = []string{StatusReady, StatusNotReady, StatusUnknown, StatusSuspended}

// CheckStatus refuses a --status value that selects nothing. Pure.
func CheckStatus(s string) error {
	if s == "" {
		return nil
	}
	for _, v := range Statuses {
		if s == v {
			return nil
		}
	}
	return inputErrorf("unknown status %q: use %s", s, strings.Join(Statuses, ", "))
}

// HasStatus reports whether the instance is in status s ("" matches every
// instance). Ready, not-ready and unknown read the Ready condition;
// suspended the Suspended condition, so a suspended instance is also in
// one of the other three. Pure.
func HasStatus(inst *unstructured.Unstructured, s string) bool {
	if s == "" {
		return true
	}
	if s == StatusSuspended {
		c, ok := FindCondition(inst, appsv1alpha1.ConditionSuspended)
		return ok && c.Status == "True"
	}
	c, _ := FindCondition(inst, "Ready")
	switch c.Status {
	case "True":
		return s == StatusReady
	case "False":
		return s == StatusNotReady
	}
	return s == StatusUnknown
}
