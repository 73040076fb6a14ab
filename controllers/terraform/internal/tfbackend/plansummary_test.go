package tfbackend

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	tfv1alpha2 "github.com/cozyplane/cozyplane/api/tofu/v1alpha2"
)

// terraform show's text of a plan, as the runner stores it (colours
// included when the runner does not turn them off).
const humanPlan = "\nTerraform used the selected providers to generate the following execution\nplan. Resource actions are indicated with the following symbols:\n" +
	"  \x1b[32m+\x1b[0m create\n  \x1b[31m-\x1b[0m destroy\n\nTerraform will perform the following actions:\n\n" +
	"\x1b[1m  # aws_s3_bucket.logs\x1b[0m will be created\n  + resource \"aws_s3_bucket\" \"logs\" {\n      + bucket = \"tenant-logs\"\n      + arn    = (known after apply)\n    }\n\n" +
	"  # aws_iam_role.app will be updated in-place\n  ~ resource \"aws_iam_role\" \"app\" {\n      ~ description = \"a\" -> \"b\"\n    }\n\n" +
	"  # aws_instance.web[\"a b\"] must be replaced\n-/+ resource \"aws_instance\" \"web\" {\n      ~ ami = \"ami-1\" -> \"ami-2\" # forces replacement\n    }\n\n" +
	"  # module.net.aws_subnet.old will be destroyed\n  # (because aws_subnet.old is not in configuration)\n  - resource \"aws_subnet\" \"old\" {}\n\n" +
	"  # data.aws_ami.ubuntu will be read during apply\n" +
	"  # aws_s3_bucket.a has moved to aws_s3_bucket.b\n\n" +
	"\x1b[1mPlan:\x1b[0m 2 to add, 1 to change, 2 to destroy.\n\nChanges to Outputs:\n  + endpoint = (known after apply)\n"

func TestParseHumanPlan(t *testing.T) {
	got := ParseHumanPlan("plan-main-6e1fb1aea8", humanPlan)
	want := PlanSummary{Plan: "plan-main-6e1fb1aea8", Add: 2, Change: 1, Destroy: 2, Changes: []string{
		"create aws_s3_bucket.logs", "update aws_iam_role.app", `replace aws_instance.web["a b"]`,
		"destroy module.net.aws_subnet.old", "read data.aws_ami.ubuntu", "move aws_s3_bucket.a",
	}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("summary (-want +got):\n%s", d)
	}
	if d := got.Describe(); d != `2 to add, 1 to change, 2 to destroy (create aws_s3_bucket.logs, update aws_iam_role.app, replace aws_instance.web["a b"], destroy module.net.aws_subnet.old, read data.aws_ami.ubuntu, move aws_s3_bucket.a)` {
		t.Errorf("Describe: %s", d)
	}
	// No attribute value of the plan reaches the summary.
	if s := PlanSummaryAnnotation(got); strings.Contains(s, "tenant-logs") || strings.Contains(s, "ami-2") {
		t.Errorf("the summary leaks a value: %s", s)
	}

	imports := ParseHumanPlan("p", "  # aws_vpc.main will be imported\nPlan: 1 to import, 0 to add, 0 to change, 0 to destroy.\n")
	if imports.Import != 1 || imports.Describe() != "1 to import, 0 to add, 0 to change, 0 to destroy (import aws_vpc.main)" {
		t.Errorf("imports: %+v %s", imports, imports.Describe())
	}
	if none := ParseHumanPlan("p", "No changes. Your infrastructure matches the configuration.\n"); none.Describe() != "0 to add, 0 to change, 0 to destroy" {
		t.Errorf("no changes: %s", none.Describe())
	}

	var many strings.Builder
	for i := range MaxPlanChanges + 5 {
		fmt.Fprintf(&many, "  # null_resource.n[%d] will be created\n", i)
	}
	big := ParseHumanPlan("p", many.String())
	if len(big.Changes) != MaxPlanChanges || big.More != 5 || !strings.HasSuffix(big.Describe(), " and 5 more)") {
		t.Errorf("bounded: %d changes, %d more: %s", len(big.Changes), big.More, big.Describe())
	}
}

