package controller

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/ownership"
	"github.com/cozyplane/cozyplane/pkg/reconcileerr"
	cozyschema "github.com/cozyplane/cozyplane/pkg/schema"
	"github.com/cozyplane/cozyplane/pkg/ssa"
)

// The instance keys policy.
//
// CRD validation rules cannot see the fields of a spec that preserves unknown
// fields, so the top-level keys of such ("free-form") kinds are checked by an
// admission policy. All free-form kinds share one ValidatingAdmissionPolicy
// and one binding with a fixed name, InstanceKeysPolicy, which the policies
// chart installs (policies/appdef-instance-keys.yaml): the appdef controller
// never creates or deletes an admission policy, it only patches that one
// policy's spec, so its RBAC on admission policies is limited by resourceNames
// to that name (the API server does not run admission policies on writes of
// admission policies, so RBAC is what keeps the controller away from the
// others). The binding, which the controller cannot write, limits the policy
// to writes of apps.cozystack.io instances whatever the spec says.
//
// The policy's spec is rebuilt from every definition that serves a
// free-form kind: each kind contributes the validations pkg/schema builds for
// it (Objects.Policy), each guarded by the kinds it applies to. See
// instanceKeysPolicy.

// InstanceKeysPolicy names the ValidatingAdmissionPolicy, and its binding,
// that checks the top-level keys of every free-form kind.
const InstanceKeysPolicy = "cozyplane-appdef-instance-keys"

// ReasonPolicyMissing: the definition's kind is free-form, and the
// ValidatingAdmissionPolicy or binding InstanceKeysPolicy that would check
// its instances' keys does not exist (the policies chart is not installed);
// the kind is not served unchecked. (It belongs with the other reasons in
// api/cozystack/v1alpha1/conditions.go.)
const ReasonPolicyMissing = "PolicyMissing"

// keyCheck is one free-form kind's share of the instance keys policy: the
// policy pkg/schema builds for that kind alone.
type keyCheck struct {
	plural string
	policy *admissionregistrationv1.ValidatingAdmissionPolicy
}

// keyChecks gathers the share of every definition that may serve a
// free-form kind: all definitions but those that lose a name clash (they
// serve nothing). A definition's share also covers the CRDs it still
// controls under another plural (a renamed kind keeps being served, and
// checked, under its old name). build returns the objects of a definition.
func keyChecks(all []cozyv1alpha1.ApplicationDefinition, crds []apiextensionsv1.CustomResourceDefinition,
	build func(*cozyv1alpha1.ApplicationDefinition) (*cozyschema.Objects, error),
) []keyCheck {
	var out []keyCheck
	for i := range all {
		def := &all[i]
		if other, _ := findClash(def, all); other != nil {
			continue
		}
		objs, err := build(def)
		if err != nil || objs.Policy == nil {
			continue
		}
		out = append(out, keyCheck{plural: def.Spec.Application.Plural, policy: objs.Policy})
		for j := range crds {
			if p := crds[j].Spec.Names.Plural; ownership.IsControlledBy(&crds[j], definitionOwner(def)) && p != def.Spec.Application.Plural {
				out = append(out, keyCheck{plural: p, policy: objs.Policy})
			}
		}
	}
	return out
}

