package controller

import (
	"context"
	"fmt"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/log"

	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/ownership"
	"github.com/cozyplane/cozyplane/pkg/phase"
	"github.com/cozyplane/cozyplane/pkg/reconcileerr"
	cozyschema "github.com/cozyplane/cozyplane/pkg/schema"
	"github.com/cozyplane/cozyplane/pkg/ssa"
)

// serving is what the phases of serve learn and pass on.
type serving struct {
	def     *cozyv1alpha1.ApplicationDefinition
	crdName string
	owner   ownership.Owner
	objs    *cozyschema.Objects
	// live is the CRD at crdName as read (meaningful when found).
	live  *apiextensionsv1.CustomResourceDefinition
	found bool
	// roleNote names the aggregated roles left alone (for Ready's message).
	roleNote string
}

// phases are the steps of serve, in order. Each returns nil to go on; an
// error (typed: reconcileerr.Stalled, Foreign, Waiting, or transient) ends
// serve and decides the conditions (summarize).
func (r *Reconciler) phases() []phase.Phase[*serving] {
	return []phase.Phase[*serving]{
		{Name: "build-objects", Run: r.buildObjects}, // the CRD and policy the definition asks for
		{Name: "check-names", Run: r.checkNames},     // no clash with another definition, no rename
		{Name: "check-crd", Run: r.checkCRD},         // the CRD at the name is ours (or absent)
		// The policy goes first: a free-form kind is never served unchecked.
		{Name: "serve-policy", Run: r.servePolicy},
		// The roles go before the CRD too, so users of the built-in roles
		// can use the kind as soon as it is served.
		{Name: "serve-roles", Run: r.serveRoles},
		{Name: "apply-crd", Run: r.applyCRD},      // written; waits when it changed
		{Name: "established", Run: r.established}, // the API server serves it
		{Name: "routed", Run: r.routed},           // no APIService sends the group elsewhere
		// Last, so a definition stored before the CRD's source rules keeps
		// its kind served (its instances stay readable and deletable) and
		// only says what to fix; the backends write nothing for it.
		{Name: "check-sources", Run: checkSources},
	}
}

// serve runs the phases in order; the first that cannot complete decides.
// It returns the Ready message when the kind is served.
func (r *Reconciler) serve(ctx context.Context, def *cozyv1alpha1.ApplicationDefinition) (string, error) {
	app := def.Spec.Application
	s := &serving{
		def:     def,
		crdName: cozyschema.CRDName(app.Plural),
		owner:   definitionOwner(def),
		live:    &apiextensionsv1.CustomResourceDefinition{},
	}
	def.Status.CRDName = s.crdName
	if be, err := def.ResolvedBackend(); err == nil {
		def.Status.Backend = be.Type
	}
	if err := phase.Run(ctx, s, r.phases()...); err != nil {
		return "", err
	}
	msg := fmt.Sprintf("CRD %s is established and serves kind %s (%s backend)", s.crdName, app.Kind, def.Status.Backend)
	if s.roleNote != "" {
		msg += "; " + s.roleNote
	}
	return msg, nil
}

// buildObjects builds the definition's objects; a *cozyschema.Error is stalled
// with its reason, others are retried.
func (r *Reconciler) buildObjects(_ context.Context, s *serving) error {
	objs, err := r.build(s.def)
	s.objs = objs
	return err
}

func (r *Reconciler) checkNames(ctx context.Context, s *serving) error {
	all := &cozyv1alpha1.ApplicationDefinitionList{}
	if err := r.Client.List(ctx, all); err != nil {
		return err
	}
	if other, name := findClash(s.def, all.Items); other != nil {
		return stalled(cozyv1alpha1.ReasonNameClash,
			"%s is already claimed by ApplicationDefinition %s (kind %s, plural %s), which is older and keeps it: rename this definition's kind, plural or singular",
			name, other.Name, other.Spec.Application.Kind, other.Spec.Application.Plural)
	}
	owned, err := r.ownedCRDs(ctx, s.def)
	if err != nil {
		return err
	}
	if msg := renamed(s.def, s.crdName, owned); msg != "" {
		return stalled(cozyv1alpha1.ReasonKindRenamed, "%s", msg)
	}
	return nil
}

