// Package defout renders the ApplicationDefinitions that gen from-terraform
// and gen from-helm print, and checks them with pkg/schema first.
package defout

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/gen/internal/source"
)

// New returns an empty definition with its type and name set.
func New(name string) *cozyv1alpha1.ApplicationDefinition {
	return &cozyv1alpha1.ApplicationDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: cozyv1alpha1.GroupVersion.String(), Kind: "ApplicationDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
	}
}

// Render writes the definition as YAML, in the order of its Go fields,
// without empty fields, with openAPISchema as a literal block, and with the
// header as a leading comment.
func Render(def *cozyv1alpha1.ApplicationDefinition, header string) ([]byte, error) {
	j, err := json.Marshal(def)
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(j, &doc); err != nil {
		return nil, err
	}
	root := doc.Content[0]
	// apiVersion first, as people write it.
	for i := 2; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "apiVersion" {
			k, v := root.Content[i], root.Content[i+1]
			copy(root.Content[2:i+2], root.Content[0:i])
			root.Content[0], root.Content[1] = k, v
			break
		}
	}
	prune(root)
	plainStyle(root)
	if n := source.Path(root, "spec", "application", "openAPISchema"); n != nil {
		n.Style = yaml.LiteralStyle
	}
	root.HeadComment = header
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// prune removes null values and empty mappings (status: {}, secrets: {}).
func prune(n *yaml.Node) bool {
	switch n.Kind {
	case yaml.MappingNode:
		var keep []*yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if prune(n.Content[i+1]) {
				continue
			}
			keep = append(keep, n.Content[i], n.Content[i+1])
		}
		n.Content = keep
		return len(keep) == 0
	case yaml.SequenceNode:
		for _, c := range n.Content {
			prune(c)
		}
		return false
	case yaml.ScalarNode:
		return n.Tag == "!!null"
	}
	return false
}

// plainStyle drops the JSON quoting the nodes were read with, so strings
// are quoted only where YAML needs it.
func plainStyle(n *yaml.Node) {
	n.Style &^= yaml.DoubleQuotedStyle | yaml.FlowStyle
	for _, c := range n.Content {
		plainStyle(c)
	}
}

// SchemaJSON renders a schema as indented JSON (keys sorted).
func SchemaJSON(s map[string]any) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		return "", err
	}
	return b.String(), nil
}

// DNSName turns a folder or chart name into a DNS-1123 name.
func DNSName(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			b.WriteRune(r)
		default:
			b.WriteRune('-')
		}
	}
	out := strings.Trim(b.String(), "-")
	for strings.Contains(out, "--") {
		out = strings.ReplaceAll(out, "--", "-")
	}
	return out
}

// Plural is a simple English plural of a lower-case name.
func Plural(s string) string {
	switch {
	case s == "":
		return s
	case strings.HasSuffix(s, "s") || strings.HasSuffix(s, "x") || strings.HasSuffix(s, "z") ||
		strings.HasSuffix(s, "ch") || strings.HasSuffix(s, "sh"):
		return s + "es"
	case strings.HasSuffix(s, "y") && len(s) > 1 && !strings.ContainsRune("aeiou", rune(s[len(s)-2])):
		return s[:len(s)-1] + "ies"
	}
	return s + "s"
}

// Names fills in a definition's names from the defaults: the kind from
// the name, the singular and plural from the kind.
func Names(name, kind, plural string, camel func(string) string) (string, string, string, string, error) {
	if name == "" {
		return "", "", "", "", fmt.Errorf("cannot derive a definition name: pass --name")
	}
	if kind == "" {
		kind = camel(name)
	}
	singular := strings.ToLower(kind)
	if plural == "" {
		plural = Plural(singular)
	}
	return name, kind, singular, plural, nil
}
