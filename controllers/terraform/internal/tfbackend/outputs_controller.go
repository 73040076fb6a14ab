package tfbackend

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	tfv1alpha2 "github.com/cozyplane/cozyplane/api/tofu/v1alpha2"
	"github.com/cozyplane/cozyplane/pkg/instance"
	"github.com/cozyplane/cozyplane/pkg/record"
)

// OutputsResync is how often an instance's outputs copy is compared with
// tofu-controller's Secret when the Terraform object does not change.
const OutputsResync = 5 * time.Minute

// TenantNamespacePrefix: outputs are copied only into tenant namespaces.
const TenantNamespacePrefix = "tenant-"

// OutputsReconciler keeps the tenant's copy of each Terraform instance's
// outputs (outputs.go) and the summary of its pending plan (plansummary.go).
// It runs on every change of a Terraform object (tofu-controller updates the
// status whenever it writes outputs) and every OutputsResync. The Terraform
// objects are read from the cache the instance reconciler fills (the same
// informer, so the cache holds at least the version whose event brought the
// reconcile); Secrets are read from the API server one by one, never cached.
type OutputsReconciler struct {
	// Name is the field manager and event source.
	Name     string
	Client   client.Client // definitions and Terraform objects (cache)
	Reader   client.Reader // instances, Secrets and RoleBindings (API server)
	Recorder events.EventRecorder
	// Access gives the controller its rights on Secrets in the tenant
	// namespace (access.go); nil: it holds them some other way.
	Access *OutputsAccess
}

// SetupWithManager registers the controller. It watches the Terraform
// objects as the instance reconciler does (unstructured, with the cache's
// label selector for the backend's objects: pkg/instance CacheOptions), so
// both share one informer.
func (r *OutputsReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named(r.Name + "-outputs").
		For(newTerraform()).
		Complete(r)
}

func newTerraform() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(tfv1alpha2.GroupVersion.WithKind(tfv1alpha2.TerraformKind))
	return u
}

// Reconcile copies the outputs of the instance of one Terraform object.
func (r *OutputsReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	u := newTerraform()
	if err := r.Client.Get(ctx, req.NamespacedName, u); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	tf := &tfv1alpha2.Terraform{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, tf); err != nil {
		return ctrl.Result{}, fmt.Errorf("reading Terraform %s: %w", req.NamespacedName, err)
	}
	ref, ok := InstanceOf(tf)
	if !ok {
		return ctrl.Result{}, nil
	}
	if err := r.summarizePlan(ctx, tf); err != nil {
		return ctrl.Result{}, err
	}
	if !strings.HasPrefix(ref.Namespace, TenantNamespacePrefix) {
		return ctrl.Result{}, nil
	}
	inst := &unstructured.Unstructured{}
	inst.SetGroupVersionKind(appsv1alpha1.GroupVersion.WithKind(ref.Kind))
	if err := r.Reader.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, inst); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if string(inst.GetUID()) != ref.UID || !inst.GetDeletionTimestamp().IsZero() {
		return ctrl.Result{}, nil // another instance of that name, or going: its copy goes with it
	}
	def, err := r.definition(ctx, ref.Kind)
	if err != nil || def == nil {
		return ctrl.Result{}, err
	}
	name, err := OutputsSecretName(def, inst)
	if err != nil || name == "" {
		return ctrl.Result{}, nil // the instance reconciler reports a bad name; no outputs Secret
	}
	src, err := r.secret(ctx, tf.Namespace, name)
	if err != nil {
		return ctrl.Result{}, err
	}
	desired, err := TenantOutputsSecret(def, inst, src)
	if err != nil {
		return ctrl.Result{}, nil
	}
	if ok, err := r.ensureWriter(ctx, inst); !ok || err != nil {
		return ctrl.Result{RequeueAfter: OutputsResync}, err
	}
	existing, err := r.secret(ctx, inst.GetNamespace(), name)
	if err != nil {
		return ctrl.Result{}, err
	}
	action, msg := OutputsWrite(inst, desired, existing)
	switch action {
	case OutputsApply:
		if existing == nil {
			err = r.Client.Create(ctx, desired, client.FieldOwner(r.Name))
		} else {
			desired.ResourceVersion = existing.ResourceVersion
			err = r.Client.Update(ctx, desired, client.FieldOwner(r.Name))
		}
		if err == nil {
			log.FromContext(ctx).Info("outputs copied", "secret", inst.GetNamespace()+"/"+name)
		}
	case OutputsDelete:
		uid := existing.UID
		err = client.IgnoreNotFound(r.Client.Delete(ctx, existing, client.Preconditions{UID: &uid}))
	case OutputsRefuse:
		record.For(r.Recorder, r.Client).Warning(inst, nil, appsv1alpha1.EventOutputsNotCopied, "CopyOutputs", msg)
	}
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("outputs Secret %s/%s: %w", inst.GetNamespace(), name, err)
	}
	return ctrl.Result{RequeueAfter: OutputsResync}, nil
}

// InstanceRef names the instance a Terraform object belongs to.
type InstanceRef struct{ Kind, Namespace, Name, UID string }

