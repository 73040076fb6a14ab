package schema

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
)

// Error is a problem with a definition that only a change to the definition
// can fix. Reason is the ApplicationDefinition condition reason to report
// (cozyv1alpha1.ReasonInvalidJSON, ReasonInvalidSchema,
// ReasonInvalidVariableName, ReasonReservedField); Field names the first
// offending field, e.g. openAPISchema.properties[size].default, and Message
// says what is wrong with every offending field.
type Error struct {
	Reason  string
	Field   string
	Message string
}

func (e *Error) Error() string { return e.Message }

// StalledReason makes an *Error a reconcileerr.Reasoned error: a
// reconciler's reconcileerr.AsStalled reports it with Reason, unretried.
func (e *Error) StalledReason() string { return e.Reason }

func newError(reason, fld, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	if fld != "" {
		msg = fld + ": " + msg
	}
	return &Error{Reason: reason, Field: fld, Message: msg}
}

// specPath is where the definition's schema sits in a CRD, and schemaRoot is
// how errors name it for the definition's author.
var (
	// The internal CRD type validates one schema for all versions at
	// spec.validation; the v1 type holds it per version.
	specPaths = []string{
		"spec.validation.openAPIV3Schema.properties[spec]",
		"spec.versions[0].schema.openAPIV3Schema.properties[spec]",
		"openAPIV3Schema.properties[spec]", // the standalone structural check
	}
	rootPaths = []string{
		"spec.validation.openAPIV3Schema",
		"spec.versions[0].schema.openAPIV3Schema",
	}
)

const schemaRoot = "openAPISchema"

// userPath rewrites a path inside a generated CRD (or inside the wrapper
// used by the structural check) into a path the definition's author can
// find: openAPISchema.<...> for the spec schema, instance.<...> for what we
// add around it, unchanged otherwise.
func userPath(p string) string {
	// Value validation writes an index inside a default as ".[0]".
	p = strings.ReplaceAll(p, ".[", "[")
	for _, prefix := range specPaths {
		if p == prefix {
			return schemaRoot
		}
		if strings.HasPrefix(p, prefix+".") || strings.HasPrefix(p, prefix+"[") {
			return schemaRoot + p[len(prefix):]
		}
	}
	for _, prefix := range rootPaths {
		if strings.HasPrefix(p, prefix) {
			return "instance schema" + p[len(prefix):]
		}
	}
	return p
}

// maxListed bounds how many field errors one message lists.
const maxListed = 8

// fromFieldErrors turns API server validation errors into one *Error with
// paths rewritten for the definition's author, sorted so the message is
// deterministic.
func fromFieldErrors(reason, context string, errs field.ErrorList) *Error {
	if len(errs) == 0 {
		return nil
	}
	type item struct{ path, text string }
	items := make([]item, 0, len(errs))
	seen := map[string]bool{}
	for _, e := range errs {
		p := userPath(e.Field)
		text := describe(e)
		if p != "" {
			text = p + ": " + text
		}
		if seen[text] {
			continue
		}
		seen[text] = true
		items = append(items, item{p, text})
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].text < items[j].text })
	var b strings.Builder
	b.WriteString(context)
	b.WriteString(": ")
	for i, it := range items {
		if i == maxListed {
			fmt.Fprintf(&b, "; and %d more", len(items)-maxListed)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(it.text)
	}
	return &Error{Reason: reason, Field: items[0].path, Message: b.String()}
}

// describe renders a field error without its path (userPath renders that)
// and without dumping whole schema values, which can be huge.
func describe(e *field.Error) string {
	switch e.Type {
	case field.ErrorTypeRequired, field.ErrorTypeForbidden, field.ErrorTypeTooMany, field.ErrorTypeInternal:
		if e.Detail == "" {
			return e.Type.String()
		}
		return e.Type.String() + ": " + e.Detail
	}
	v := fmt.Sprintf("%v", e.BadValue)
	if len(v) > 80 || strings.HasPrefix(v, "{") || strings.HasPrefix(v, "&") || strings.HasPrefix(v, "map[") {
		if e.Detail == "" {
			return e.Type.String()
		}
		return e.Type.String() + ": " + e.Detail
	}
	if e.Detail == "" {
		return fmt.Sprintf("%s: %q", e.Type.String(), v)
	}
	return fmt.Sprintf("%s %q: %s", e.Type.String(), v, e.Detail)
}

// reasons, re-exported for readability below.
const (
	reasonInvalidJSON         = cozyv1alpha1.ReasonInvalidJSON
	reasonInvalidSchema       = cozyv1alpha1.ReasonInvalidSchema
	reasonInvalidVariableName = cozyv1alpha1.ReasonInvalidVariableName
	reasonReservedField       = cozyv1alpha1.ReasonReservedField
)
