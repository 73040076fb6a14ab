package tfbackend

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	tfv1alpha2 "github.com/cozyplane/cozyplane/api/tofu/v1alpha2"
	"github.com/cozyplane/cozyplane/pkg/instance/instancetest"
)

const dbDef = `
metadata: {name: db}
spec:
  application: {kind: ManagedDB, plural: manageddbs, singular: manageddb, openAPISchema: '{}'}
  secrets:
    include:
    - resourceNames: ["{{ .name }}-outputs"]
    exclude:
    - matchLabels: {hidden: "true"}
  backend:
    type: Terraform
    terraform:
      sourceRef: {kind: GitRepository, name: modules, namespace: cozy-system}
      writeOutputsToSecret:
        name: "{{ .name }}-outputs"
        labels: {team: data}
        annotations: {note: "from tofu"}
        outputs: [endpoint, password]
`

const dbInstance = `
apiVersion: apps.cozystack.io/v1alpha1
kind: ManagedDB
metadata: {name: orders, namespace: tenant-a, uid: 11111111-2222-3333-4444-555555555555}
spec: {}
`

func source(data map[string]string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "orders-outputs", Namespace: "cozy-tf-tenant-a"}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

func TestTenantOutputsSecret(t *testing.T) {
	inst := instancetest.Object(t, dbInstance)
	tests := []struct {
		name       string
		def        string
		src        *corev1.Secret
		wantNil    bool
		wantTenant string
		wantData   map[string]string
		wantLabels map[string]string
	}{
		{
			name: "selected by secrets.include: a tenant resource with the listed outputs only",
			def:  dbDef, src: source(map[string]string{"endpoint": "db.example:5432", "password": "s3cret", "internal_id": "x"}),
			wantTenant: "true", wantData: map[string]string{"endpoint": "db.example:5432", "password": "s3cret"},
			wantLabels: map[string]string{"team": "data"},
		},
		{
			name: "not selected: labelled, but not a tenant resource",
			def:  strings.Replace(dbDef, `"{{ .name }}-outputs"]`, `"{{ .name }}-credentials"]`, 1), src: source(map[string]string{"endpoint": "e"}),
			wantTenant: "false", wantData: map[string]string{"endpoint": "e"}, wantLabels: map[string]string{"team": "data"},
		},
		{
			name: "excluded by the definition's labels on the Secret",
			def:  strings.Replace(dbDef, "labels: {team: data}", `labels: {hidden: "true"}`, 1), src: source(map[string]string{"endpoint": "e"}),
			wantTenant: "false", wantData: map[string]string{"endpoint": "e"}, wantLabels: map[string]string{"hidden": "true"},
		},
		{
			name: "the definition's labels cannot set the verdict",
			def:  strings.Replace(dbDef, "labels: {team: data}", `labels: {internal.cozystack.io/tenantresource: "true", apps.cozystack.io/application.name: other}`, 1) + "\n",
			src:  source(map[string]string{"endpoint": "e"}), wantTenant: "true", wantData: map[string]string{"endpoint": "e"},
		},
		{
			name: "every output when the definition lists none",
			def:  strings.Replace(dbDef, "outputs: [endpoint, password]", "", 1), src: source(map[string]string{"endpoint": "e", "internal_id": "x"}),
			wantTenant: "true", wantData: map[string]string{"endpoint": "e", "internal_id": "x"}, wantLabels: map[string]string{"team": "data"},
		},
		{name: "tofu-controller has not written outputs yet", def: dbDef, src: nil, wantNil: true},
		{
			name: "the definition writes no outputs Secret", def: dbDef[:strings.Index(dbDef, "      writeOutputsToSecret:")],
			src: source(map[string]string{"endpoint": "e"}), wantNil: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := TenantOutputsSecret(instancetest.Definition(t, tt.def), inst, tt.src)
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantNil {
				if got != nil {
					t.Fatalf("got %+v, want none", got)
				}
				return
			}
			if got.Name != "orders-outputs" || got.Namespace != "tenant-a" || got.Type != corev1.SecretTypeOpaque {
				t.Fatalf("Secret %s/%s type %s", got.Namespace, got.Name, got.Type)
			}
			data := map[string]string{}
			for k, v := range got.Data {
				data[k] = string(v)
			}
			if diff := cmp.Diff(tt.wantData, data); diff != "" {
				t.Fatalf("data (-want +got):\n%s", diff)
			}
			want := map[string]string{
				"apps.cozystack.io/application.group": "apps.cozystack.io", "apps.cozystack.io/application.kind": "ManagedDB",
				"apps.cozystack.io/application.name": "orders", "internal.cozystack.io/managed-by-cozystack": "true",
				"internal.cozystack.io/tenantresource": tt.wantTenant,
			}
			for k, v := range tt.wantLabels {
				want[k] = v
			}
			if diff := cmp.Diff(want, got.Labels); diff != "" {
				t.Fatalf("labels (-want +got):\n%s", diff)
			}
			ref := metav1.GetControllerOf(got)
			if ref == nil || ref.APIVersion != "apps.cozystack.io/v1alpha1" || ref.Kind != "ManagedDB" || ref.Name != "orders" || ref.UID != inst.GetUID() {
				t.Fatalf("controller = %+v", ref)
			}
			if ref.BlockOwnerDeletion != nil {
				t.Fatal("blockOwnerDeletion set: it needs the right to update the instance's finalizers")
			}
		})
	}
	bad := strings.Replace(dbDef, `name: "{{ .name }}-outputs"`, `name: "{{ .owner }}-outputs"`, 1)
	if _, err := TenantOutputsSecret(instancetest.Definition(t, bad), inst, source(nil)); err == nil || !strings.Contains(err.Error(), "writeOutputsToSecret.name") {
		t.Fatalf("a name template over an unknown key: err = %v", err)
	}
}

