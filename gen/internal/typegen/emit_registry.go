package typegen

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/dave/jennifer/jen"
)

// Registry renders zz_generated.registry.go of the package that holds the
// generated ones: Kinds maps every generated kind to its kindruntime.Kind
// (codec and scheme registration), so tests and tools handle every kind
// without naming it.
func Registry(dirName, importPath string, models []*Model) (File, error) {
	pkg := PackageName(dirName)
	sorted := append([]*Model(nil), models...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Kind < sorted[j].Kind })
	f := jen.NewFilePathName(importPath, pkg)
	f.HeaderComment(Header)
	for _, p := range slices.Sorted(maps.Keys(aliases)) {
		f.ImportAlias(p, aliases[p])
	}
	for _, m := range sorted {
		f.ImportName(m.importPath, m.Package)
	}
	f.PackageComment(fmt.Sprintf("Package %s lists the kinds generated into its sub-packages, each with its codec, so that\ntests and tools can handle every kind without naming it.", pkg))
	f.Type().Defs(
		jen.Comment("// Object is what every generated instance type implements."),
		jen.Id("Object").Op("=").Qual(pkgKindRuntime, "Object"),
		jen.Comment("// Kind is one generated kind."),
		jen.Id("Kind").Op("=").Qual(pkgKindRuntime, "Kind"),
	)
	f.Line()
	dict := jen.Dict{}
	for _, m := range sorted {
		dict[jen.Lit(m.Kind)] = jen.Values(jen.Dict{
			jen.Id("GroupVersionKind"): jen.Qual(m.importPath, "GroupVersionKind"),
			jen.Id("Definition"):       jen.Qual(m.importPath, "DefinitionName"),
			jen.Id("Backend"):          jen.Qual(m.importPath, "BackendType"),
			jen.Id("New"):              jen.Func().Params().Id("Object").Block(jen.Return(jen.Op("&").Qual(m.importPath, m.Kind).Values())),
			jen.Id("FromUnstructured"): jen.Qual(pkgKindRuntime, "Decoder").Call(jen.Qual(m.importPath, "FromUnstructured")),
			jen.Id("AddToScheme"):      jen.Qual(m.importPath, "AddToScheme"),
		})
	}
	addDoc(f, "Kinds maps each kind's name to it.")
	f.Var().Id("Kinds").Op("=").Map(jen.String()).Id("Kind").Values(dict)
	var b bytes.Buffer
	if err := f.Render(&b); err != nil {
		return File{}, err
	}
	return File{Name: "zz_generated.registry.go", Content: b.Bytes()}, nil
}
