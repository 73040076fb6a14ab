package ops

import (
	"strings"
	"testing"
)

func TestAnnotationPatch(t *testing.T) {
	v := "2026-11-23T16:00:00Z"
	if got := string(AnnotationPatch("reconcile.fluxcd.io/requestedAt", &v)); got != `{"metadata":{"annotations":{"reconcile.fluxcd.io/requestedAt":"2026-11-23T16:00:00Z"}}}` {
		t.Errorf("set: %s", got)
	}
	if got := string(AnnotationPatch("apps.cozystack.io/suspend", nil)); got != `{"metadata":{"annotations":{"apps.cozystack.io/suspend":null}}}` {
		t.Errorf("remove: %s", got)
	}
}

func TestReconcileDecisions(t *testing.T) {
	suspended := obj(t, `{kind: Postgres, metadata: {name: a, namespace: t, annotations: {apps.cozystack.io/suspend: "true"}}}`)
	if err := CheckReconcilable(suspended); err == nil || !strings.Contains(err.Error(), "resume it first (cozyplane resume postgres/a)") {
		t.Errorf("suspended: %v", err)
	}
	if err := CheckReconcilable(obj(t, `{kind: Postgres, metadata: {name: a, namespace: t, annotations: {apps.cozystack.io/suspend: "false"}}}`)); err != nil {
		t.Errorf("suspend=false: %v", err)
	}
	handled := obj(t, `{kind: Postgres, metadata: {name: a, namespace: t}, status: {lastHandledReconcileAt: r2, conditions: [{type: Ready, status: "False", reason: UpgradeFailed, message: boom}]}}`)
	if ReconcileHandled(handled, "r1") || !ReconcileHandled(handled, "r2") {
		t.Error("ReconcileHandled")
	}
	c, err := ReconcileOutcome(handled)
	if c.Status != "False" || err == nil || !strings.Contains(err.Error(), "not ready: UpgradeFailed: boom") {
		t.Errorf("failed outcome: %v %v", c, err)
	}
	c, err = ReconcileOutcome(obj(t, `{kind: Postgres, metadata: {name: a}, status: {conditions: [{type: Ready, status: "True", reason: UpgradeSucceeded}]}}`))
	if c.Status != "True" || err != nil {
		t.Errorf("ready outcome: %v %v", c, err)
	}
	if c, err := ReconcileOutcome(obj(t, `{kind: Postgres, metadata: {name: a}}`)); c.Status != "Unknown" || err != nil {
		t.Errorf("no Ready: %v %v", c, err)
	}
}

func TestSuspendSettled(t *testing.T) {
	on := obj(t, `{status: {conditions: [{type: Suspended, status: "True", reason: Suspended}]}}`)
	off := obj(t, `{status: {conditions: [{type: Ready, status: "True"}]}}`)
	if !SuspendSettled(on, true) || SuspendSettled(on, false) || SuspendSettled(off, true) || !SuspendSettled(off, false) {
		t.Error("SuspendSettled")
	}
}

func TestExternallySuspended(t *testing.T) {
	ext := obj(t, `{kind: Postgres, metadata: {name: a, namespace: t}, status: {conditions: [{type: Suspended, status: "True", reason: SuspendedExternally, message: "set by field manager backupstrategy-controller"}]}}`)
	err := ExternallySuspended(ext)
	if err == nil || !strings.Contains(err.Error(), "by someone else, and stays so until they resume it: set by field manager backupstrategy-controller") {
		t.Errorf("external: %v", err)
	}
	for _, in := range []string{
		`{kind: Postgres, metadata: {name: a, namespace: t}, status: {conditions: [{type: Suspended, status: "True", reason: Suspended}]}}`,
		`{kind: Postgres, metadata: {name: a, namespace: t}, status: {conditions: [{type: Ready, status: "True"}]}}`,
	} {
		if err := ExternallySuspended(obj(t, in)); err != nil {
			t.Errorf("%s: %v", in, err)
		}
	}
}

