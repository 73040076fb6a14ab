// Package kindruntime is what every package `gen types` writes calls instead
// of carrying its own copy: the conversion to and from unstructured objects
// (ToUnstructured, FromUnstructured), scheme registration
// (NewSchemeBuilder), the registry's Object and Kind types, the JSON of
// objects that keep keys their schema does not name (MarshalWithExtra,
// UnmarshalWithExtra), and a field-by-field comparison of generated values
// (Equal, Diff). Generated
// packages keep only what differs per kind: the types, their deep copies and
// their names. How a spec becomes Terraform variables or Helm values is
// decided by api/encoding.
package kindruntime
