// Package testenv starts one real API server (etcd + kube-apiserver through
// controller-runtime's envtest) per test package, from the binaries that
// hack/tools.sh builds into .cache/bin. Tests that need it fail, rather than
// skip, when the binaries are missing: run `make tools` (or `make test`).
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"
)

// Assets returns the folder holding etcd and kube-apiserver:
// $KUBEBUILDER_ASSETS, or the repository's .cache/bin.
func Assets() (string, error) {
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		dir = filepath.Join(RepoRoot(), ".cache", "bin")
	}
	for _, b := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			return "", fmt.Errorf("%s not found in %s: run `make tools` first (or set KUBEBUILDER_ASSETS)", b, dir)
		}
	}
	return dir, nil
}

// Env is a running API server.
type Env struct {
	env    *envtest.Environment
	Config *rest.Config
}

// Start starts etcd (data on tmpfs when available) and kube-apiserver with
// the given CRDs installed.
func Start(crds ...*apiextensionsv1.CustomResourceDefinition) (*Env, error) {
	assets, err := Assets()
	if err != nil {
		return nil, err
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDs:                  crds,
		ErrorIfCRDPathMissing: true,
	}
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		dataDir, err := os.MkdirTemp("/dev/shm", "cozyplane-envtest-")
		if err == nil {
			env.ControlPlane.Etcd = &envtest.Etcd{DataDir: dataDir}
		}
	}
	cfg, err := env.Start()
	if err != nil {
		// Start may fail after etcd and kube-apiserver are up (installing
		// CRDs, say): stop them rather than leave them running.
		_ = env.Stop()
		return nil, fmt.Errorf("starting the test API server: %w", err)
	}
	return &Env{env: env, Config: cfg}, nil
}

// Stop stops the API server and etcd and removes etcd's data.
func (e *Env) Stop() error {
	var dataDir string
	if e.env.ControlPlane.Etcd != nil {
		dataDir = e.env.ControlPlane.Etcd.DataDir
	}
	err := e.env.Stop()
	if dataDir != "" {
		_ = os.RemoveAll(dataDir)
	}
	return err
}

// Kubeconfig returns a kubeconfig for an administrator (system:masters) of
// the test API server, for running a controller binary against it.
func (e *Env) Kubeconfig() ([]byte, error) {
	u, err := e.env.AddUser(envtest.User{Name: "test-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return nil, err
	}
	return u.KubeConfig()
}

// NamespacedCRD is a namespaced custom resource definition of names in
// group (named names.Plural.group), served and stored at version. A nil
// schema serves any object, its unknown fields kept; withStatus adds the
// status subresource.
func NamespacedCRD(group, version string, names apiextensionsv1.CustomResourceDefinitionNames,
	schema *apiextensionsv1.JSONSchemaProps, withStatus bool) *apiextensionsv1.CustomResourceDefinition {
	if schema == nil {
		preserve := true
		schema = &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: &preserve}
	}
	v := apiextensionsv1.CustomResourceDefinitionVersion{Name: version, Served: true, Storage: true,
		Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: schema}}
	if withStatus {
		v.Subresources = &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}}
	}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: names.Plural + "." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{Group: group, Names: names, Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{v}},
	}
}

// CRDFromFile reads a CustomResourceDefinition manifest, relative to the
// repository root (e.g. "api/crds/cozystack.io_applicationdefinitions.yaml"
// or ".cache/crds/helm.toolkit.fluxcd.io_helmreleases.yaml"), or absolute.
func CRDFromFile(rel string) (*apiextensionsv1.CustomResourceDefinition, error) {
	path := rel
	if !filepath.IsAbs(path) {
		path = filepath.Join(RepoRoot(), rel)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading CRD %s (run `make tools` for the third-party ones): %w", rel, err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(b, crd); err != nil {
		return nil, fmt.Errorf("parsing CRD %s: %w", rel, err)
	}
	return crd, nil
}

// RepoRoot is the repository's root folder.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// ModuleFile is the path of a file inside a module the calling module
// requires, as the Go module cache holds it (e.g. a third-party CRD shipped
// in the module: ModuleFile("sigs.k8s.io/gateway-api", "config", "crd", ...)).
func ModuleFile(module string, elem ...string) (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", module).Output()
	if err != nil {
		return "", fmt.Errorf("locating module %s: %w", module, err)
	}
	return filepath.Join(append([]string{strings.TrimSpace(string(out))}, elem...)...), nil
}

// GatewayAPICRDs reads the Gateway API standard-channel CRDs of the given
// resources ("gateways", "httproutes", ...) at the version the calling
// module requires.
func GatewayAPICRDs(resources ...string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	return moduleCRDs("sigs.k8s.io/gateway-api", []string{"config", "crd", "standard"}, "gateway.networking.k8s.io_", resources)
}

// CertManagerCRDs reads the cert-manager CRDs of the given resources
// ("issuers", "certificates", ...) at the version the calling module
// requires.
func CertManagerCRDs(resources ...string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	return moduleCRDs("github.com/cert-manager/cert-manager", []string{"deploy", "crds"}, "cert-manager.io_", resources)
}

func moduleCRDs(module string, dir []string, prefix string, resources []string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, r := range resources {
		path, err := ModuleFile(module, append(dir, prefix+r+".yaml")...)
		if err != nil {
			return nil, err
		}
		crd, err := CRDFromFile(path)
		if err != nil {
			return nil, err
		}
		crds = append(crds, crd)
	}
	return crds, nil
}
