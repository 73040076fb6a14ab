package cli

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	"github.com/cozyplane/cozyplane/cmd/cozyplane/internal/ops"
)

func (t *target) annotate(ctx context.Context, key string, value *string) error {
	_, err := t.g.Client.Resource(t.res.GVR()).Namespace(t.ns).Patch(ctx, t.obj.GetName(), types.MergePatchType,
		ops.AnnotationPatch(key, value), metav1.PatchOptions{FieldManager: FieldManager})
	return err
}

// annotateAll sets each annotation of set in one patch.
func (t *target) annotateAll(ctx context.Context, set map[string]string) error {
	_, err := t.g.Client.Resource(t.res.GVR()).Namespace(t.ns).Patch(ctx, t.obj.GetName(), types.MergePatchType,
		ops.AnnotationsPatch(set), metav1.PatchOptions{FieldManager: FieldManager})
	return err
}

func (t *target) String() string {
	return fmt.Sprintf("%s %s/%s", t.res.Kind, t.ns, t.obj.GetName())
}

func readyLine(c ops.Condition) string {
	s := "Ready=" + c.Status
	if c.Reason != "" {
		s += " " + c.Reason
	}
	if c.Message != "" {
		s += ": " + c.Message
	}
	return s
}

func newReconcileCommand(root *Root) *cobra.Command {
	var timeout time.Duration
	var force, reset bool
	var sel selection
	cmd := &cobra.Command{
		Use:   "reconcile (KIND/NAME | KIND --all | KIND -l SELECTOR)",
		Short: "Ask for a reconcile of an instance now and wait for its result",
		Long: `reconcile sets the annotation ` + appsv1alpha1.AnnotationReconcileRequestedAt + `=<now> on the
instance. Its controller copies it to the backing object (HelmRelease or
Terraform), whose controller reconciles at once; the instance mirrors the
value handled in status.lastHandledReconcileAt. The command waits until that
equals its request (or --timeout), then prints the instance's Ready, and fails
when Ready is False. A suspended instance is refused: resume it first.

--force and --reset also set ` + appsv1alpha1.AnnotationReconcileForceAt + ` and
` + appsv1alpha1.AnnotationReconcileResetAt + ` to the same value, forwarded the same way, as
flux reconcile hr --force / --reset writes them: helm-controller then runs a
Helm upgrade even when nothing changed, or resets the failure counts so its
remediation retries start over. Only for kinds backed by a HelmRelease.

Without the CLI: kubectl annotate --overwrite KIND NAME ` + appsv1alpha1.AnnotationReconcileRequestedAt + `="$(date -u +%Y-%m-%dT%H:%M:%SZ)"` + selectionHelp,
		Example: `  cozyplane reconcile postgres/orders -n tenant-demo
  cozyplane reconcile postgres --all -n tenant-demo
  cozyplane reconcile postgres -l team=billing -A`,
		Args:              usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: completeRef(root, (*ops.Gatherer).InstanceKinds),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := contextOf(cmd.Context())
			return sel.each(ctx, root, args[0], func(t *target, ref string) error {
				if err := ops.CheckReconcilable(t.obj); err != nil {
					return err
				}
				if force || reset {
					if err := ops.CheckForceable(t.obj); err != nil {
						return err
					}
				}
				at := time.Now().UTC().Format(time.RFC3339Nano)
				set := ops.ReconcileRequest(at, force, reset)
				keys := make([]string, 0, len(set))
				for k := range set {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				say(root.Streams.ErrOut, "► annotating %s with %s=%s", t, strings.Join(keys, ", "), at)
				if err := t.annotateAll(ctx, set); err != nil {
					return err
				}
				say(root.Streams.ErrOut, "◎ waiting for the backing object to handle the request")
				done, err := t.waitFor(ctx, timeout, func(u *unstructured.Unstructured) (bool, error) {
					return ops.ReconcileHandled(u, at), nil
				})
				if err != nil {
					return err
				}
				if !done {
					if timeout <= 0 {
						return nil
					}
					return timeoutErrorf("timed out after %s: %s reports lastHandledReconcileAt %q, not %q; is the backing object's controller running? (cozyplane trace %s)",
						timeout, t, ops.LastHandled(t.obj), at, ref)
				}
				c, err := ops.ReconcileOutcome(t.obj)
				say(root.Streams.ErrOut, "✔ %sreconciliation finished", sel.prefix(t))
				say(root.Streams.Out, "%s%s", sel.prefix(t), readyLine(c))
				return err
			})
		},
	}
	sel.bind(cmd)
	cmd.Flags().DurationVar(&timeout, "timeout", 5*time.Minute, "How long to wait for the reconcile to be handled (0: do not wait).")
	cmd.Flags().BoolVar(&force, "force", false, "Also ask helm-controller for a Helm upgrade even when nothing changed ("+appsv1alpha1.AnnotationReconcileForceAt+"; HelmRelease-backed kinds only).")
	cmd.Flags().BoolVar(&reset, "reset", false, "Also ask helm-controller to reset the failure counts, so remediation retries start over ("+appsv1alpha1.AnnotationReconcileResetAt+"; HelmRelease-backed kinds only).")
	return cmd
}

