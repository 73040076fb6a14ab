package typegen

import (
	"fmt"

	"github.com/dave/jennifer/jen"
)

// copyInto copies *in into *out; in and out are pointers of type *t in
// scope.
func copyInto(t *Type) []jen.Code {
	in, out := jen.Id("in"), jen.Id("out")
	switch {
	case t.plain():
		return []jen.Code{jen.Op("*").Add(out).Op("=").Op("*").Add(in)}
	case t.named() || t.Kind == KJSON:
		return []jen.Code{jen.Id("in").Dot("DeepCopyInto").Call(jen.Id("out"))}
	case t.Kind == KPtr:
		return []jen.Code{jen.If(jen.Op("*").Id("in").Op("==").Nil()).Block(
			jen.Op("*").Id("out").Op("=").Nil(),
		).Else().Block(append([]jen.Code{
			jen.Op("*").Id("out").Op("=").New(goType(t.Elem)),
			jen.List(jen.Id("in"), jen.Id("out")).Op(":=").List(jen.Op("*").Id("in"), jen.Op("*").Id("out")),
		}, copyInto(t.Elem)...)...)}
	case t.Kind == KSlice:
		var body []jen.Code
		body = append(body, jen.Op("*").Id("out").Op("=").Make(goType(t), jen.Len(jen.Op("*").Id("in"))))
		if t.Elem.plain() {
			body = append(body, jen.Copy(jen.Op("*").Id("out"), jen.Op("*").Id("in")))
		} else {
			body = append(body, jen.For(jen.Id("i").Op(":=").Range().Op("*").Id("in")).Block(append([]jen.Code{
				jen.List(jen.Id("in"), jen.Id("out")).Op(":=").List(
					jen.Op("&").Parens(jen.Op("*").Id("in")).Index(jen.Id("i")),
					jen.Op("&").Parens(jen.Op("*").Id("out")).Index(jen.Id("i"))),
			}, copyInto(t.Elem)...)...))
		}
		return []jen.Code{jen.If(jen.Op("*").Id("in").Op("==").Nil()).Block(
			jen.Op("*").Id("out").Op("=").Nil(),
		).Else().Block(body...)}
	case t.Kind == KMap:
		var loop []jen.Code
		if t.Elem.plain() {
			loop = []jen.Code{jen.Id("m").Index(jen.Id("key")).Op("=").Id("val")}
		} else {
			loop = []jen.Code{
				jen.Var().Id("c").Add(goType(t.Elem)),
				jen.Block(append([]jen.Code{
					jen.List(jen.Id("in"), jen.Id("out")).Op(":=").List(jen.Op("&").Id("val"), jen.Op("&").Id("c")),
				}, copyInto(t.Elem)...)...),
				jen.Id("m").Index(jen.Id("key")).Op("=").Id("c"),
			}
		}
		return []jen.Code{jen.If(jen.Op("*").Id("in").Op("==").Nil()).Block(
			jen.Op("*").Id("out").Op("=").Nil(),
		).Else().Block(
			jen.Id("m").Op(":=").Make(jen.Map(jen.String()).Add(goType(t.Elem)), jen.Len(jen.Op("*").Id("in"))),
			jen.For(jen.List(jen.Id("key"), jen.Id("val")).Op(":=").Range().Op("*").Id("in")).Block(loop...),
			jen.Op("*").Id("out").Op("=").Id("m"),
		)}
	}
	panic(fmt.Sprintf("typegen: cannot copy type kind %d", t.Kind))
}

func deepCopyFuncs(f *jen.File, name, what string, body []jen.Code) {
	addDoc(f, fmt.Sprintf("DeepCopyInto copies %s into out, which must not be nil.", what))
	f.Func().Params(jen.Id("in").Op("*").Id(name)).Id("DeepCopyInto").Params(jen.Id("out").Op("*").Id(name)).Block(body...)
	f.Line()
	addDoc(f, fmt.Sprintf("DeepCopy returns a deep copy of %s.", what))
	f.Func().Params(jen.Id("in").Op("*").Id(name)).Id("DeepCopy").Params().Op("*").Id(name).Block(
		jen.If(jen.Id("in").Op("==").Nil()).Block(jen.Return(jen.Nil())),
		jen.Id("out").Op(":=").New(jen.Id(name)),
		jen.Id("in").Dot("DeepCopyInto").Call(jen.Id("out")),
		jen.Return(jen.Id("out")),
	)
	f.Line()
}

