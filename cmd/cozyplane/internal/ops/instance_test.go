package ops

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func obj(t *testing.T, s string) *unstructured.Unstructured {
	t.Helper()
	m := map[string]any{}
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

func plain(t *testing.T, n *Node) string {
	t.Helper()
	var b bytes.Buffer
	if err := Render(&b, n, false); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

const helmInstance = `
apiVersion: apps.cozystack.io/v1alpha1
kind: Postgres
metadata: {name: orders, namespace: t, creationTimestamp: "2026-11-23T10:00:00Z"}
status:
  lastHandledReconcileAt: r1
  backend: {type: Helm, kind: HelmRelease, apiVersion: helm.toolkit.fluxcd.io/v2, name: postgres-orders}
  conditions:
  - {type: Ready, status: "True", reason: InstallSucceeded, message: Helm install succeeded}
  - {type: Suspended, status: "True", reason: Suspended, message: suspended}
`

const tfInstance = `
apiVersion: apps.cozystack.io/v1alpha1
kind: VPC
metadata: {name: main, namespace: t}
status:
  backend: {type: Terraform, kind: Terraform, apiVersion: infra.contrib.fluxcd.io/v1alpha2, name: vpc-main, namespace: cozy-tf-t, pendingPlan: plan-main-1}
  conditions:
  - {type: Ready, status: Unknown, reason: TerraformPlannedWithChanges, message: waits}
`

func TestBackingRef(t *testing.T) {
	ref, ok := BackingRef(obj(t, helmInstance))
	if !ok || ref != (ObjectRef{APIVersion: "helm.toolkit.fluxcd.io/v2", Kind: "HelmRelease", Namespace: "t", Name: "postgres-orders"}) {
		t.Errorf("helm: %v %t", ref, ok)
	}
	ref, ok = BackingRef(obj(t, tfInstance))
	if !ok || ref.Namespace != "cozy-tf-t" {
		t.Errorf("a namespace in the status wins: %v", ref)
	}
	if _, ok := BackingRef(obj(t, `{kind: X, metadata: {name: a, namespace: t}}`)); ok {
		t.Error("no status, no ref")
	}
}

func TestInstanceTree(t *testing.T) {
	hr := obj(t, `
kind: HelmRelease
metadata: {name: postgres-orders, namespace: t}
spec: {suspend: true}
status:
  lastAttemptedRevision: 1.2.3
  lastHandledReconcileAt: r1
  conditions: [{type: Ready, status: "True", reason: InstallSucceeded, message: ok}]
`)
	tf := obj(t, `
kind: Terraform
metadata: {name: vpc-main, namespace: cozy-tf-t}
spec: {writeOutputsToSecret: {name: main-outputs}}
status:
  plan: {pending: plan-main-1}
  availableOutputs: [id, cidr]
  conditions: [{type: Ready, status: Unknown, reason: TerraformPlannedWithChanges, message: "Plan generated"}]
`)
	helm := obj(t, helmInstance)
	helmRef, _ := BackingRef(helm)
	vpc := obj(t, tfInstance)
	vpcRef, _ := BackingRef(vpc)
	for _, tc := range []struct {
		name string
		in   InstanceTrace
		want string
	}{
		{"helm, suspended", InstanceTrace{Instance: helm, Ref: helmRef, HasRef: true, Backing: hr}, `Postgres t/orders  Ready=True  InstallSucceeded: Helm install succeeded
│   suspended: resume with ` + "`cozyplane resume postgres/orders`" + `
│   last handled reconcile request: r1
└── HelmRelease t/postgres-orders  Ready=True  InstallSucceeded: ok
        spec.suspend=true: its controller does not reconcile it
        last attempted revision: 1.2.3
        last handled reconcile request: r1
`},
		{"backing object missing", InstanceTrace{Instance: helm, Ref: helmRef, HasRef: true}, "└── HelmRelease t/postgres-orders  Ready=-  NotFound: does not exist\n"},
		{"backing object unreadable", InstanceTrace{Instance: helm, Ref: helmRef, HasRef: true, BackingErr: errors.New("forbidden")}, "Ready=-  Unreadable: forbidden\n"},
		{"no status yet", InstanceTrace{Instance: obj(t, `{kind: Postgres, metadata: {name: a, namespace: t}}`)},
			"Postgres t/a  Ready=-\n└── (backing object) unknown  Ready=-  the instance reports no backing object yet (status.backend is empty)\n"},
		{"terraform, plan pending, outputs not written", InstanceTrace{Instance: vpc, Ref: vpcRef, HasRef: true, Backing: tf,
			Outputs: &SecretState{Namespace: "cozy-tf-t", Name: "main-outputs"}}, `VPC t/main  Ready=Unknown  TerraformPlannedWithChanges: waits
│   plan plan-main-1 waits for approval: ` + "`cozyplane approve vpc/main`" + `
└── Terraform cozy-tf-t/vpc-main  Ready=Unknown  TerraformPlannedWithChanges: Plan generated
    │   pending plan: plan-main-1 (not approved)
    │   outputs: id, cidr
    └── Secret cozy-tf-t/main-outputs  Exists=False  the outputs Secret is written once the module is applied
`},
		{"terraform outputs written", InstanceTrace{Instance: vpc, Ref: vpcRef, HasRef: true, Backing: tf,
			Outputs: &SecretState{Namespace: "cozy-tf-t", Name: "main-outputs", Exists: true}}, "└── Secret cozy-tf-t/main-outputs  Exists=True  module outputs\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := plain(t, InstanceTree(tc.in))
			if !strings.HasSuffix(got, tc.want) {
				t.Errorf("got\n%s\nwant (suffix)\n%s", got, tc.want)
			}
		})
	}
}

func TestRows(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	items := []unstructured.Unstructured{*obj(t, helmInstance), *obj(t, tfInstance), *obj(t, `{kind: Postgres, metadata: {name: new, namespace: u}}`)}
	rows := Rows(items, now)
	want := []Row{
		{Namespace: "t", Kind: "Postgres", Name: "orders", Ready: "True", Reason: "InstallSucceeded", Suspended: "True", Age: "120m", Backing: "HelmRelease/postgres-orders", Message: "Helm install succeeded"},
		{Namespace: "t", Kind: "VPC", Name: "main", Ready: "Unknown", Reason: "TerraformPlannedWithChanges", Backing: "Terraform/cozy-tf-t/vpc-main", Message: "waits"},
		{Namespace: "u", Kind: "Postgres", Name: "new", Ready: "-", Backing: "-"},
	}
	for i := range want {
		if rows[i] != want[i] {
			t.Errorf("row %d: %+v, want %+v", i, rows[i], want[i])
		}
	}
	lines := FormatRows(rows[:1], true)
	if lines[0] != "NAMESPACE\tKIND\tNAME\tREADY\tREASON\tSUSPENDED\tAGE\tBACKING OBJECT\tMESSAGE" ||
		lines[1] != "t\tPostgres\torders\tTrue\tInstallSucceeded\tTrue\t120m\tHelmRelease/postgres-orders\tHelm install succeeded" {
		t.Errorf("lines %q", lines)
	}
	if l := FormatRows(rows[2:], false); l[1] != "Postgres\tnew\t-\t-\t-\t-\t-\t-" {
		t.Errorf("one namespace %q", l)
	}
}

func TestHasStatus(t *testing.T) {
	ready := obj(t, helmInstance) // Ready True, Suspended True
	unknown := obj(t, tfInstance)
	notReady := obj(t, `{kind: Postgres, metadata: {name: a}, status: {conditions: [{type: Ready, status: "False"}]}}`)
	none := obj(t, `{kind: Postgres, metadata: {name: b}}`)
	for _, tc := range []struct {
		status string
		want   [4]bool // ready, unknown, notReady, none
	}{
		{"", [4]bool{true, true, true, true}},
		{StatusReady, [4]bool{true, false, false, false}},
		{StatusNotReady, [4]bool{false, false, true, false}},
		{StatusUnknown, [4]bool{false, true, false, true}},
		{StatusSuspended, [4]bool{true, false, false, false}},
	} {
		for i, o := range []*unstructured.Unstructured{ready, unknown, notReady, none} {
			if got := HasStatus(o, tc.status); got != tc.want[i] {
				t.Errorf("status %q, object %d: %t", tc.status, i, got)
			}
		}
	}
	if err := CheckStatus("broken"); err == nil || !strings.Contains(err.Error(), "use ready, not-ready, unknown, suspended") {
		t.Errorf("CheckStatus: %v", err)
	}
	for _, s := range append([]string{""}, Statuses...) {
		if err := CheckStatus(s); err != nil {
			t.Errorf("CheckStatus(%q): %v", s, err)
		}
	}
}
