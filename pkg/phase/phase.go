// Package phase runs a reconcile as a fixed sequence of named steps. Each
// step returns nil to go on, or an error that ends the sequence and decides
// the outcome: typed with pkg/reconcileerr (Stalled, Foreign, Waiting) or
// transient. The error is returned as it is, since its message is what the
// status condition says; the name of the step it came from is logged.
package phase

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/log"
)

// Phase is one named step over the reconcile's state S.
type Phase[S any] struct {
	Name string
	Run  func(context.Context, S) error
}

// Run runs the phases in order and returns the first error.
func Run[S any](ctx context.Context, s S, phases ...Phase[S]) error {
	for _, p := range phases {
		if err := p.Run(ctx, s); err != nil {
			log.FromContext(ctx).V(1).Info("phase did not complete", "phase", p.Name, "error", err.Error())
			return err
		}
	}
	return nil
}