func TestPlanToApprove(t *testing.T) {
	for _, tc := range []struct {
		name, in, want, wantErr string
	}{
		{"pending", `{kind: VPC, metadata: {name: main, namespace: t}, status: {backend: {type: Terraform, kind: Terraform, pendingPlan: plan-main-1}}}`, "plan-main-1", ""},
		{"nothing pending", `{kind: VPC, metadata: {name: main, namespace: t}, status: {backend: {type: Terraform, kind: Terraform}}}`, "",
			"vpc/main in namespace t has no plan waiting for approval (status.backend.pendingPlan is empty)"},
		{"helm", `{kind: Postgres, metadata: {name: a, namespace: t}, status: {backend: {type: Helm, kind: HelmRelease}}}`, "",
			"is backed by a HelmRelease, which has no plans to approve: only kinds with a Terraform backend do"},
		{"no status", `{kind: VPC, metadata: {name: main, namespace: t}}`, "", "reports no backend yet"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := PlanToApprove(obj(t, tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("got %q, %v", got, err)
			}
		})
	}
}

func TestApprovalOutcome(t *testing.T) {
	const ann = `{apps.cozystack.io/approve-plan: plan-1}`
	for _, tc := range []struct {
		name     string
		in       string
		wantDone bool
		wantErr  string
	}{
		{"not annotated yet", `{metadata: {name: a}}`, false, ""},
		{"no answer yet", `{metadata: {name: a, annotations: ` + ann + `}}`, false, ""},
		{"forwarded", `{metadata: {name: a, annotations: ` + ann + `}, status: {conditions: [{type: PlanApproved, status: "True", reason: ApprovalForwarded, message: plan plan-1 is approved on Terraform x}]}}`, true, ""},
		{"an older approval's answer", `{metadata: {name: a, annotations: ` + ann + `}, status: {conditions: [{type: PlanApproved, status: "True", reason: ApprovalForwarded, message: plan plan-0 is approved on Terraform x}]}}`, false, ""},
		{"refused", `{metadata: {name: a, annotations: ` + ann + `}, status: {conditions: [{type: PlanApproved, status: "False", reason: PlanNotPending, message: "plan plan-1 was not forwarded: the pending plan is plan-2"}]}}`, true,
			"the pending plan is plan-2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done, err := ApprovalOutcome(obj(t, tc.in), "plan-1")
			if done != tc.wantDone || (tc.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("done %t err %v", done, err)
			}
		})
	}
}

func TestReconcileRequest(t *testing.T) {
	if got := string(AnnotationsPatch(ReconcileRequest("t1", false, false))); got != `{"metadata":{"annotations":{"reconcile.fluxcd.io/requestedAt":"t1"}}}` {
		t.Errorf("plain: %s", got)
	}
	if got := string(AnnotationsPatch(ReconcileRequest("t1", true, true))); got !=
		`{"metadata":{"annotations":{"reconcile.fluxcd.io/forceAt":"t1","reconcile.fluxcd.io/requestedAt":"t1","reconcile.fluxcd.io/resetAt":"t1"}}}` {
		t.Errorf("force and reset: %s", got)
	}
	if got := ReconcileRequest("t1", false, true); len(got) != 2 || got["reconcile.fluxcd.io/resetAt"] != "t1" {
		t.Errorf("reset: %v", got)
	}
}

func TestCheckForceable(t *testing.T) {
	if err := CheckForceable(obj(t, `{kind: Postgres, metadata: {name: a, namespace: t}, status: {backend: {kind: HelmRelease}}}`)); err != nil {
		t.Errorf("helm: %v", err)
	}
	if err := CheckForceable(obj(t, `{kind: VPC, metadata: {name: a, namespace: t}, status: {backend: {kind: Terraform}}}`)); err == nil ||
		!strings.Contains(err.Error(), "is backed by a Terraform: --force and --reset are requests to helm-controller") {
		t.Errorf("terraform: %v", err)
	}
	if err := CheckForceable(obj(t, `{kind: VPC, metadata: {name: a, namespace: t}}`)); err == nil || !strings.Contains(err.Error(), "reports no backend yet") {
		t.Errorf("no backend: %v", err)
	}
}