// InstanceOf reads a Terraform object's instance from the labels the
// instance reconciler writes (the application labels and, for an object in a
// platform namespace, the instance's namespace and UID). Pure.
func InstanceOf(tf client.Object) (InstanceRef, bool) {
	l := tf.GetLabels()
	ref := InstanceRef{
		Kind: l[appsv1alpha1.LabelApplicationKind], Name: l[appsv1alpha1.LabelApplicationName],
		Namespace: l[appsv1alpha1.LabelApplicationNamespace], UID: l[appsv1alpha1.LabelApplicationUID],
	}
	ok := l[appsv1alpha1.LabelApplicationGroup] == appsv1alpha1.GroupVersion.Group &&
		ref.Kind != "" && ref.Name != "" && ref.Namespace != "" && ref.UID != ""
	return ref, ok
}

// definition is the Terraform-backed definition serving kind, or nil.
func (r *OutputsReconciler) definition(ctx context.Context, kind string) (*instance.Definition, error) {
	var list cozyv1alpha1.ApplicationDefinitionList
	if err := r.Client.List(ctx, &list); err != nil {
		return nil, err
	}
	for i := range list.Items {
		if list.Items[i].Spec.Application.Kind != kind {
			continue
		}
		def, err := instance.Resolve(&list.Items[i])
		if err != nil || def.Backend.Terraform == nil {
			return nil, nil
		}
		return def, nil
	}
	return nil, nil
}

// ensureWriter creates the RoleBinding that lets the controller write
// outputs copies in inst's namespace when it is missing. A RoleBinding of
// that name that does not grant it is left alone and reported on inst
// (OutputsNotCopied, false); the copy waits until it is gone.
func (r *OutputsReconciler) ensureWriter(ctx context.Context, inst *unstructured.Unstructured) (bool, error) {
	want := r.Access.Binding(inst.GetNamespace(), r.Access.writerRole(), map[string]string{LabelManagedBy: ManagedBy})
	if want == nil {
		return true, nil
	}
	live := &rbacv1.RoleBinding{}
	switch err := r.Reader.Get(ctx, client.ObjectKeyFromObject(want), live); {
	case apierrors.IsNotFound(err):
		live = nil
	case err != nil:
		return false, err
	}
	create, err := DecideBinding(live, want)
	if err != nil {
		record.For(r.Recorder, r.Client).Warning(inst, nil, appsv1alpha1.EventOutputsNotCopied, "CopyOutputs", err.Error())
		return false, nil
	}
	if !create {
		return true, nil
	}
	if err := r.Client.Create(ctx, want, client.FieldOwner(r.Name)); err != nil && !apierrors.IsAlreadyExists(err) {
		return false, fmt.Errorf("RoleBinding %s/%s for the outputs copies: %w", want.Namespace, want.Name, err)
	}
	log.FromContext(ctx).Info("bound the outputs writer role", "rolebinding", want.Namespace+"/"+want.Name)
	return true, nil
}

// summarizePlan keeps AnnotationPlanSummary on a Terraform object of a
// platform namespace: the summary of its pending plan, once tofu-controller
// has stored that plan in readable form; none when no plan waits.
func (r *OutputsReconciler) summarizePlan(ctx context.Context, tf *tfv1alpha2.Terraform) error {
	if !strings.HasPrefix(tf.Namespace, NamespacePrefix) {
		return nil // an earlier version's object in a tenant namespace: left as it is
	}
	pending, current := tf.Status.Plan.Pending, tf.Annotations[AnnotationPlanSummary]
	var want *string // nil: remove
	if pending != "" {
		if _, ok := PlanSummaryOf(tf.Annotations, pending); ok {
			return nil
		}
		var cms corev1.ConfigMapList
		if err := r.Reader.List(ctx, &cms, client.InNamespace(tf.Namespace), client.MatchingLabels{planWorkspaceLabel: DefaultWorkspace}); err != nil {
			return fmt.Errorf("reading the readable plan of Terraform %s/%s: %w", tf.Namespace, tf.Name, err)
		}
		text, ok := ReadablePlan(pending, PlanConfigMapsOf(tf, cms.Items))
		if !ok {
			return nil // not stored yet: its write changes the Terraform status, and brings us back
		}
		v := PlanSummaryAnnotation(ParseHumanPlan(pending, text))
		want = &v
	}
	if want == nil && current == "" || want != nil && *want == current {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"annotations": map[string]any{AnnotationPlanSummary: want}, "resourceVersion": tf.ResourceVersion,
	}})
	if err != nil {
		return err
	}
	if err := r.Client.Patch(ctx, tf, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(r.Name)); err != nil {
		return client.IgnoreNotFound(err)
	}
	log.FromContext(ctx).Info("plan summary", "terraform", tf.Namespace+"/"+tf.Name, "plan", pending)
	return nil
}

func (r *OutputsReconciler) secret(ctx context.Context, ns, name string) (*corev1.Secret, error) {
	s := &corev1.Secret{}
	if err := r.Reader.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, s); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return s, nil
}
