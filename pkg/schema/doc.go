// Package schema turns an ApplicationDefinition into the objects that serve
// its kind: the CustomResourceDefinition of apps.cozystack.io/<plural>, and,
// when the kind's spec is free-form, a ValidatingAdmissionPolicy that checks
// its top-level keys. It is the one place that does so: the appdef controller
// serves what it builds, and the generator (gen/) builds typed Go from the
// same parsed schema, so the two can never disagree.
//
// Everything here is pure (no client, no clock) and deterministic: the same
// definition always gives byte-identical objects.
//
// # From openAPISchema to a structural schema
//
// ParseOpenAPISchema reads application.openAPISchema (a JSON string, as
// upstream Cozystack writes it) and makes it a structural schema the API
// server accepts. What it changes, and why:
//
//   - additionalProperties: true becomes x-kubernetes-preserve-unknown-fields:
//     true (a free-form object); additionalProperties: false is dropped, as
//     Kubernetes objects are closed by default; additionalProperties: {schema}
//     is kept (a map). An object with both properties and an
//     additionalProperties schema keeps its properties and preserves the other
//     keys unvalidated: the API server cannot express both.
//   - type: object with neither properties nor additionalProperties is
//     free-form (x-kubernetes-preserve-unknown-fields), as JSON Schema means
//     it; Kubernetes would otherwise prune every key. A schema with no type
//     and nothing to infer one from (properties → object, items → array) is
//     "any value" and is marked x-kubernetes-preserve-unknown-fields too. An
//     empty openAPISchema is a free-form spec.
//   - anyOf or oneOf of {type: integer} and {type: string}, in either order,
//     or type: [integer, string], becomes the canonical
//     anyOf [{type: integer}, {type: string}] with x-kubernetes-int-or-string
//     (resource quantities); x-kubernetes-int-or-string alone gets the anyOf.
//   - anyOf or oneOf of a schema and {type: "null"}, and type: [X, "null"],
//     become that schema with nullable: true.
//   - const becomes a one-value enum; uniqueItems: true (forbidden in CRDs)
//     becomes x-kubernetes-list-type: set for lists of scalars and is dropped
//     otherwise.
//   - local $ref (#/definitions/..., #/$defs/...) are inlined; recursive or
//     remote references are errors.
//   - kept, so kubectl explain shows them and the API server applies them:
//     description, title, default, example, enum, format, every value
//     validation, nullable, and the x-kubernetes-* extensions CRDs support
//     (preserve-unknown-fields, int-or-string, embedded-resource, list-type,
//     list-map-keys, map-type, validations).
//   - dropped deliberately: every other x- extension (x-cozystack-options and
//     other UI hints: dashboards read them from the definition itself, and a
//     CRD schema has no room for them), and annotations CRDs do not support
//     ($schema, $id, id, $comment, examples, readOnly, writeOnly, deprecated,
//     contentEncoding, contentMediaType, definitions, $defs after inlining),
//     and keywords this package does not know (an upstream definition that
//     worked before must keep working).
//   - refused, with an error naming the field: keywords that constrain values
//     in a way a CRD cannot enforce (patternProperties, dependencies,
//     dependentRequired, dependentSchemas, propertyNames, if/then/else,
//     unevaluatedProperties, unevaluatedItems, prefixItems, contains,
//     additionalItems, tuple items) — silently not enforcing a constraint the
//     author wrote would be worse.
//
// Where each change is decided: which keywords are kept, dropped or refused,
// keywords.go (keptKeywords, droppedKeywords, refusedKeywords,
// checkKeywordType) and the type lists, keywords.go normaliseType; the walk
// over every node, normalize.go normalizer.schema (node, keywords, draft6,
// children); what a stored field adds over a value validation (nullable and
// int-or-string unions, uniqueItems, free-form objects, inferred types) and
// what the root adds (an object), normalize_levels.go finish, finishField,
// finishRoot, inferType; $ref, ref.go normalizer.inlineRef.
//
// The result then goes through the API server's own structural-schema
// checks (NewStructural, ValidateStructural; parse.go checkStructural).
// Then every object or array default is stored expanded (expandDefaults):
// as written, with the defaults of its members applied, recursively, by the
// API server's own defaulting algorithm. Definitions written for upstream Cozystack say "default": {}
// next to "required" members that carry their own defaults; upstream (and the
// API server, when it defaults an instance) fills the members in, but the API
// server checks a CRD's defaults as written and would refuse {}. Expanded,
// the default is valid and every instance is stored exactly as before. A
// default that still misses a required member, or holds a value of the wrong
// type or outside its enum, is refused by the CRD validation below, naming
// the field (openAPISchema.properties[backup].default.bucket).
//
// BuildCRD runs the whole CRD validation (defaults, CEL compilation and
// cost, names, printer columns).
// Every failure is an *Error whose Reason is the ApplicationDefinition
// condition reason and whose message names the field, e.g.
// openAPISchema.properties[size].default.
//
// # Rules on instances
//
// BuildCRD adds CEL rules (x-kubernetes-validations) that the API server
// enforces on every write of an instance:
//
//   - metadata.name is a DNS-1035 label (it names Services and Helm releases);
//   - Helm kinds: len(prefix) + len(metadata.name) <= 53, Helm's release name
//     limit, with a message naming the prefix and the resulting limit;
//   - the Tenant kind: metadata.name matches ^[a-z][a-z0-9]*$ as upstream;
//   - top-level spec keys starting with "_" are reserved; Terraform kinds'
//     top-level keys must be HCL identifiers ^[a-z_][a-z0-9_]*$ (each becomes
//     a Terraform variable; the pattern is api/encoding's
//     HCLIdentifierPattern, which the backends and the generator use too).
//
// The key rules are checked when the definition is read if the schema names
// such a key in its properties (ReasonReservedField, ReasonInvalidVariableName).
// When the spec is free-form the keys are only known on write: a map whose
// values CEL can see gets x-kubernetes-validations on spec; a spec that
// preserves unknown fields cannot be inspected by CRD validation rules (the
// API server hides preserved fields from CEL), so Build returns a
// ValidatingAdmissionPolicy and its binding with the same rules instead
// (admission policies see the whole object).
package schema
