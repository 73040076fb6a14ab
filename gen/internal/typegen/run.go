package typegen

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/cozyplane/cozyplane/gen/internal/source"
)

// Options of a `gen types` run.
type Options struct {
	// Out is the folder that receives one package per kind.
	Out string
	// Registry also writes Out/zz_generated.registry.go: a map of every
	// generated kind to its codec (for tests and tools).
	Registry bool
	// Prune removes generated packages under Out whose kind is gone.
	Prune bool
	// Log receives one line per decision (written, skipped); may be nil.
	Log io.Writer
}

// Select reads the definitions in files and keeps one per kind: the one
// that names its backend with spec.backend when another only has the legacy
// spec.release (the same kind written both ways, as examples/helm does).
// Two definitions of a kind that both use spec.backend, or both the legacy
// form, must have the same schema and backend type; the first (in the order
// given) is kept.
func Select(files []string, log io.Writer) ([]*source.Definition, error) {
	byKind := map[string]*source.Definition{}
	var order []string
	for _, file := range files {
		defs, err := source.ReadDefinitions(file)
		if err != nil {
			return nil, err
		}
		for _, d := range defs {
			kind := d.Def.Spec.Application.Kind
			prev, ok := byKind[kind]
			if !ok {
				byKind[kind] = d
				order = append(order, kind)
				continue
			}
			prevNew, curNew := prev.Def.Spec.Backend != nil, d.Def.Spec.Backend != nil
			switch {
			case curNew && !prevNew:
				logf(log, "%s: kind %s: using this definition (spec.backend) rather than the legacy one in %s", d.File, kind, prev.File)
				byKind[kind] = d
			case prevNew && !curNew:
				logf(log, "%s: kind %s: skipped, the legacy form of the definition in %s", d.File, kind, prev.File)
			default:
				if err := sameKind(prev, d); err != nil {
					return nil, err
				}
				logf(log, "%s: kind %s: skipped, already defined identically in %s", d.File, kind, prev.File)
			}
		}
	}
	out := make([]*source.Definition, 0, len(order))
	for _, k := range order {
		out = append(out, byKind[k])
	}
	return out, nil
}

func sameKind(a, b *source.Definition) error {
	ba, errA := a.Def.ResolvedBackend()
	bb, errB := b.Def.ResolvedBackend()
	if errA != nil || errB != nil || ba.Type != bb.Type || a.Def.Spec.Application != b.Def.Spec.Application {
		return &source.Error{File: b.File, Line: b.Line, Field: "spec.application",
			Message: fmt.Sprintf("kind %s is also defined, differently, in %s:%d; generate one of them", b.Def.Spec.Application.Kind, a.File, a.Line)}
	}
	return nil
}

func logf(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format+"\n", args...)
	}
}

// Model builds a definition's model, placing errors in its file.
func ModelOf(d *source.Definition) (*Model, error) {
	errf := func(fld, format string, args ...any) error { return d.Errorf(fld, format, args...) }
	m, err := Build(d.Def, errf)
	if err != nil {
		return nil, d.Wrap(err)
	}
	return m, nil
}

// Run generates one package per kind of the definitions in files.
func Run(files []string, opts Options) error {
	defs, err := Select(files, opts.Log)
	if err != nil {
		return err
	}
	if len(defs) == 0 {
		return fmt.Errorf("no ApplicationDefinition found in %v", files)
	}
	rootImport, err := ImportPath(opts.Out)
	if err != nil {
		return err
	}
	keep := map[string]bool{}
	var entries []*Model
	for _, d := range defs {
		m, err := ModelOf(d)
		if err != nil {
			return err
		}
		if keep[m.Package] {
			return d.Errorf("spec.application.kind", "two kinds map to the Go package %q; rename one", m.Package)
		}
		keep[m.Package] = true
		imp := m.Package
		if rootImport != "" {
			imp = rootImport + "/" + m.Package
		}
		files, err := Generate(m, imp)
		if err != nil {
			return fmt.Errorf("%s: %w", d.File, err)
		}
		dir := filepath.Join(opts.Out, m.Package)
		if err := WritePackage(dir, files); err != nil {
			return err
		}
		logf(opts.Log, "%s: kind %s → %s (%d files)", d.File, m.Kind, dir, len(files))
		m.importPath = imp
		entries = append(entries, m)
	}
	if opts.Registry {
		f, err := Registry(filepath.Base(opts.Out), rootImport, entries)
		if err != nil {
			return err
		}
		if err := WritePackage(opts.Out, []File{f}); err != nil {
			return err
		}
	}
	if opts.Prune {
		removed, err := Prune(opts.Out, keep)
		if err != nil {
			return err
		}
		for _, r := range removed {
			logf(opts.Log, "removed %s: its kind is no longer defined", r)
		}
	}
	return nil
}
