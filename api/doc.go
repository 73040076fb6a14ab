// Package api is the root of the API module: the CRD Go types live in its
// subpackages (cozystack, gateway, apps, tofu) and the CRDs generated from
// them in crds/.
package api