// instanceKeysPolicy is the instance keys policy for these kinds. It matches
// writes of the listed plurals of apps.cozystack.io (no plural: only
// NoFreeFormKind, which names no resource), and its first match condition
// says the same again. The API server builds a policy's evaluation context
// for every request its matchConstraints take in, before any match
// condition: listing the plurals there keeps the writes of every other kind
// (most kinds, whose schema the CRD validates) from paying for it. Each
// match condition and validation of a kind's own policy is kept once; when
// it does not apply to every listed kind, it is guarded by the plurals it
// applies to. The result only depends on the set of checks, not on their
// order.
func instanceKeysPolicy(checks []keyCheck) *admissionregistrationv1.ValidatingAdmissionPolicy {
	sort.SliceStable(checks, func(i, j int) bool { return checks[i].plural < checks[j].plural })
	var plurals []string
	for _, c := range checks {
		if len(plurals) == 0 || plurals[len(plurals)-1] != c.plural {
			plurals = append(plurals, c.plural)
		}
	}

	type group struct {
		plurals []string
		item    any
	}
	// add files item under plural in its group (items are compared by
	// value), keeping the order in which items first appear.
	add := func(groups []*group, item any, plural string) []*group {
		for _, g := range groups {
			if equalItems(g.item, item) {
				if !slices.Contains(g.plurals, plural) {
					g.plurals = append(g.plurals, plural)
				}
				return groups
			}
		}
		return append(groups, &group{plurals: []string{plural}, item: item})
	}
	var conds, vals []*group
	for _, c := range checks {
		for _, m := range c.policy.Spec.MatchConditions {
			conds = add(conds, m, c.plural)
		}
		for _, v := range c.policy.Spec.Validations {
			vals = add(vals, v, c.plural)
		}
	}

	matchConditions := []admissionregistrationv1.MatchCondition{{
		Name:       "free-form-kinds",
		Expression: "request.resource.resource in " + celList(plurals),
	}}
	names := map[string]int{"free-form-kinds": 1}
	for _, g := range conds {
		m := g.item.(admissionregistrationv1.MatchCondition)
		if names[m.Name]++; names[m.Name] > 1 {
			m.Name = fmt.Sprintf("%s-%d", m.Name, names[m.Name])
		}
		if len(g.plurals) < len(plurals) {
			m.Expression = guard(g.plurals, m.Expression)
		}
		matchConditions = append(matchConditions, m)
	}
	validations := make([]admissionregistrationv1.Validation, 0, len(vals))
	for _, g := range vals {
		v := g.item.(admissionregistrationv1.Validation)
		if len(g.plurals) < len(plurals) {
			v.Expression = guard(g.plurals, v.Expression)
		}
		validations = append(validations, v)
	}
	if len(validations) == 0 {
		// A policy needs one validation; this one never runs (the match
		// condition above matches nothing).
		validations = []admissionregistrationv1.Validation{{
			Expression: "true",
			Message:    "no ApplicationDefinition serves a kind with a free-form spec",
		}}
	}

	resources := plurals
	if len(resources) == 0 {
		resources = []string{NoFreeFormKind}
	}
	return cozyschema.InstancePolicy(InstanceKeysPolicy, resources, matchConditions, validations)
}

// NoFreeFormKind is the resource the instance keys policy matches when no
// kind is free-form: a policy names at least one resource, and this one can
// be no kind's plural (a plural is a DNS label, without parentheses).
const NoFreeFormKind = "(none)"

// celList is a CEL list literal of plurals (DNS labels: no quoting needed).
func celList(plurals []string) string {
	return "[" + strings.Join(quoteAll(plurals), ", ") + "]"
}

func quoteAll(in []string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = "'" + s + "'"
	}
	return out
}

// guard limits expr to the listed plurals: it holds for any other kind.
func guard(plurals []string, expr string) string {
	return "!(request.resource.resource in " + celList(plurals) + ") || (" + expr + ")"
}

func equalItems(a, b any) bool { return equality.Semantic.DeepEqual(a, b) }

// build returns the objects of a definition, from a memo keyed by UID and
// generation: the instance keys policy is rebuilt from every definition on
// each reconcile, and building validates the CRD (CEL compilation).
func (r *Reconciler) build(def *cozyv1alpha1.ApplicationDefinition) (*cozyschema.Objects, error) {
	r.memoMu.Lock()
	defer r.memoMu.Unlock()
	if m, ok := r.memo[def.UID]; ok && m.generation == def.Generation {
		return m.objs, m.err
	}
	objs, err := cozyschema.Build(def)
	if r.memo == nil {
		r.memo = map[types.UID]builtObjects{}
	}
	r.memo[def.UID] = builtObjects{generation: def.Generation, objs: objs, err: err}
	return objs, err
}

type builtObjects struct {
	generation int64
	objs       *cozyschema.Objects
	err        error
}

// forget drops the memo of definitions that are gone.
func (r *Reconciler) forget(all []cozyv1alpha1.ApplicationDefinition) {
	r.memoMu.Lock()
	defer r.memoMu.Unlock()
	keep := make(map[types.UID]bool, len(all))
	for i := range all {
		keep[all[i].UID] = true
	}
	for uid := range r.memo {
		if !keep[uid] {
			delete(r.memo, uid)
		}
	}
}