func TestOutputsWrite(t *testing.T) {
	inst := instancetest.Object(t, dbInstance)
	desired, err := TenantOutputsSecret(instancetest.Definition(t, dbDef), inst, source(map[string]string{"endpoint": "e", "password": "p"}))
	if err != nil {
		t.Fatal(err)
	}
	with := func(f func(*corev1.Secret)) *corev1.Secret { s := desired.DeepCopy(); f(s); return s }
	foreign := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "orders-outputs", Namespace: "tenant-a"}}
	tests := []struct {
		name              string
		desired, existing *corev1.Secret
		want              OutputsAction
		wantMsg           string
	}{
		{name: "nothing yet, nothing there", want: OutputsKeep},
		{name: "outputs, no copy", desired: desired, want: OutputsApply},
		{name: "copy up to date", desired: desired, existing: desired.DeepCopy(), want: OutputsKeep},
		{name: "copy with extra labels of others is up to date", desired: desired, existing: with(func(s *corev1.Secret) { s.Labels["x"] = "y" }), want: OutputsKeep},
		{name: "an output changed", desired: desired, existing: with(func(s *corev1.Secret) { s.Data["endpoint"] = []byte("old") }), want: OutputsApply},
		{name: "an output went", desired: desired, existing: with(func(s *corev1.Secret) { s.Data["gone"] = []byte("v") }), want: OutputsApply},
		{name: "verdict changed", desired: desired, existing: with(func(s *corev1.Secret) { s.Labels["internal.cozystack.io/tenantresource"] = "false" }), want: OutputsApply},
		{name: "the definition stopped writing outputs", existing: desired.DeepCopy(), want: OutputsDelete},
		{name: "the tenant's own Secret of that name", desired: desired, existing: foreign, want: OutputsRefuse, wantMsg: "Secret tenant-a/orders-outputs exists and is not controlled by ManagedDB orders"},
		{name: "the tenant's own Secret is not deleted either", existing: foreign, want: OutputsKeep},
		{
			name: "an earlier instance of that name", desired: desired, want: OutputsRefuse,
			existing: with(func(s *corev1.Secret) { s.OwnerReferences[0].UID = types.UID("00000000-0000-0000-0000-000000000000") }),
		},
		{
			name: "the instance's uid under another API group", desired: desired, want: OutputsRefuse,
			existing: with(func(s *corev1.Secret) { s.OwnerReferences[0].APIVersion = "evil.example.org/v1alpha1" }),
		},
		{
			name: "owned but not as controller", desired: desired, want: OutputsRefuse,
			existing: with(func(s *corev1.Secret) { s.OwnerReferences[0].Controller = nil }),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, msg := OutputsWrite(inst, tt.desired, tt.existing)
			if got != tt.want || !strings.Contains(msg, tt.wantMsg) {
				t.Fatalf("OutputsWrite = %v %q, want %v containing %q", got, msg, tt.want, tt.wantMsg)
			}
		})
	}
}