func (r *Reconciler) checkCRD(ctx context.Context, s *serving) error {
	found, err := r.getEitherWay(ctx, s.crdName, s.live)
	if err != nil || !found {
		return err
	}
	s.found = true
	if err := ownership.Check("CustomResourceDefinition", s.live, s.owner); err != nil {
		return reconcileerr.Foreign(cozyv1alpha1.ReasonForeignCRD, err)
	}
	if s.live.DeletionTimestamp != nil {
		return waiting(0, cozyv1alpha1.ReasonProgressing, "CRD %s is being deleted; it will be created again once it is gone", s.crdName)
	}
	return nil
}

func (r *Reconciler) servePolicy(ctx context.Context, s *serving) error {
	return r.syncInstanceKeys(ctx, s.def, s.objs.Policy != nil)
}

func (r *Reconciler) serveRoles(ctx context.Context, s *serving) error {
	note, err := r.applyRoles(ctx, s.def, s.owner)
	if err != nil {
		return err
	}
	s.roleNote = note
	if note != "" && !strings.Contains(readyMessageOf(s.def), note) {
		r.events().Warning(s.def, nil, cozyv1alpha1.EventRoleNotOwned, "Apply", note)
	}
	return nil
}

func (r *Reconciler) applyCRD(ctx context.Context, s *serving) error {
	kind := s.def.Spec.Application.Kind
	res, err := r.applyOwned(ctx, s.objs.CRD, s.owner, s.live, s.found)
	if err != nil {
		if apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) || apierrors.IsRequestEntityTooLargeError(err) {
			return stalled(cozyv1alpha1.ReasonCRDRejected, "the API server refused CRD %s: %s", s.crdName, apiMessage(err))
		}
		return fmt.Errorf("applying CRD %s: %w", s.crdName, err)
	}
	switch res {
	case ssa.Created:
		log.FromContext(ctx).Info("created CRD", "crd", s.crdName, "why", "the definition serves kind "+kind)
		r.events().Normal(s.def, nil, cozyv1alpha1.EventCRDCreated, "Apply", fmt.Sprintf("created CRD %s serving kind %s", s.crdName, kind))
		return waiting(establishRecheck, cozyv1alpha1.ReasonProgressing, "created CRD %s; waiting for the API server to establish it", s.crdName)
	case ssa.Updated, ssa.Corrected:
		reason, note := cozyv1alpha1.EventCRDUpdated, "updated CRD %s to the definition's generation"
		if res == ssa.Corrected {
			reason, note = cozyv1alpha1.EventCRDCorrected, "CRD %s had been changed by someone else; put it back"
		}
		log.FromContext(ctx).Info("wrote CRD", "crd", s.crdName, "result", res.String(), "why", fmt.Sprintf(note, s.crdName))
		r.events().Normal(s.def, nil, reason, "Apply", fmt.Sprintf(note, s.crdName))
		return waiting(establishRecheck, cozyv1alpha1.ReasonProgressing, "updated CRD %s; waiting for the API server to establish it", s.crdName)
	}
	return nil
}

func (r *Reconciler) established(_ context.Context, s *serving) error {
	switch state, msg := crdVerdict(s.live); state {
	case crdNamesRejected:
		return stalled(cozyv1alpha1.ReasonCRDNotEstablished, "%s", msg)
	case crdWaiting:
		return waiting(establishRecheck, cozyv1alpha1.ReasonCRDNotEstablished, "%s", msg)
	}
	return nil
}

// routed: established is not served when an APIService sends the group
// elsewhere. The APIService is watched: no recheck needed.
func (r *Reconciler) routed(ctx context.Context, s *serving) error {
	route, err := r.shadowedBy(ctx)
	if err != nil {
		return err
	}
	if msg := shadowMessage(route, s.def.Spec.Application.Kind, s.crdName); msg != "" {
		return stalled(cozyv1alpha1.ReasonGroupShadowed, "%s", msg)
	}
	return nil
}

// checkSources: a chart, module or values source a tenant could write. The
// CRD refuses such definitions on write; one stored before that is reported
// here (ReasonSourceNotPlatformOwned), and the backends refuse its instances.
func checkSources(_ context.Context, s *serving) error {
	if err := s.def.CheckSources(); err != nil {
		return stalled(cozyv1alpha1.ReasonSourceNotPlatformOwned,
			"CRD %s serves kind %s, but no backing object is written for its instances: %s", s.crdName, s.def.Spec.Application.Kind, err)
	}
	return nil
}
