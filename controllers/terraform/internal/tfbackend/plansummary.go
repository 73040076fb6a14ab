package tfbackend

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	tfv1alpha2 "github.com/cozyplane/cozyplane/api/tofu/v1alpha2"
)

// What a pending plan would change, for the tenant who approves it: every
// Terraform object asks tofu-controller to store its plans in readable form
// too (spec.storeReadablePlan: human, terraform show's output in ConfigMaps of
// the platform namespace). The terraform controller reads that text, keeps
// only the counts and the addresses of the resources it changes (no attribute
// values), and writes them on the Terraform object, which it owns, in the
// annotation AnnotationPlanSummary; the instance's PendingPlan condition
// (plan.go) quotes them while that plan waits.
const (
	// AnnotationPlanSummary holds the JSON PlanSummary of the plan pending
	// on a Terraform object.
	AnnotationPlanSummary = "apps.cozystack.io/plan-summary"
	// MaxPlanChanges bounds the addresses a summary lists; the rest are
	// counted in PlanSummary.More.
	MaxPlanChanges = 30

	planWorkspaceLabel  = "infra.contrib.fluxcd.io/plan-workspace"
	planChunkAnnotation = "infra.contrib.fluxcd.io/plan-chunk"
	planIDAnnotation    = "savedPlan"
	planDataKey         = "tfplan"
	// DefaultWorkspace is the workspace of Terraform objects that name
	// none (the instance reconciler's).
	DefaultWorkspace = "default"
)

// PlanSummary is what a plan changes: the counts of terraform's "Plan:" line
// and, in the plan's order, one "<action> <address>" per resource it changes
// (create, update, replace, destroy, read, import, move).
type PlanSummary struct {
	Plan    string   `json:"plan"`
	Import  int      `json:"import,omitempty"`
	Add     int      `json:"add"`
	Change  int      `json:"change"`
	Destroy int      `json:"destroy"`
	Changes []string `json:"changes,omitempty"`
	More    int      `json:"more,omitempty"`
}

var (
	ansi       = regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]`)
	changeLine = regexp.MustCompile(`^\s*# (.+?) (will be created|will be destroyed|will be updated in-place|must be replaced|will be read during apply|will be imported|has moved to .+)$`)
	planLine   = regexp.MustCompile(`^Plan: (?:(\d+) to import, )?(\d+) to add, (\d+) to change, (\d+) to destroy\.`)
)

var actions = map[string]string{
	"will be created": "create", "will be destroyed": "destroy", "will be updated in-place": "update",
	"must be replaced": "replace", "will be read during apply": "read", "will be imported": "import",
}

// ParseHumanPlan summarises terraform show's text of plan id. Pure.
func ParseHumanPlan(id, text string) PlanSummary {
	s := PlanSummary{Plan: id}
	for _, line := range strings.Split(ansi.ReplaceAllString(text, ""), "\n") {
		line = strings.TrimRight(line, " \r")
		if m := changeLine.FindStringSubmatch(line); m != nil {
			action, ok := actions[m[2]]
			if !ok {
				action = "move" // has moved to <address>
			}
			if len(s.Changes) < MaxPlanChanges {
				s.Changes = append(s.Changes, action+" "+m[1])
			} else {
				s.More++
			}
			continue
		}
		if m := planLine.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			s.Import, _ = strconv.Atoi(m[1])
			s.Add, _ = strconv.Atoi(m[2])
			s.Change, _ = strconv.Atoi(m[3])
			s.Destroy, _ = strconv.Atoi(m[4])
		}
	}
	return s
}

// PlanConfigMapsOf keeps the ConfigMaps tofu-controller wrote for tf's
// readable plans: an owner reference to tf, its API group, kind, name and
// uid (a ConfigMap left by an earlier Terraform object of the same name is
// not its). Pure.
func PlanConfigMapsOf(tf *tfv1alpha2.Terraform, cms []corev1.ConfigMap) []corev1.ConfigMap {
	var mine []corev1.ConfigMap
	for _, cm := range cms {
		for _, ref := range cm.OwnerReferences {
			gv, err := schema.ParseGroupVersion(ref.APIVersion)
			if err == nil && gv.Group == tfv1alpha2.GroupVersion.Group && ref.Kind == tfv1alpha2.TerraformKind &&
				ref.Name == tf.Name && ref.UID == tf.UID && tf.UID != "" {
				mine = append(mine, cm)
				break
			}
		}
	}
	return mine
}

// ReadablePlan reassembles the readable plan of plan id from the ConfigMaps
// tofu-controller wrote for one Terraform object (all of them carry
// planIDAnnotation; a chunked plan numbers its parts in planChunkAnnotation).
// ok is false when they hold another plan, or a part is missing. Pure.
func ReadablePlan(id string, cms []corev1.ConfigMap) (string, bool) {
	if len(cms) == 0 {
		return "", false
	}
	parts := map[int]string{}
	for _, cm := range cms {
		if cm.Annotations[planIDAnnotation] != id {
			return "", false
		}
		data, ok := cm.Data[planDataKey]
		if !ok {
			return "", false
		}
		i := 0
		if v := cm.Annotations[planChunkAnnotation]; v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return "", false
			}
			i = n
		}
		if _, dup := parts[i]; dup {
			return "", false
		}
		parts[i] = data
	}
	idx := make([]int, 0, len(parts))
	for i := range parts {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	var b strings.Builder
	for n, i := range idx {
		if n != i {
			return "", false // a part is missing
		}
		b.WriteString(parts[i])
	}
	return b.String(), true
}

// PlanSummaryAnnotation is the annotation value of s. Pure.
func PlanSummaryAnnotation(s PlanSummary) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// PlanSummaryOf reads the summary of plan id from a Terraform object's
// annotations; ok is false when there is none for that plan. Pure.
func PlanSummaryOf(annotations map[string]string, id string) (PlanSummary, bool) {
	var s PlanSummary
	v, ok := annotations[AnnotationPlanSummary]
	if !ok || json.Unmarshal([]byte(v), &s) != nil || s.Plan != id || id == "" {
		return PlanSummary{}, false
	}
	return s, true
}

// Describe is the summary in one line: the counts, then the changes.
func (s PlanSummary) Describe() string {
	var b strings.Builder
	if s.Import > 0 {
		fmt.Fprintf(&b, "%d to import, ", s.Import)
	}
	fmt.Fprintf(&b, "%d to add, %d to change, %d to destroy", s.Add, s.Change, s.Destroy)
	if len(s.Changes) > 0 {
		b.WriteString(" (")
		b.WriteString(strings.Join(s.Changes, ", "))
		if s.More > 0 {
			fmt.Fprintf(&b, " and %d more", s.More)
		}
		b.WriteString(")")
	}
	return b.String()
}
