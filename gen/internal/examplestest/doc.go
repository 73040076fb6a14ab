// Package examplestest holds the tests of the generated example packages
// (gen/examples, gen/testkinds) against the example instances and, in
// apiserver_test.go, against a real API server serving the CRDs pkg/schema
// builds from the same definitions. It has no non-test code.
package examplestest
