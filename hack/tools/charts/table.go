package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// row is one line of a values table.
type row struct {
	key, typ, def, desc string
}

// valuesTable renders the Markdown table of the values in doc. A mapping
// whose key carries a comment is one row (its default shown whole); a mapping
// without one is a group whose keys are rows of their own. The description
// is the key's comment, else the schema's description; the type and the
// allowed values come from the schema.
func valuesTable(doc *yaml.Node, schema map[string]any) (string, error) {
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return "", fmt.Errorf("the top level is not a mapping")
	}
	var rows []row
	var missing []string
	var walk func(m *yaml.Node, prefix string, schema map[string]any)
	walk = func(m *yaml.Node, prefix string, sch map[string]any) {
		for i := 0; i+1 < len(m.Content); i += 2 {
			k, v := m.Content[i], m.Content[i+1]
			key := k.Value
			if prefix != "" {
				key = prefix + "." + k.Value
			}
			sub := property(sch, k.Value)
			desc := comment(k)
			if desc == "" && v.Kind == yaml.MappingNode && len(v.Content) > 0 {
				walk(v, key, sub)
				continue
			}
			if desc == "" {
				desc, _ = sub["description"].(string)
			}
			if desc == "" {
				missing = append(missing, key)
			}
			if enum := enumOf(sub); enum != "" {
				desc = strings.TrimRight(desc, ".") + ". One of " + enum + "."
			}
			def, err := defaultOf(v)
			if err != nil {
				missing = append(missing, key+" ("+err.Error()+")")
			}
			rows = append(rows, row{key: key, typ: typeOf(sub, v), def: def, desc: desc})
		}
	}
	walk(doc.Content[0], "", schema)
	if len(missing) > 0 {
		return "", fmt.Errorf("describe these keys with a comment above them: %s", strings.Join(missing, ", "))
	}
	var b strings.Builder
	b.WriteString("| Key | Type | Default | Description |\n|-----|------|---------|-------------|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", r.key, r.typ, r.def, escape(r.desc))
	}
	return b.String(), nil
}

func property(schema map[string]any, key string) map[string]any {
	props, _ := schema["properties"].(map[string]any)
	p, _ := props[key].(map[string]any)
	if p == nil {
		return map[string]any{}
	}
	return p
}

// comment is the key's head comment without the leading '#', lines joined.
func comment(k *yaml.Node) string {
	var parts []string
	for _, l := range strings.Split(k.HeadComment, "\n") {
		l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "#"))
		if l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, " ")
}

func typeOf(sch map[string]any, v *yaml.Node) string {
	var types []string
	add := func(s map[string]any) {
		switch t := s["type"].(type) {
		case string:
			types = append(types, t)
		case []any:
			for _, x := range t {
				types = append(types, fmt.Sprint(x))
			}
		}
	}
	add(sch)
	for _, k := range []string{"anyOf", "oneOf"} {
		if alts, ok := sch[k].([]any); ok {
			for _, a := range alts {
				if m, ok := a.(map[string]any); ok {
					add(m)
				}
			}
		}
	}
	if len(types) == 0 {
		switch v.Kind {
		case yaml.MappingNode:
			types = []string{"object"}
		case yaml.SequenceNode:
			types = []string{"array"}
		default:
			types = []string{strings.TrimPrefix(v.Tag, "!!")}
		}
	}
	seen := map[string]bool{}
	var out []string
	for _, t := range types {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return strings.Join(out, " or ")
}

func enumOf(sch map[string]any) string {
	var vals []string
	collect := func(s map[string]any) {
		if e, ok := s["enum"].([]any); ok {
			for _, x := range e {
				vals = append(vals, fmt.Sprintf("`%v`", x))
			}
		}
	}
	collect(sch)
	if items, ok := sch["items"].(map[string]any); ok {
		collect(items)
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if alts, ok := sch[k].([]any); ok {
			for _, a := range alts {
				if m, ok := a.(map[string]any); ok {
					collect(m)
				}
			}
		}
	}
	sort.Strings(vals)
	return strings.Join(vals, ", ")
}

// defaultOf is the value as compact JSON in backticks.
func defaultOf(v *yaml.Node) (string, error) {
	var x any
	if err := v.Decode(&x); err != nil {
		return "", err
	}
	b, err := json.Marshal(x)
	if err != nil {
		return "", err
	}
	return "`" + string(b) + "`", nil
}

func escape(s string) string {
	return strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;").Replace(s)
}
