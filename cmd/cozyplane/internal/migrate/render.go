package migrate

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteText prints the plan (and, after --apply, the results) for people.
// Pure: the same plan prints the same text.
func WriteText(w io.Writer, p *Plan, applied bool) error {
	scope := "all namespaces"
	if p.Namespace != "" {
		scope = "namespace " + p.Namespace
	}
	ew := &errWriter{w: w}
	if len(p.Entries) == 0 {
		ew.printf("No HelmRelease written by upstream Cozystack's API in %s (none carries the application labels).\n", scope)
	} else {
		ew.printf("HelmReleases with the application labels in %s: %d to create, %d waiting for adoption, %d already adopted, %d left alone.\n\n",
			scope, p.Count(ActionCreate), p.Count(ActionWait), p.Count(ActionNone), p.Count(ActionSkip))
		tw := tabwriter.NewWriter(ew, 0, 4, 2, ' ', 0)
		header := "NAMESPACE\tHELMRELEASE\tKIND\tINSTANCE\tACTION"
		if applied {
			header += "\tRESULT"
		}
		fmt.Fprintln(tw, header)
		for i := range p.Entries {
			e := &p.Entries[i]
			action := string(e.Action)
			if e.Action == ActionSkip {
				action += " (" + e.Reason + ")"
			}
			line := fmt.Sprintf("%s\t%s\t%s\t%s\t%s", e.HelmRelease.Namespace, e.HelmRelease.Name, orDash(e.Kind), orDash(e.Instance), action)
			if applied {
				line += "\t" + orDash(resultText(e))
			}
			fmt.Fprintln(tw, line)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}

	var skipped []*Entry
	for i := range p.Entries {
		if p.Entries[i].Action == ActionSkip {
			skipped = append(skipped, &p.Entries[i])
		}
	}
	var kept []*Entry
	for i := range p.Entries {
		if e := &p.Entries[i]; e.Action == ActionCreate && e.Message != "" {
			kept = append(kept, e)
		}
	}
	if len(kept) > 0 {
		ew.printf("\nAdopted as their owner left them:\n")
		for _, e := range kept {
			ew.printf("  - HelmRelease %s/%s: %s\n", e.HelmRelease.Namespace, e.HelmRelease.Name, e.Message)
		}
	}
	if len(skipped) > 0 {
		ew.printf("\nLeft alone (reported, not blockers):\n")
		for _, e := range skipped {
			ew.printf("  - HelmRelease %s/%s: %s: %s\n", e.HelmRelease.Namespace, e.HelmRelease.Name, e.Reason, e.Message)
		}
	}
	for _, n := range p.Notes {
		ew.printf("\nNote: %s\n", n)
	}
	if len(p.Blockers) > 0 {
		ew.printf("\nBlockers (--apply refuses and changes nothing while any stands):\n")
		for _, b := range p.Blockers {
			ew.printf("  - %s [%s]: %s\n    fix: %s\n", b.Object, b.Reason, b.Message, b.Fix)
		}
	} else if !applied && p.Count(ActionCreate)+p.Count(ActionWait) > 0 {
		ew.printf("\nNo blocker: run with --apply to create the instances and wait for their adoption.\n")
	} else if !applied {
		ew.printf("\nNo blocker, nothing to do.\n")
	}
	return ew.err
}

func resultText(e *Entry) string {
	if e.Action == ActionSkip {
		return "left alone"
	}
	s := e.Result
	if c := e.InstanceReady; c != nil {
		s += fmt.Sprintf("; Ready=%s (%s)", c.Status, c.Reason)
	}
	return s
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

func (e *errWriter) printf(format string, args ...any) {
	fmt.Fprintf(e, format, args...)
}