func TestInstanceOf(t *testing.T) {
	full := map[string]string{
		"apps.cozystack.io/application.group": "apps.cozystack.io", "apps.cozystack.io/application.kind": "ManagedDB",
		"apps.cozystack.io/application.name": "orders", "apps.cozystack.io/application.namespace": "tenant-a",
		"apps.cozystack.io/application.uid": "u1",
	}
	without := func(k string) map[string]string {
		m := map[string]string{}
		for kk, v := range full {
			if kk != k {
				m[kk] = v
			}
		}
		return m
	}
	tests := []struct {
		name   string
		labels map[string]string
		want   bool
	}{
		{"every label", full, true},
		{"no namespace label (an earlier version's object in the tenant namespace)", without("apps.cozystack.io/application.namespace"), false},
		{"no uid", without("apps.cozystack.io/application.uid"), false},
		{"no kind", without("apps.cozystack.io/application.kind"), false},
		{"another group", func() map[string]string {
			m := without("")
			m["apps.cozystack.io/application.group"] = "example.org"
			return m
		}(), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ref, ok := InstanceOf(&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Labels: tt.labels}})
			if ok != tt.want {
				t.Fatalf("InstanceOf = %+v %v, want %v", ref, ok, tt.want)
			}
			if ok && ref != (InstanceRef{Kind: "ManagedDB", Namespace: "tenant-a", Name: "orders", UID: "u1"}) {
				t.Fatalf("InstanceOf = %+v", ref)
			}
		})
	}
}

func TestPendingPlanSummary(t *testing.T) {
	plan := func(destroy, drift bool, rev string, conds ...metav1.Condition) *tfv1alpha2.Terraform {
		tf := &tfv1alpha2.Terraform{}
		tf.Status.Plan = tfv1alpha2.PlanStatus{Pending: "plan-main-6e1fb1aea8", IsDestroyPlan: destroy, IsDriftDetectionPlan: drift}
		tf.Status.LastPlannedRevision = rev
		tf.Status.Conditions = conds
		return tf
	}
	planned := metav1.Condition{Type: "Plan", Status: metav1.ConditionTrue, Reason: "TerraformPlannedWithChanges", Message: "Plan generated"}
	failed := metav1.Condition{Type: "Plan", Status: metav1.ConditionFalse, Reason: "TerraformPlanFailed", Message: "error: var.password = hunter2"}
	tests := []struct {
		name        string
		tf          *tfv1alpha2.Terraform
		wantReason  string
		wantMessage string
		notContains string
	}{
		{"changes", plan(false, false, "main@sha1:6e1f", planned), ReasonPlanChanges,
			"plan plan-main-6e1fb1aea8 of main@sha1:6e1f creates, changes or destroys resources of the module; tofu-controller: Plan generated (TerraformPlannedWithChanges)", ""},
		{"destroy", plan(true, false, "main@sha1:6e1f"), ReasonPlanDestroys, "destroys every resource of the module", "tofu-controller"},
		{"drift", plan(false, true, "main@sha1:6e1f"), ReasonPlanCorrectsDrift, "drifted", ""},
		{"no revision recorded", plan(false, false, ""), ReasonPlanChanges, "of an unknown revision", ""},
		{"a Plan condition that is not True is not quoted", plan(false, false, "r", failed), ReasonPlanChanges, "plan plan-main-6e1fb1aea8 of r", "hunter2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reason, msg := PendingPlanSummary(tt.tf, "plan-main-6e1fb1aea8")
			if reason != tt.wantReason || !strings.Contains(msg, tt.wantMessage) || (tt.notContains != "" && strings.Contains(msg, tt.notContains)) {
				t.Fatalf("PendingPlanSummary = %s %q, want %s containing %q without %q", reason, msg, tt.wantReason, tt.wantMessage, tt.notContains)
			}
		})
	}
}
