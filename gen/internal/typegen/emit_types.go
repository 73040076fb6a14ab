package typegen

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"
)

// emitTypes writes zz_generated.types.go: the package doc, the instance and
// list types, the spec's structs, maps and enums (built by model.go).
func (m *Model) emitTypes(f *jen.File) bool {
	pkgDoc := []string{
		fmt.Sprintf("Package %s is the typed Go API of the %s kind (%s, %s), served by the CRD that the appdef controller",
			m.Package, m.Kind, "apps.cozystack.io/v1alpha1", m.Plural),
		fmt.Sprintf("builds from the ApplicationDefinition %q. Each %s becomes a %s.", m.Definition, m.Kind, m.backingKind()),
	}
	if len(m.Doc) > 0 {
		pkgDoc = append(pkgDoc, "")
		pkgDoc = append(pkgDoc, m.Doc...)
	}
	pkgDoc = append(pkgDoc, "", "Regenerate it with `gen types` (see gen/README.md); do not edit it.")
	f.PackageComment(strings.Join(pkgDoc, "\n"))

	specTag := "spec"
	if m.Spec.Kind == KMap {
		specTag = "spec,omitzero"
	}
	addDoc(f,
		fmt.Sprintf("%s is an instance of the %s kind; the backend turns it into a %s", m.Kind, m.Kind, m.backingKind()),
		"named after it in its namespace.",
		"",
		"+kubebuilder:object:root=true",
	)
	f.Type().Id(m.Kind).Struct(
		jen.Qual(pkgMetav1, "TypeMeta").Tag(map[string]string{"json": ",inline"}),
		jen.Qual(pkgMetav1, "ObjectMeta").Tag(map[string]string{"json": "metadata,omitempty"}),
		jen.Line(),
		jen.Comment("// Spec is the desired state, validated by the API server against the definition's schema."),
		jen.Id("Spec").Id(m.Kind+"Spec").Tag(map[string]string{"json": specTag}),
		jen.Line(),
		jen.Comment("// Status is written by the backend controllers."),
		jen.Id("Status").Qual(pkgApps, "ApplicationStatus").Tag(map[string]string{"json": "status,omitzero"}),
	)
	f.Line()
	addDoc(f, fmt.Sprintf("%s is a list of %s instances.", m.ListKind, m.Kind), "", "+kubebuilder:object:root=true")
	f.Type().Id(m.ListKind).Struct(
		jen.Qual(pkgMetav1, "TypeMeta").Tag(map[string]string{"json": ",inline"}),
		jen.Qual(pkgMetav1, "ListMeta").Tag(map[string]string{"json": "metadata,omitempty"}),
		jen.Id("Items").Index().Id(m.Kind).Tag(map[string]string{"json": "items"}),
	)

	if m.Spec.Kind == KMap {
		f.Line()
		addDoc(f, fmt.Sprintf("%s is the spec of a %s: a map, as its schema says.", m.Spec.Name, m.Kind))
		f.Type().Id(m.Spec.Name).Map(jen.String()).Add(goType(m.Spec.Elem))
	}
	for _, s := range m.Structs {
		f.Line()
		addDoc(f, s.Doc...)
		var fields []jen.Code
		for i, fl := range s.Fields {
			if i > 0 {
				fields = append(fields, jen.Line())
			}
			fields = append(fields, doc(fl.Doc...)...)
			tag := fl.JSONName
			if fl.Omit != "" {
				tag += "," + fl.Omit
			}
			fields = append(fields, jen.Id(fl.GoName).Add(goType(fl.Type)).Tag(map[string]string{"json": tag}))
		}
		if s.Extra {
			if len(fields) > 0 {
				fields = append(fields, jen.Line())
			}
			fields = append(fields, doc(
				s.ExtraName+" holds the keys the schema does not name, as written: the object preserves",
				"unknown fields. MarshalJSON writes them next to the named fields.")...)
			fields = append(fields, jen.Id(s.ExtraName).Map(jen.String()).Qual(pkgAPIExtV1, "JSON").Tag(map[string]string{"json": "-"}))
		}
		f.Type().Id(s.Name).Struct(fields...)
	}
	for _, e := range m.Enums {
		f.Line()
		addDoc(f, e.Doc...)
		f.Type().Id(e.Name).String()
		f.Line()
		addDoc(f, fmt.Sprintf("Values of %s.", e.Name))
		var consts []jen.Code
		for _, v := range e.Values {
			consts = append(consts, jen.Id(v.GoName).Id(e.Name).Op("=").Lit(v.Value))
		}
		f.Const().Defs(consts...)
	}
	return true
}
