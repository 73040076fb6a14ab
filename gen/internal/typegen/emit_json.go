package typegen

import (
	"fmt"

	"github.com/dave/jennifer/jen"
)

// emitJSON writes zz_generated.json.go, only for kinds with objects that keep
// unknown fields: their MarshalJSON and UnmarshalJSON, which write and read
// the keys the schema does not name next to the named fields
// (kindruntime.MarshalWithExtra, UnmarshalWithExtra).
func (m *Model) emitJSON(f *jen.File) bool {
	any := false
	for _, s := range m.Structs {
		if !s.Extra {
			continue
		}
		any = true
		names := []jen.Code{jen.Id("b"), jen.Op("&").Id("p")}
		for _, fl := range s.Fields {
			names = append(names, jen.Lit(fl.JSONName))
		}
		addDoc(f, fmt.Sprintf("MarshalJSON writes the named fields of %s and the keys held in %s.", s.Name, s.ExtraName))
		f.Func().Params(jen.Id("in").Id(s.Name)).Id("MarshalJSON").Params().Params(jen.Index().Byte(), jen.Error()).Block(
			jen.Type().Id("plain").Id(s.Name),
			jen.Return(jen.Qual(pkgKindRuntime, "MarshalWithExtra").Call(jen.Id("plain").Call(jen.Id("in")), jen.Id("in").Dot(s.ExtraName))),
		)
		f.Line()
		addDoc(f, fmt.Sprintf("UnmarshalJSON reads the named fields of %s and keeps the other keys in %s.", s.Name, s.ExtraName))
		f.Func().Params(jen.Id("in").Op("*").Id(s.Name)).Id("UnmarshalJSON").Params(jen.Id("b").Index().Byte()).Error().Block(
			jen.Type().Id("plain").Id(s.Name),
			jen.Var().Id("p").Id("plain"),
			jen.List(jen.Id("extra"), jen.Err()).Op(":=").Qual(pkgKindRuntime, "UnmarshalWithExtra").Call(names...),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
			jen.Id("p").Dot(s.ExtraName).Op("=").Id("extra"),
			jen.Op("*").Id("in").Op("=").Id(s.Name).Call(jen.Id("p")),
			jen.Return(jen.Nil()),
		)
		f.Line()
	}
	return any
}
