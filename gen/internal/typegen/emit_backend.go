package typegen

import (
	"github.com/dave/jennifer/jen"

	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
)

// emitBackend writes zz_generated.backend.go: Vars (Terraform kinds) or
// Values (Helm kinds) on the spec and the instance, both api/encoding's, the
// encoding the backend controllers use.
func (m *Model) emitBackend(f *jen.File) bool {
	name, fn := "Values", "Values"
	result := jen.Map(jen.String()).Any()
	lines := []string{
		"Values encodes the spec as the HelmRelease's spec.values, as the helm controller does",
		"(encoding.Values): the spec as a JSON object, numbers as int64 or float64.",
	}
	if m.Backend == cozyv1alpha1.BackendTerraform {
		name, fn = "Vars", "Vars"
		result = jen.Index().Qual(pkgTofu, "Variable")
		lines = []string{
			"Vars encodes the spec as the Terraform object's spec.vars, as the terraform controller does",
			"(encoding.Vars): one variable per top-level key, sorted by name, each value kept as its JSON type.",
		}
	}
	specType := m.Spec.Name
	addDoc(f, lines...)
	f.Func().Params(jen.Id("in").Op("*").Id(specType)).Id(name).Params().Params(result.Clone(), jen.Error()).Block(
		jen.Return(jen.Qual(pkgEncoding, fn).Call(jen.Id("in"))),
	)
	f.Line()
	addDoc(f, name+" encodes the instance's spec; see "+specType+"."+name+".")
	f.Func().Params(jen.Id("in").Op("*").Id(m.Kind)).Id(name).Params().Params(result, jen.Error()).Block(
		jen.Return(jen.Id("in").Dot("Spec").Dot(name).Call()),
	)
	return true
}
