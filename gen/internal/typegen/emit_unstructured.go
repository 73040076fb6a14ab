package typegen

import (
	"fmt"

	"github.com/dave/jennifer/jen"
)

// emitUnstructured writes zz_generated.unstructured.go: ToUnstructured and
// FromUnstructured, both kindruntime's for this kind.
func (m *Model) emitUnstructured(f *jen.File) bool {
	addDoc(f,
		"ToUnstructured returns the instance as the API server serves it: apiVersion and kind set, fields",
		"the spec leaves out omitted, numbers as int64 or float64.",
	)
	f.Func().Params(jen.Id("in").Op("*").Id(m.Kind)).Id("ToUnstructured").Params().Params(jen.Op("*").Qual(pkgUnstructured, "Unstructured"), jen.Error()).Block(
		jen.Return(jen.Qual(pkgKindRuntime, "ToUnstructured").Call(jen.Id("in"), jen.Id("GroupVersionKind"))),
	)
	f.Line()
	addDoc(f,
		fmt.Sprintf("FromUnstructured decodes an unstructured %s. Decoding is strict and case-sensitive:", m.Kind),
		"a field the generated types do not know is an error (the types are older than the definition:",
		"regenerate them), never silently dropped.",
	)
	f.Func().Id("FromUnstructured").Params(jen.Id("u").Op("*").Qual(pkgUnstructured, "Unstructured")).Params(jen.Op("*").Id(m.Kind), jen.Error()).Block(
		jen.Return(jen.Qual(pkgKindRuntime, "FromUnstructured").Types(jen.Id(m.Kind)).Call(jen.Id("u"), jen.Id("GroupVersionKind"))),
	)
	return true
}