// syncInstanceKeys brings the instance keys policy in line with every
// definition. def is the definition being reconciled (nil after one was
// deleted) and needsPolicy says whether its kind is free-form: then a
// missing policy or binding stalls it, and a failed write is its error; a
// definition that does not need the policy is never held up by it.
func (r *Reconciler) syncInstanceKeys(ctx context.Context, def *cozyv1alpha1.ApplicationDefinition, needsPolicy bool) error {
	err := r.applyInstanceKeys(ctx, def)
	switch {
	case err == nil || needsPolicy:
		return err
	case reconcileerr.IsForeign(err):
		// Not installed, and not needed by this definition.
		log.FromContext(ctx).V(1).Info("instance keys policy not installed", "policy", InstanceKeysPolicy)
	default:
		log.FromContext(ctx).Error(err, "instance keys policy not updated", "policy", InstanceKeysPolicy)
	}
	return nil
}

func (r *Reconciler) applyInstanceKeys(ctx context.Context, def *cozyv1alpha1.ApplicationDefinition) error {
	r.policyMu.Lock()
	defer r.policyMu.Unlock()

	all := &cozyv1alpha1.ApplicationDefinitionList{}
	if err := r.Client.List(ctx, all); err != nil {
		return err
	}
	r.forget(all.Items)
	crds := &apiextensionsv1.CustomResourceDefinitionList{}
	if err := r.Client.List(ctx, crds, client.HasLabels{cozyschema.LabelDefinition}); err != nil {
		return err
	}
	checks := keyChecks(all.Items, crds.Items, r.build)
	desired, err := toUnstructured(instanceKeysPolicy(checks), ownership.Owner{})
	if err != nil {
		return err
	}
	unstructured.RemoveNestedField(desired.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(desired.Object, "status")

	// Read from the API server, not the cache: several workers write this
	// one object, and a stale copy would make each rewrite it.
	live, err := ssa.Get(ctx, r.APIReader, desired)
	if err != nil {
		return err
	}
	binding := &unstructured.Unstructured{}
	binding.SetGroupVersionKind(admissionregistrationv1.SchemeGroupVersion.WithKind("ValidatingAdmissionPolicyBinding"))
	binding.SetName(InstanceKeysPolicy)
	liveBinding, err := ssa.Get(ctx, r.APIReader, binding)
	if err != nil {
		return err
	}
	if live == nil || liveBinding == nil {
		missing := "ValidatingAdmissionPolicy"
		if live != nil {
			missing = "ValidatingAdmissionPolicyBinding"
		}
		return reconcileerr.Foreign(ReasonPolicyMissing, fmt.Errorf(
			"the spec is free-form, so its top-level keys are checked by the %s %s, which does not exist: install it with the policies chart (policies/appdef-instance-keys.yaml); the kind is not served until then",
			missing, InstanceKeysPolicy))
	}
	res, err := r.apply(ctx, desired, live)
	if err != nil {
		if apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) {
			return stalled(cozyv1alpha1.ReasonCRDRejected, "the API server refused ValidatingAdmissionPolicy %s: %s", InstanceKeysPolicy, apiMessage(err))
		}
		return fmt.Errorf("applying ValidatingAdmissionPolicy %s: %w", InstanceKeysPolicy, err)
	}
	if res == ssa.Unchanged {
		return nil
	}
	kinds := make([]string, 0, len(checks))
	for _, c := range checks {
		kinds = append(kinds, c.plural)
	}
	why := fmt.Sprintf("it now checks the top-level keys of %d free-form kinds: %s", len(kinds), strings.Join(kinds, ", "))
	reason := cozyv1alpha1.EventPolicyUpdated
	if res == ssa.Corrected {
		reason, why = cozyv1alpha1.EventPolicyCorrected, "it had been changed by someone else; put back: "+why
	}
	log.FromContext(ctx).Info("wrote ValidatingAdmissionPolicy", "policy", InstanceKeysPolicy, "result", res.String(), "why", why)
	if def != nil {
		r.events().Normal(def, nil, reason, "Apply", fmt.Sprintf("ValidatingAdmissionPolicy %s %s: %s", InstanceKeysPolicy, res, why))
	}
	return nil
}
