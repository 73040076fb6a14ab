package typegen

import "github.com/dave/jennifer/jen"

// emitRegister writes zz_generated.register.go: the kind's names, its
// GroupVersion(Kind|Resource) and AddToScheme (kindruntime.NewSchemeBuilder).
func (m *Model) emitRegister(f *jen.File) bool {
	f.Comment("// Names of the kind.")
	f.Const().Defs(
		jen.Comment("// Group of every user-facing kind."),
		jen.Id("Group").Op("=").Lit("apps.cozystack.io"),
		jen.Comment("// APIVersion of the kind."),
		jen.Id("APIVersion").Op("=").Lit("apps.cozystack.io/v1alpha1"),
		jen.Comment("// Kind is the kind's name."),
		jen.Id("Kind").Op("=").Lit(m.Kind),
		jen.Comment("// ListKind is the kind of a list of instances."),
		jen.Id("ListKind").Op("=").Lit(m.ListKind),
		jen.Comment("// Plural is the resource name."),
		jen.Id("Plural").Op("=").Lit(m.Plural),
		jen.Comment("// Singular is the singular resource name."),
		jen.Id("Singular").Op("=").Lit(m.Singular),
		jen.Comment("// DefinitionName is the ApplicationDefinition that declares the kind."),
		jen.Id("DefinitionName").Op("=").Lit(m.Definition),
		jen.Comment("// BackendType is the definition's backend: Helm or Terraform."),
		jen.Id("BackendType").Op("=").Lit(string(m.Backend)),
	)
	f.Line()
	f.Var().Defs(
		jen.Comment("// GroupVersion of the kind."),
		jen.Id("GroupVersion").Op("=").Qual(pkgSchema, "GroupVersion").Values(jen.Dict{
			jen.Id("Group"): jen.Id("Group"), jen.Id("Version"): jen.Lit("v1alpha1"),
		}),
		jen.Comment("// GroupVersionKind of an instance."),
		jen.Id("GroupVersionKind").Op("=").Id("GroupVersion").Dot("WithKind").Call(jen.Id("Kind")),
		jen.Comment("// GroupVersionResource of the kind's resource."),
		jen.Id("GroupVersionResource").Op("=").Id("GroupVersion").Dot("WithResource").Call(jen.Id("Plural")),
		jen.Line(),
		jen.Comment("// SchemeBuilder registers the kind and its list."),
		jen.Id("SchemeBuilder").Op("=").Qual(pkgKindRuntime, "NewSchemeBuilder").Call(
			jen.Id("GroupVersion"), jen.Op("&").Id(m.Kind).Values(), jen.Op("&").Id(m.ListKind).Values()),
		jen.Comment("// AddToScheme adds the kind and its list to a scheme."),
		jen.Id("AddToScheme").Op("=").Id("SchemeBuilder").Dot("AddToScheme"),
	)
	return true
}
