package tfbackend

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	tfv1alpha2 "github.com/cozyplane/cozyplane/api/tofu/v1alpha2"
	"github.com/cozyplane/cozyplane/pkg/conditions"
	"github.com/cozyplane/cozyplane/pkg/instance"
	"github.com/cozyplane/cozyplane/pkg/instance/instancetest"
	"github.com/cozyplane/cozyplane/pkg/reconcileerr"
)

const vpcDef = `
metadata: {name: vpc}
spec:
  application: {kind: VPC, plural: vpcs, singular: vpc, openAPISchema: '{}'}
  backend:
    type: Terraform
    terraform:
      prefix: vpc-
      sourceRef: {kind: GitRepository, name: infra-modules, namespace: cozy-system}
      path: ./vpc
      interval: 15m
      approvePlan: ""
      destroyResourcesOnDeletion: true
      serviceAccountName: tf-runner-vpc
      writeOutputsToSecret:
        name: "{{ .name }}-outputs"
        outputs: [vpc_id, subnet_ids]
      runnerPodTemplate:
        metadata: {labels: {team: net}}
        spec:
          env: [{name: AWS_REGION, value: eu-west-1}]
`

const vpcInstance = `
apiVersion: apps.cozystack.io/v1alpha1
kind: VPC
metadata: {name: prod, namespace: tenant-a, generation: 2}
spec:
  cidr_block: 10.0.0.0/16
  azs: [eu-west-1a, eu-west-1b]
  enable_nat: true
  nat_count: 2
  tags: {team: net, env: prod}
`