func TestReadablePlan(t *testing.T) {
	cm := func(id, chunk, data string) corev1.ConfigMap {
		a := map[string]string{planIDAnnotation: id}
		if chunk != "" {
			a[planChunkAnnotation] = chunk
		}
		return corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Annotations: a}, Data: map[string]string{planDataKey: data}}
	}
	for _, tc := range []struct {
		name string
		cms  []corev1.ConfigMap
		want string
		ok   bool
	}{
		{"one ConfigMap", []corev1.ConfigMap{cm("p1", "", "whole")}, "whole", true},
		{"chunks in any order", []corev1.ConfigMap{cm("p1", "2", "c"), cm("p1", "0", "a"), cm("p1", "1", "b")}, "abc", true},
		{"a chunk missing", []corev1.ConfigMap{cm("p1", "0", "a"), cm("p1", "2", "c")}, "", false},
		{"another plan's", []corev1.ConfigMap{cm("p0", "", "old")}, "", false},
		{"a chunk of another plan", []corev1.ConfigMap{cm("p1", "0", "a"), cm("p0", "1", "b")}, "", false},
		{"a chunk twice", []corev1.ConfigMap{cm("p1", "0", "a"), cm("p1", "0", "a")}, "", false},
		{"none", nil, "", false},
		{"a bad chunk index", []corev1.ConfigMap{cm("p1", "x", "a")}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ReadablePlan("p1", tc.cms)
			if got != tc.want || ok != tc.ok {
				t.Errorf("ReadablePlan = %q, %v; want %q, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestPendingPlanSummaryQuotesTheSummary(t *testing.T) {
	tf := &tfv1alpha2.Terraform{}
	tf.Status.Plan.Pending = "plan-main-1"
	tf.Status.LastPlannedRevision = "main@sha1:1"
	_, msg := PendingPlanSummary(tf, "plan-main-1")
	if msg != "plan plan-main-1 of main@sha1:1 creates, changes or destroys resources of the module" {
		t.Errorf("without a summary: %s", msg)
	}
	tf.Annotations = map[string]string{AnnotationPlanSummary: PlanSummaryAnnotation(PlanSummary{Plan: "plan-main-0", Add: 9})}
	if _, stale := PendingPlanSummary(tf, "plan-main-1"); stale != msg {
		t.Errorf("an earlier plan's summary is quoted: %s", stale)
	}
	tf.Annotations[AnnotationPlanSummary] = PlanSummaryAnnotation(PlanSummary{Plan: "plan-main-1", Add: 1, Changes: []string{"create aws_s3_bucket.logs"}})
	if _, msg := PendingPlanSummary(tf, "plan-main-1"); msg != "plan plan-main-1 of main@sha1:1 creates, changes or destroys resources of the module: 1 to add, 0 to change, 0 to destroy (create aws_s3_bucket.logs)" {
		t.Errorf("with its summary: %s", msg)
	}
}

func TestPlanConfigMapsOf(t *testing.T) {
	tf := &tfv1alpha2.Terraform{ObjectMeta: metav1.ObjectMeta{Name: "out-db", UID: "u1"}}
	cm := func(name string, refs ...metav1.OwnerReference) corev1.ConfigMap {
		return corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: refs}}
	}
	ref := func(apiVersion, kind, name, uid string) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: types.UID(uid)}
	}
	got := PlanConfigMapsOf(tf, []corev1.ConfigMap{
		cm("mine", ref("infra.contrib.fluxcd.io/v1alpha2", "Terraform", "out-db", "u1")),
		cm("another version of the API", ref("infra.contrib.fluxcd.io/v1alpha1", "Terraform", "out-db", "u1")),
		cm("an earlier object of that name", ref("infra.contrib.fluxcd.io/v1alpha2", "Terraform", "out-db", "u0")),
		cm("another object", ref("infra.contrib.fluxcd.io/v1alpha2", "Terraform", "out-other", "u2")),
		cm("another group", ref("evil.example.com/v1alpha2", "Terraform", "out-db", "u1")),
		cm("no owner"),
	})
	var names []string
	for _, c := range got {
		names = append(names, c.Name)
	}
	if d := cmp.Diff([]string{"mine", "another version of the API"}, names); d != "" {
		t.Errorf("kept (-want +got):\n%s", d)
	}
}