func fieldCopy(fieldName string, t *Type) jen.Code {
	return jen.Block(append([]jen.Code{
		jen.List(jen.Id("in"), jen.Id("out")).Op(":=").List(jen.Op("&").Id("in").Dot(fieldName), jen.Op("&").Id("out").Dot(fieldName)),
	}, copyInto(t)...)...)
}

// emitDeepCopy writes zz_generated.deepcopy.go: DeepCopyInto, DeepCopy and
// (instance and list) DeepCopyObject for every generated type.
func (m *Model) emitDeepCopy(f *jen.File) bool {
	deepCopyFuncs(f, m.Kind, "the instance", []jen.Code{
		jen.Op("*").Id("out").Op("=").Op("*").Id("in"),
		jen.Id("out").Dot("TypeMeta").Op("=").Id("in").Dot("TypeMeta"),
		jen.Id("in").Dot("ObjectMeta").Dot("DeepCopyInto").Call(jen.Op("&").Id("out").Dot("ObjectMeta")),
		jen.Id("in").Dot("Spec").Dot("DeepCopyInto").Call(jen.Op("&").Id("out").Dot("Spec")),
		jen.Id("in").Dot("Status").Dot("DeepCopyInto").Call(jen.Op("&").Id("out").Dot("Status")),
	})
	addDoc(f, "DeepCopyObject implements runtime.Object.")
	f.Func().Params(jen.Id("in").Op("*").Id(m.Kind)).Id("DeepCopyObject").Params().Qual(pkgRuntime, "Object").Block(
		jen.If(jen.Id("c").Op(":=").Id("in").Dot("DeepCopy").Call(), jen.Id("c").Op("!=").Nil()).Block(jen.Return(jen.Id("c"))),
		jen.Return(jen.Nil()),
	)
	f.Line()
	deepCopyFuncs(f, m.ListKind, "the list", []jen.Code{
		jen.Op("*").Id("out").Op("=").Op("*").Id("in"),
		jen.Id("out").Dot("TypeMeta").Op("=").Id("in").Dot("TypeMeta"),
		jen.Id("in").Dot("ListMeta").Dot("DeepCopyInto").Call(jen.Op("&").Id("out").Dot("ListMeta")),
		jen.If(jen.Id("in").Dot("Items").Op("!=").Nil()).Block(
			jen.Id("out").Dot("Items").Op("=").Make(jen.Index().Id(m.Kind), jen.Len(jen.Id("in").Dot("Items"))),
			jen.For(jen.Id("i").Op(":=").Range().Id("in").Dot("Items")).Block(
				jen.Id("in").Dot("Items").Index(jen.Id("i")).Dot("DeepCopyInto").Call(jen.Op("&").Id("out").Dot("Items").Index(jen.Id("i"))),
			),
		),
	})
	addDoc(f, "DeepCopyObject implements runtime.Object.")
	f.Func().Params(jen.Id("in").Op("*").Id(m.ListKind)).Id("DeepCopyObject").Params().Qual(pkgRuntime, "Object").Block(
		jen.If(jen.Id("c").Op(":=").Id("in").Dot("DeepCopy").Call(), jen.Id("c").Op("!=").Nil()).Block(jen.Return(jen.Id("c"))),
		jen.Return(jen.Nil()),
	)
	f.Line()
	if m.Spec.Kind == KMap {
		elem := &Type{Kind: KMap, Elem: m.Spec.Elem}
		deepCopyFuncs(f, m.Spec.Name, "the spec", copyInto(elem))
	}
	for _, s := range m.Structs {
		body := []jen.Code{jen.Op("*").Id("out").Op("=").Op("*").Id("in")}
		for _, fl := range s.Fields {
			if !fl.Type.plain() {
				body = append(body, fieldCopy(fl.GoName, fl.Type))
			}
		}
		if s.Extra {
			body = append(body, fieldCopy(s.ExtraName, &Type{Kind: KMap, Elem: &Type{Kind: KJSON}}))
		}
		deepCopyFuncs(f, s.Name, "the "+s.Name, body)
	}
	return true
}
