package releasestorage

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteText prints the plan (and, after --apply, the results) for people.
func WriteText(w io.Writer, p *Plan, applied bool) error {
	scope := "all namespaces"
	if p.Namespace != "" {
		scope = "namespace " + p.Namespace
	}
	if len(p.Entries) == 0 {
		_, err := fmt.Fprintf(w, "No HelmRelease of an instance in %s.\n", scope)
		return err
	}
	if _, err := fmt.Fprintf(w, "HelmReleases of instances in %s: %d to move, %d already in their platform namespace, %d left alone.\n\n",
		scope, p.Count(ActionMove), p.Count(ActionNone), p.Count(ActionSkip)); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	header := "NAMESPACE\tHELMRELEASE\tRECORDS\tTO\tACTION"
	if applied {
		header += "\tRESULT"
	}
	fmt.Fprintln(tw, header)
	for i := range p.Entries {
		e := &p.Entries[i]
		action := e.Action
		if e.Action == ActionSkip {
			action += " (" + e.Reason + ")"
		}
		line := fmt.Sprintf("%s\t%s\t%d\t%s\t%s", e.Namespace, e.HelmRelease, len(e.Records), e.StorageNamespace, action)
		if applied {
			r := e.Result
			if r == "" {
				r = "-"
			}
			line += "\t" + r
		}
		fmt.Fprintln(tw, line)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for i := range p.Entries {
		if e := &p.Entries[i]; e.Action == ActionSkip {
			if _, err := fmt.Fprintf(w, "\n%s/%s: %s: %s", e.Namespace, e.HelmRelease, e.Reason, e.Message); err != nil {
				return err
			}
		}
	}
	if p.Count(ActionSkip) > 0 {
		_, err := fmt.Fprintln(w)
		return err
	}
	return nil
}
