package fromtf

import (
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	tfv1alpha2 "github.com/cozyplane/cozyplane/api/tofu/v1alpha2"

	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/gen/internal/defout"
	"github.com/cozyplane/cozyplane/gen/internal/source"
	"github.com/cozyplane/cozyplane/gen/internal/typegen"
	"github.com/cozyplane/cozyplane/pkg/schema"
)

// Definition builds the module's ApplicationDefinition and checks it with
// pkg/schema, placing any problem at the variable's declaration.
func Definition(mod *Module, o Options) (*cozyv1alpha1.ApplicationDefinition, error) {
	abs, err := filepath.Abs(mod.Dir)
	if err != nil {
		return nil, err
	}
	name := o.Name
	if name == "" {
		name = defout.DNSName(filepath.Base(abs))
	}
	name, kind, singular, plural, err := defout.Names(name, o.Kind, o.Plural, func(s string) string { return typegen.Identifier(s, "Module") })
	if err != nil {
		return nil, err
	}
	props := map[string]any{}
	var required []any
	for _, v := range mod.Variables {
		props[v.Name] = v.Schema
		if v.Required {
			required = append(required, v.Name)
		}
	}
	root := map[string]any{
		"type":        "object",
		"title":       kind,
		"description": fmt.Sprintf("Inputs of the Terraform module %s: each key is a Terraform variable.", filepath.ToSlash(filepath.Clean(mod.Dir))),
		"properties":  props,
	}
	if len(props) == 0 {
		// A module without variables: an empty, closed spec.
		root["properties"] = map[string]any{}
	}
	if len(required) > 0 {
		root["required"] = required
	}
	text, err := defout.SchemaJSON(root)
	if err != nil {
		return nil, err
	}

	path := o.Path
	if path == "" {
		path = filepath.ToSlash(filepath.Clean(mod.Dir))
		if !filepath.IsAbs(mod.Dir) && !strings.HasPrefix(path, ".") {
			path = "./" + path
		}
	}
	prefix, srcName := cmp.Or(o.Prefix, name+"-"), cmp.Or(o.SourceName, name)
	tb := &cozyv1alpha1.TerraformBackend{
		SourceRef:                  cozyv1alpha1.TerraformSourceReference{Kind: o.SourceKind, Name: srcName, Namespace: o.SourceNamespace},
		Path:                       path,
		Prefix:                     prefix,
		ApprovePlan:                o.ApprovePlan,
		DestroyResourcesOnDeletion: o.Destroy,
	}
	if tb.SourceRef.Kind == "" {
		tb.SourceRef.Kind = "GitRepository"
	}
	def := defout.New(name)
	def.Spec.Application = cozyv1alpha1.ApplicationDefinitionApplication{Kind: kind, Singular: singular, Plural: plural, OpenAPISchema: text}
	def.Spec.Backend = &cozyv1alpha1.ApplicationBackend{Type: cozyv1alpha1.BackendTerraform, Terraform: tb}
	if len(mod.Outputs) > 0 {
		w := &tfv1alpha2.WriteOutputsToSecretSpec{Name: OutputsSecretName}
		var sensitive []string
		for _, out := range mod.Outputs {
			w.Outputs = append(w.Outputs, out.Name)
			if out.Sensitive {
				sensitive = append(sensitive, out.Name)
			}
		}
		if len(sensitive) > 0 {
			w.Annotations = map[string]string{AnnotationSensitiveOutputs: strings.Join(sensitive, ",")}
		}
		tb.WriteOutputsToSecret = w
		def.Spec.Secrets.Include = []*cozyv1alpha1.ApplicationDefinitionResourceSelector{{ResourceNames: []string{OutputsSecretName}}}
	}

	if _, err := schema.Build(def); err != nil {
		return nil, placeSchemaError(mod, err)
	}
	return def, nil
}

// placeSchemaError names the variable a pkg/schema error is about, at its
// declaration.
func placeSchemaError(mod *Module, err error) error {
	var se *schema.Error
	if !errors.As(err, &se) {
		return err
	}
	segs := source.SplitPath(se.Field)
	if len(segs) >= 2 && segs[0] == "properties" {
		for _, v := range mod.Variables {
			if v.Name == segs[1] {
				return &source.Error{File: v.File, Line: v.Line, Field: "variable " + v.Name + " (" + se.Field + ")", Message: se.Message}
			}
		}
	}
	file := mod.Dir
	if len(mod.Files) > 0 {
		file = mod.Files[0]
	}
	return &source.Error{File: file, Field: se.Field, Message: se.Message}
}
