package schema

import (
	"errors"
	"testing"
)

// FuzzBuildCRD feeds random schemas (and backends, kinds and prefixes) to
// Build: it must never panic, every error must be an *Error with a reason,
// and a success must be repeatable. `go test` runs the seeds below;
// `go test -fuzz FuzzBuildCRD ./schema` searches further.
func FuzzBuildCRD(f *testing.F) {
	for _, s := range []string{
		``,
		`{}`,
		`{"type":"object"}`,
		postgresSchema,
		`{"type":"object","additionalProperties":true}`,
		`{"type":"object","additionalProperties":{"type":"string"}}`,
		`{"type":"object","properties":{"a":{"anyOf":[{"type":"integer"},{"type":"string"}]}}}`,
		`{"type":"object","properties":{"a":{"anyOf":[{"type":"string"},{"type":"null"}]}}}`,
		`{"type":"object","properties":{"a":{"$ref":"#/definitions/x"}},"definitions":{"x":{"type":"string"}}}`,
		`{"type":"object","properties":{"a":{"$ref":"#"}}}`,
		`{"type":"object","properties":{"a":{"type":["string","null","integer"]}}}`,
		`{"type":"object","properties":{"a":{"type":"array","uniqueItems":true,"items":{"type":"string"}}}}`,
		`{"type":"object","properties":{"a":{"not":{"anyOf":[{"required":["b"]}]}}}}`,
		`{"type":"object","properties":{"a":{"allOf":[{"anyOf":[{"type":"integer"},{"type":"string"}]}],"x-kubernetes-int-or-string":true}}}`,
		`{"type":"object","properties":{"a":{"type":"integer","default":null,"enum":[null]}}}`,
		`{"type":"object","properties":{"metadata":{"type":"object"},"_x":{}}}`,
		`{"type":"object","x-kubernetes-validations":[{"rule":"self.size() > 0"}]}`,
		`{"type":"object","properties":{"a":{"type":"object","x-kubernetes-embedded-resource":true}}}`,
		`{"type":"object","properties":{"a":{"items":true,"additionalProperties":false}}}`,
		`[1,2]`,
		`{"type":`,
		`"x"`,
		`{"properties":{"a":{"properties":{"b":{"items":{"items":{"default":[]}}}}}}}`,
		`{"type":"object","properties":{"a":{"type":"object","default":{},"required":["b"],"properties":{"b":{"type":"object","default":{},"required":["c"],"properties":{"c":{"type":"integer","default":1}}}}}}}`,
		`{"type":"object","properties":{"a":{"type":"array","default":[{}],"items":{"type":"object","required":["c"],"properties":{"c":{"type":"string"}}}}}}`,
	} {
		f.Add(s, uint8(0), "Fuzz", "")
		f.Add(s, uint8(1), "Tenant", "tenant-")
	}
	f.Fuzz(func(t *testing.T, schema string, backend uint8, kind, prefix string) {
		var def = helmDef("fuzz", kind, "fuzzes", prefix, schema)
		switch backend % 3 {
		case 1:
			def = terraformDef("fuzz", kind, "fuzzes", prefix, schema)
		case 2:
			def = legacyDef("fuzz", kind, "fuzzes", prefix, schema)
		}
		o, err := Build(def)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Reason == "" || e.Message == "" {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			return
		}
		if o.CRD == nil || (o.Policy == nil) != (o.Binding == nil) {
			t.Fatalf("incomplete objects %+v", o)
		}
		again, err := Build(def)
		if err != nil {
			t.Fatalf("second build failed: %v", err)
		}
		if again.CRD.Name != o.CRD.Name || len(again.CRD.Spec.Versions) != 1 {
			t.Fatalf("not repeatable")
		}
	})
}