func TestBuild(t *testing.T) {
	got, err := Backend{}.Build(instancetest.Definition(t, vpcDef), instancetest.Object(t, vpcInstance), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := instancetest.Object(t, `
spec:
  sourceRef: {kind: GitRepository, name: infra-modules, namespace: cozy-system}
  path: ./vpc
  interval: 15m0s
  destroyResourcesOnDeletion: true
  serviceAccountName: tf-runner-vpc
  storeReadablePlan: human
  writeOutputsToSecret:
    name: prod-outputs
    outputs: [vpc_id, subnet_ids]
  runnerPodTemplate:
    metadata: {labels: {team: net}}
    spec:
      env: [{name: AWS_REGION, value: eu-west-1}]
  vars:
  - {name: azs, value: [eu-west-1a, eu-west-1b]}
  - {name: cidr_block, value: 10.0.0.0/16}
  - {name: enable_nat, value: true}
  - {name: nat_count, value: 2}
  - {name: tags, value: {env: prod, team: net}}
`)
	if diff := cmp.Diff(want.Object, instancetest.Normalise(t, got.Object)); diff != "" {
		t.Fatalf("Terraform spec (-want +got):\n%s", diff)
	}
	tf := &tfv1alpha2.Terraform{}
	b, _ := yaml.Marshal(got.Object)
	if err := yaml.UnmarshalStrict(b, tf); err != nil {
		t.Fatalf("not a Terraform object: %v", err)
	}
	if name := (Backend{}).TargetName(instancetest.Definition(t, vpcDef), instancetest.Object(t, vpcInstance)); name != "vpc-prod" {
		t.Fatalf("TargetName = %q", name)
	}
	if f := (Backend{}).Finalizer(instancetest.Definition(t, vpcDef)); f != appsv1alpha1.FinalizerTerraform {
		t.Fatalf("Finalizer = %q", f)
	}
}

func TestBuildDefaultsAndErrors(t *testing.T) {
	minimal := instancetest.Definition(t, `
metadata: {name: dns}
spec:
  application: {kind: DNSZone, plural: dnszones, singular: dnszone, openAPISchema: '{}'}
  backend:
    type: Terraform
    terraform:
      sourceRef: {kind: OCIRepository, name: dns}
      approvePlan: auto
`)
	got, err := Backend{}.Build(minimal, instancetest.Object(t, `{kind: DNSZone, metadata: {name: z, namespace: t}, spec: {zone: example.org}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	spec := got.Object["spec"].(map[string]any)
	if spec["interval"] != "10m0s" || spec["approvePlan"] != "auto" || spec["destroyResourcesOnDeletion"] != false {
		t.Fatalf("defaults not applied: %+v", spec)
	}
	// An instance that destroys nothing goes at once: the controller
	// deletes its Terraform object after it.
	if f := (Backend{}).Finalizer(minimal); f != "" {
		t.Fatalf("Finalizer = %q for a definition that does not destroy", f)
	}

	_, err = Backend{}.Build(minimal, instancetest.Object(t, `{kind: DNSZone, metadata: {name: z, namespace: t}, spec: {zone: x, Bad-Key: 1}}`), nil)
	if s, ok := reconcileerr.AsStalled(err); !ok || s.Reason != appsv1alpha1.ReasonInvalidSpec || !strings.Contains(err.Error(), `"Bad-Key"`) {
		t.Fatalf("error = %v, want a stalled error naming the key", err)
	}

	bad := instancetest.Definition(t, vpcDef)
	bad.Backend.Terraform.WriteOutputsToSecret.Name = "{{ .nope }}-outputs"
	_, err = Backend{}.Build(bad, instancetest.Object(t, vpcInstance), nil)
	if s, ok := reconcileerr.AsStalled(err); !ok || !strings.Contains(err.Error(), "writeOutputsToSecret.name") {
		t.Fatalf("error = %v (%v), want a stalled error about the outputs secret template", err, s)
	}
}

func live(approve, pending string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{}, "status": map[string]any{"plan": map[string]any{}}}}
	if approve != "" {
		u.Object["spec"].(map[string]any)["approvePlan"] = approve
	}
	if pending != "" {
		u.Object["status"].(map[string]any)["plan"].(map[string]any)["pending"] = pending
	}
	return u
}

func TestApprovePlan(t *testing.T) {
	manual := &cozyv1alpha1.TerraformBackend{}
	auto := &cozyv1alpha1.TerraformBackend{ApprovePlan: "auto"}
	inst := func(ann string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		if ann != "" {
			u.SetAnnotations(map[string]string{appsv1alpha1.AnnotationApprovePlan: ann})
		}
		return u
	}
	tests := []struct {
		name string
		tb   *cozyv1alpha1.TerraformBackend
		ann  string
		live *unstructured.Unstructured
		want string
	}{
		{"auto ignores annotations", auto, "plan-main-x", live("", "plan-main-y"), "auto"},
		{"manual, nothing approved", manual, "", live("", "plan-main-6e1fb1aea8"), ""},
		{"approving the pending plan forwards it", manual, "plan-main-6e1fb1aea8", live("", "plan-main-6e1fb1aea8"), "plan-main-6e1fb1aea8"},
		{"a prefix of the pending plan is not forwarded", manual, "plan-main-6e1fb1aea8", live("", "plan-main-6e1fb1aea8b7c2d"), ""},
		{"approving every plan in advance is refused", manual, "plan-", live("", "plan-main-6e1fb1aea8"), ""},
		{"a branch-wide prefix is refused", manual, "plan-main-", live("", "plan-main-6e1fb1aea8"), ""},
		{"the exact long id is forwarded", manual, "plan-main-6e1fb1aea8b7c2d", live("", "plan-main-6e1fb1aea8b7c2d"), "plan-main-6e1fb1aea8b7c2d"},
		{"an earlier prefix approval is dropped before it applies a new plan", manual, "plan-", live("plan-", "plan-main-6e1fb1aea8"), ""},
		{"an earlier exact approval does not carry over to the next plan", manual, "plan-main-111", live("plan-main-111", "plan-main-222"), "plan-main-111"},
		{"an applied approval that prefixes the next plan is dropped", manual, "plan-main-1", live("plan-main-1", "plan-main-111"), ""},
		{"a plan that is not pending is not forwarded", manual, "plan-main-000000", live("plan-main-111", "plan-main-6e1fb1aea8"), "plan-main-111"},
		{"an applied approval stays", manual, "plan-main-111", live("plan-main-111", ""), "plan-main-111"},
		{"no pending plan, new approval refused", manual, "plan-main-222", live("", ""), ""},
		{"switching from auto to manual drops auto", manual, "", live("auto", ""), ""},
		{"not a plan id", manual, "auto", live("", "plan-main-1"), ""},
		{"no Terraform yet", manual, "plan-main-1", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := approvePlan(tt.tb, inst(tt.ann), tt.live); got != tt.want {
				t.Fatalf("approvePlan = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestProject(t *testing.T) {
	cond := func(typ string, st metav1.ConditionStatus, reason, msg string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: st, Reason: reason, Message: msg}
	}
	tf := func(approve string, mutate func(*tfv1alpha2.TerraformStatus)) *tfv1alpha2.Terraform {
		t := &tfv1alpha2.Terraform{ObjectMeta: metav1.ObjectMeta{Name: "vpc-prod", Generation: 1}}
		t.Spec.ApprovePlan = approve
		t.Status.ObservedGeneration = 1
		mutate(&t.Status)
		return t
	}
	tests := []struct {
		name         string
		tf           *tfv1alpha2.Terraform
		approval     string
		wantReady    metav1.ConditionStatus
		wantReason   string
		wantMessage  string
		wantPending  string
		wantApproved *metav1.ConditionStatus
		wantVersion  string
		wantOutputs  []string
	}{
		{
			name: "planned with changes, manual approval",
			tf: tf("", func(s *tfv1alpha2.TerraformStatus) {
				s.LastPlannedRevision = "main@sha1:6e1fb1aea8"
				s.Plan.Pending = "plan-main-6e1fb1aea8"
				s.Conditions = []metav1.Condition{cond("Ready", "Unknown", tfv1alpha2.PlannedWithChangesReason, `Plan generated: set approvePlan: "plan-main-6e1fb1aea8" to approve this plan.`)}
			}),
			wantReady: metav1.ConditionUnknown, wantReason: tfv1alpha2.PlannedWithChangesReason,
			wantMessage: "annotate this instance with apps.cozystack.io/approve-plan=plan-main-6e1fb1aea8",
			wantPending: "plan-main-6e1fb1aea8",
		},
		{
			// The summary annotation reaches PendingPlan through ProjectStatus too.
			name: "planned with changes, the readable plan summarised",
			tf: func() *tfv1alpha2.Terraform {
				t := tf("", func(s *tfv1alpha2.TerraformStatus) {
					s.Plan.Pending = "plan-main-6e1fb1aea8"
					s.Conditions = []metav1.Condition{cond("Ready", "Unknown", tfv1alpha2.PlannedWithChangesReason, "Plan generated")}
				})
				t.Annotations = map[string]string{AnnotationPlanSummary: PlanSummaryAnnotation(PlanSummary{Plan: "plan-main-6e1fb1aea8", Add: 1, Changes: []string{"create aws_vpc.main"}})}
				return t
			}(),
			wantReady: metav1.ConditionUnknown, wantReason: tfv1alpha2.PlannedWithChangesReason,
			wantMessage: "approve-plan=plan-main-6e1fb1aea8",
			wantPending: "plan-main-6e1fb1aea8",
		},
		{
			name: "approval of another plan is refused",
			tf: tf("", func(s *tfv1alpha2.TerraformStatus) {
				s.Plan.Pending = "plan-main-6e1fb1aea8"
				s.Conditions = []metav1.Condition{cond("Ready", "Unknown", tfv1alpha2.PlannedWithChangesReason, "")}
			}),
			approval:  "plan-main-000",
			wantReady: metav1.ConditionUnknown, wantReason: tfv1alpha2.PlannedWithChangesReason, wantPending: "plan-main-6e1fb1aea8",
			wantApproved: ptr(metav1.ConditionFalse),
		},
		{
			name: "a prefix on the Terraform object does not count as approval",
			tf: tf("plan-main-", func(s *tfv1alpha2.TerraformStatus) {
				s.Plan.Pending = "plan-main-6e1fb1aea8"
				s.Conditions = []metav1.Condition{cond("Ready", "Unknown", tfv1alpha2.PlannedWithChangesReason, "")}
			}),
			wantReady: metav1.ConditionUnknown, wantReason: tfv1alpha2.PlannedWithChangesReason, wantPending: "plan-main-6e1fb1aea8",
		},
		{
			name: "approved and applying",
			tf: tf("plan-main-6e1fb1aea8", func(s *tfv1alpha2.TerraformStatus) {
				s.Plan.Pending = "plan-main-6e1fb1aea8"
				s.Conditions = []metav1.Condition{cond("Ready", "Unknown", "Progressing", "Applying")}
			}),
			approval:  "plan-main-6e1fb1aea8",
			wantReady: metav1.ConditionUnknown, wantReason: "Progressing", wantApproved: ptr(metav1.ConditionTrue),
		},
		{
			name: "applied, outputs written",
			tf: tf("plan-main-6e1fb1aea8", func(s *tfv1alpha2.TerraformStatus) {
				s.LastAppliedRevision = "main@sha1:6e1fb1aea8"
				s.Plan.LastApplied = "plan-main-6e1fb1aea8"
				s.AvailableOutputs = []string{"subnet_ids", "vpc_id"}
				s.Conditions = []metav1.Condition{cond("Ready", "True", tfv1alpha2.OutputsWrittenReason, "Outputs written: main@sha1:6e1fb1aea8")}
			}),
			approval:  "plan-main-6e1fb1aea8",
			wantReady: metav1.ConditionTrue, wantReason: tfv1alpha2.OutputsWrittenReason, wantApproved: ptr(metav1.ConditionTrue),
			wantVersion: "main@sha1:6e1fb1aea8", wantOutputs: []string{"subnet_ids", "vpc_id"},
		},
		{
			name: "auto-approved plan is not pending approval",
			tf: tf("auto", func(s *tfv1alpha2.TerraformStatus) {
				s.Plan.Pending = "plan-main-abc"
				s.Conditions = []metav1.Condition{cond("Ready", "Unknown", tfv1alpha2.PlannedWithChangesReason, "Plan generated")}
			}),
			wantReady: metav1.ConditionUnknown, wantReason: tfv1alpha2.PlannedWithChangesReason,
		},
		{
			name: "drift detected",
			tf: tf("auto", func(s *tfv1alpha2.TerraformStatus) {
				s.LastAppliedRevision = "main@sha1:1"
				s.Conditions = []metav1.Condition{cond("Ready", "False", tfv1alpha2.DriftDetectedReason, "Drift detected in aws_vpc.this")}
			}),
			wantReady: metav1.ConditionFalse, wantReason: tfv1alpha2.DriftDetectedReason, wantVersion: "main@sha1:1",
		},
		{
			name: "apply failed",
			tf: tf("auto", func(s *tfv1alpha2.TerraformStatus) {
				s.Conditions = []metav1.Condition{cond("Ready", "False", tfv1alpha2.ApplyFailedReason, "error creating VPC: UnauthorizedOperation")}
			}),
			wantReady: metav1.ConditionFalse, wantReason: tfv1alpha2.ApplyFailedReason, wantMessage: "UnauthorizedOperation",
		},
		{
			name: "approval with nothing pending",
			tf: tf("", func(s *tfv1alpha2.TerraformStatus) {
				s.Conditions = []metav1.Condition{cond("Ready", "True", tfv1alpha2.PlannedNoChangesReason, "no changes")}
			}),
			approval:  "plan-main-9",
			wantReady: metav1.ConditionTrue, wantReason: tfv1alpha2.PlannedNoChangesReason, wantApproved: ptr(metav1.ConditionFalse),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status := &appsv1alpha1.ApplicationStatus{Backend: &appsv1alpha1.BackendStatus{}}
			h := conditions.Holder{Generation: 4, Conditions: &status.Conditions}
			Project(tt.tf, tt.approval, h, status)
			ready := conditions.Get(h, appsv1alpha1.ConditionReady)
			if ready == nil || ready.Status != tt.wantReady || ready.Reason != tt.wantReason || !strings.Contains(ready.Message, tt.wantMessage) {
				t.Fatalf("Ready = %+v, want %s/%s containing %q", ready, tt.wantReady, tt.wantReason, tt.wantMessage)
			}
			if status.Backend.PendingPlan != tt.wantPending || status.Backend.PendingApproval != (tt.wantPending != "") {
				t.Fatalf("pending = %q/%v, want %q", status.Backend.PendingPlan, status.Backend.PendingApproval, tt.wantPending)
			}
			approved := conditions.Get(h, appsv1alpha1.ConditionPlanApproved)
			switch {
			case tt.wantApproved == nil && approved != nil:
				t.Fatalf("PlanApproved = %+v, want none", approved)
			case tt.wantApproved != nil && (approved == nil || approved.Status != *tt.wantApproved):
				t.Fatalf("PlanApproved = %+v, want %s", approved, *tt.wantApproved)
			}
			if status.Version != tt.wantVersion || !cmp.Equal(status.Backend.Outputs, tt.wantOutputs, cmp.Comparer(func(a, b []string) bool { return strings.Join(a, ",") == strings.Join(b, ",") })) {
				t.Fatalf("version %q outputs %v", status.Version, status.Backend.Outputs)
			}
			// ProjectStatus, on the Terraform as the cache holds it (with
			// vars it does not convert), gives the same status.
			obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(tt.tf)
			if err != nil {
				t.Fatal(err)
			}
			spec, _ := obj["spec"].(map[string]any)
			if spec == nil {
				spec = map[string]any{}
				obj["spec"] = spec
			}
			spec["vars"] = []any{map[string]any{"name": "cidr", "value": "10.0.0.0/16"}}
			inst := &unstructured.Unstructured{}
			inst.SetGeneration(4)
			if tt.approval != "" {
				inst.SetAnnotations(map[string]string{appsv1alpha1.AnnotationApprovePlan: tt.approval})
			}
			viaCache := &appsv1alpha1.ApplicationStatus{}
			def := &instance.Definition{}
			Backend{}.ProjectStatus(def, inst, &unstructured.Unstructured{Object: obj}, viaCache)
			viaCache.Backend.Type, viaCache.Backend.Kind, viaCache.Backend.APIVersion, viaCache.Backend.Name = "", "", "", ""
			if diff := cmp.Diff(status, viaCache, cmpopts.IgnoreFields(metav1.Condition{}, "LastTransitionTime")); diff != "" {
				t.Fatalf("ProjectStatus differs from Project (-Project +ProjectStatus):\n%s", diff)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
