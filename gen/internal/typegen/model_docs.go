package typegen

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	"github.com/cozyplane/cozyplane/gen/internal/source"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// PackageName is the Go package of a kind: its lower-cased name, with
// characters a package name cannot hold removed.
func PackageName(kind string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(kind) {
		if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			b.WriteRune(r)
		}
	}
	s := b.String()
	if s == "" || unicode.IsDigit(rune(s[0])) {
		s = "kind" + s
	}
	if goKeywords[s] {
		s += "kind"
	}
	return s
}

var goKeywords = map[string]bool{
	"break": true, "case": true, "chan": true, "const": true, "continue": true, "default": true, "defer": true,
	"else": true, "fallthrough": true, "for": true, "func": true, "go": true, "goto": true, "if": true,
	"import": true, "interface": true, "map": true, "package": true, "range": true, "return": true,
	"select": true, "struct": true, "switch": true, "type": true, "var": true,
}

// specPath renders a schema field path as a path in the instance:
// openAPISchema.properties[a].additionalProperties.items → spec.a[*][*].
func specPath(fld string) string {
	var b strings.Builder
	b.WriteString("spec")
	prev := ""
	for _, seg := range source.SplitPath(fld) {
		switch {
		case prev == "properties":
			b.WriteString("." + seg)
		case seg == "additionalProperties" || seg == "items":
			b.WriteString("[*]")
		}
		prev = seg
	}
	return b.String()
}

// fieldDoc is a field's doc comment: its description, then its default and
// constraints as the API server enforces them.
func fieldDoc(s *apiextensionsv1.JSONSchemaProps, required bool) []string {
	var doc []string
	if s.Title != "" && s.Description == "" {
		doc = append(doc, docLines(s.Title)...)
	}
	doc = append(doc, docLines(s.Description)...)
	var facts []string
	if s.Default != nil {
		facts = append(facts, "Default: "+compactJSON(s.Default.Raw)+".")
	}
	if len(s.Enum) > 0 {
		vals := make([]string, 0, len(s.Enum))
		for _, e := range s.Enum {
			vals = append(vals, compactJSON(e.Raw))
		}
		facts = append(facts, "One of: "+strings.Join(vals, ", ")+".")
	}
	num := func(label string, v *float64, exclusive bool) {
		if v == nil {
			return
		}
		if exclusive {
			label += " (exclusive)"
		}
		facts = append(facts, fmt.Sprintf("%s: %v.", label, *v))
	}
	num("Minimum", s.Minimum, s.ExclusiveMinimum)
	num("Maximum", s.Maximum, s.ExclusiveMaximum)
	num("Multiple of", s.MultipleOf, false)
	count := func(label string, v *int64) {
		if v != nil {
			facts = append(facts, fmt.Sprintf("%s: %d.", label, *v))
		}
	}
	count("Minimum length", s.MinLength)
	count("Maximum length", s.MaxLength)
	count("Minimum items", s.MinItems)
	count("Maximum items", s.MaxItems)
	count("Minimum properties", s.MinProperties)
	count("Maximum properties", s.MaxProperties)
	if s.Pattern != "" {
		facts = append(facts, "Pattern: "+s.Pattern)
	}
	if s.Format != "" {
		facts = append(facts, "Format: "+s.Format+".")
	}
	if s.Nullable {
		facts = append(facts, "May be null.")
	}
	if len(facts) > 0 {
		if len(doc) > 0 {
			doc = append(doc, "")
		}
		doc = append(doc, facts...)
	}
	if len(doc) > 0 {
		doc = append(doc, "")
	}
	if required {
		doc = append(doc, "+required")
	} else {
		doc = append(doc, "+optional")
	}
	return doc
}

func compactJSON(raw []byte) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return string(raw)
	}
	return string(b)
}

// docLines splits text into comment lines, without characters a line
// comment cannot hold and without anything the Go tool would read as a
// directive.
func docLines(text string) []string {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil
	}
	var out []string
	for _, l := range strings.Split(text, "\n") {
		l = strings.Map(func(r rune) rune {
			if r == '\t' {
				return ' '
			}
			if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || r == '\ufeff' {
				return -1
			}
			return r
		}, l)
		l = strings.TrimRight(l, " ")
		out = append(out, l)
	}
	return out
}

// initialisms are written in capitals in Go names.
var initialisms = map[string]string{
	"id": "ID", "url": "URL", "uri": "URI", "cidr": "CIDR", "dns": "DNS", "ip": "IP", "http": "HTTP",
	"https": "HTTPS", "api": "API", "cpu": "CPU", "tls": "TLS", "ssl": "SSL", "json": "JSON", "yaml": "YAML",
	"uid": "UID", "uuid": "UUID", "ttl": "TTL", "vpc": "VPC", "ssh": "SSH", "sql": "SQL", "az": "AZ",
	"acl": "ACL", "arn": "ARN", "ttls": "TTLs", "ips": "IPs", "ids": "IDs", "urls": "URLs",
}

// Identifier turns a JSON name into an exported Go identifier:
// max_connections → MaxConnections, endpointURL → EndpointURL, v15 → V15.
// fallback is used when nothing of the name is left.
func Identifier(s, fallback string) string {
	var parts []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			parts = append(parts, string(cur))
			cur = nil
		}
	}
	for _, r := range s {
		if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			cur = append(cur, r)
			continue
		}
		flush()
	}
	flush()
	var b strings.Builder
	for _, p := range parts {
		if up, ok := initialisms[strings.ToLower(p)]; ok && (p == strings.ToLower(p)) {
			b.WriteString(up)
			continue
		}
		b.WriteString(strings.ToUpper(p[:1]) + p[1:])
	}
	out := b.String()
	if out == "" {
		return fallback
	}
	if unicode.IsDigit(rune(out[0])) {
		out = "X" + out
	}
	return out
}