func newSuspendCommand(root *Root, suspend bool) *cobra.Command {
	var timeout time.Duration
	var sel selection
	use, short, long := "suspend", "Suspend an instance: pause its backing object and the controller's drift correction",
		`suspend sets the annotation `+appsv1alpha1.AnnotationSuspend+`=true on the instance. Its
controller then sets spec.suspend=true on the backing object (so helm-controller
or tofu-controller stop reconciling it), writes nothing else to it, does not
revert changes made to it by hand, and shows the Suspended condition (and the
SUSPENDED column). The command waits (up to --timeout) for that condition.

Without the CLI: kubectl annotate KIND NAME `+appsv1alpha1.AnnotationSuspend+`=true`+selectionHelp
	if !suspend {
		use, short, long = "resume", "Resume a suspended instance: restore its backing object and drift correction",
			`resume removes the annotation `+appsv1alpha1.AnnotationSuspend+` from the instance. Its controller
sets spec.suspend=false on the backing object, brings it back to the desired
state (reverting changes made while it was suspended) and removes the
Suspended condition. The command waits (up to --timeout) for that.

Without the CLI: kubectl annotate KIND NAME `+appsv1alpha1.AnnotationSuspend+`-`+selectionHelp
	}
	cmd := &cobra.Command{
		Use:               use + " (KIND/NAME | KIND --all | KIND -l SELECTOR)",
		Short:             short,
		Long:              long,
		Example:           "  cozyplane " + use + " postgres/orders -n tenant-demo\n  cozyplane " + use + " postgres -l team=billing -n tenant-demo",
		Args:              usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: completeRef(root, (*ops.Gatherer).InstanceKinds),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := contextOf(cmd.Context())
			return sel.each(ctx, root, args[0], func(t *target, ref string) error {
				var value *string
				if suspend {
					v := "true"
					value = &v
				}
				say(root.Streams.ErrOut, "► %s %s", map[bool]string{true: "suspending", false: "resuming"}[suspend], t)
				if err := t.annotate(ctx, appsv1alpha1.AnnotationSuspend, value); err != nil {
					return err
				}
				done, err := t.waitFor(ctx, timeout, func(u *unstructured.Unstructured) (bool, error) {
					if !suspend {
						if err := ops.ExternallySuspended(u); err != nil {
							return false, err
						}
					}
					return ops.SuspendSettled(u, suspend), nil
				})
				switch {
				case err != nil:
					return err
				case !done && timeout > 0:
					return timeoutErrorf("timed out after %s waiting for the controller to %s %s; is it running? (cozyplane trace %s)", timeout, use, t, ref)
				case done:
					say(root.Streams.Out, "✔ %s %s", t, map[bool]string{true: "suspended", false: "resumed"}[suspend])
				}
				return nil
			})
		},
	}
	sel.bind(cmd)
	cmd.Flags().DurationVar(&timeout, "timeout", time.Minute, "How long to wait for the controller to show it (0: do not wait).")
	return cmd
}

func newApproveCommand(root *Root) *cobra.Command {
	var timeout time.Duration
	var sel selection
	cmd := &cobra.Command{
		Use:   "approve (KIND/NAME | KIND --all | KIND -l SELECTOR)",
		Short: "Approve the Terraform plan waiting on an instance",
		Long: `approve reads the plan waiting for approval on a Terraform-backed instance
(status.backend.pendingPlan) and sets the annotation
` + appsv1alpha1.AnnotationApprovePlan + `=<that plan> on it. The terraform controller copies it to
the Terraform object's spec.approvePlan, and reports PlanApproved on the
instance; the command waits (up to --timeout) for that. It fails, changing
nothing, when the kind is not Terraform-backed or no plan is pending.

Without the CLI: kubectl annotate --overwrite KIND NAME ` + appsv1alpha1.AnnotationApprovePlan + `="$(kubectl get KIND NAME -o jsonpath='{.status.backend.pendingPlan}')"` + selectionHelp,
		Example: `  cozyplane approve vpc/main -n tenant-demo
  cozyplane approve vpc --all -n tenant-demo`,
		Args:              usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: completeRef(root, (*ops.Gatherer).InstanceKinds),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := contextOf(cmd.Context())
			return sel.each(ctx, root, args[0], func(t *target, ref string) error {
				plan, err := ops.PlanToApprove(t.obj)
				if err != nil {
					return err
				}
				if ops.IsSuspended(t.obj) {
					return fmt.Errorf("%s is suspended, so an approval would not reach its Terraform object: resume it first", t)
				}
				say(root.Streams.ErrOut, "► approving plan %s of %s", plan, t)
				if err := t.annotate(ctx, appsv1alpha1.AnnotationApprovePlan, &plan); err != nil {
					return err
				}
				var outcome error
				done, err := t.waitFor(ctx, timeout, func(u *unstructured.Unstructured) (bool, error) {
					ok, err := ops.ApprovalOutcome(u, plan)
					outcome = err
					return ok, nil
				})
				switch {
				case err != nil:
					return err
				case outcome != nil:
					return outcome
				case !done && timeout > 0:
					return timeoutErrorf("timed out after %s waiting for the terraform controller to forward the approval of %s", timeout, plan)
				case done:
					say(root.Streams.Out, "✔ plan %s approved on %s", plan, t)
				}
				return nil
			})
		},
	}
	sel.bind(cmd)
	cmd.Flags().DurationVar(&timeout, "timeout", time.Minute, "How long to wait for the approval to be forwarded (0: do not wait).")
	return cmd
}
