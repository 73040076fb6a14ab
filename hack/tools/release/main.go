// Command release builds everything a release of cozyplane ships, without a
// container engine and without a network beyond the Go module proxy
// (`make release`; docs/install.md, Installing a release):
//
//   - per controller, an OCI image archive images/<name>-<version>.oci.tar
//     holding an image index with one image per architecture (linux amd64
//     and arm64): a static binary (CGO_ENABLED=0) at /manager, run as the
//     non-root user 65532, over a small base layer (passwd and group entries,
//     the build machine's CA bundle); no base image is pulled;
//   - every chart packaged at the release's version, charts/<chart>-<version>.tgz:
//     each controller chart's appVersion is the images' tag and its
//     image.digest the index's digest, so the Deployment names exactly the
//     image of the archive (checked by rendering the package); the umbrella
//     chart bundles these packages;
//   - the CLI for linux and darwin on amd64 and arm64,
//     cli/cozyplane-<version>-<os>-<arch>.tar.gz, its version stamped
//     (`cozyplane version`);
//   - images.txt (each image's reference and digest) and SHA256SUMS over every
//     file, for `sha256sum -c`.
//
// Usage (from the repository root; the Makefile passes these):
//
//	go run ./hack/tools/release -root . -out .cache/release [-version 1.2.3]
//
// With -charts-only -images FILE it packages only the charts, by the same
// code, with the image references of FILE (images.txt's format: one
// <repository>:<version>@<digest> a line, one per controller) instead of
// images it builds: the e2e scenario tests/chainsaw/cli/check-install
// installs the packages of a release without building its images.
//
// The version is -version, else the tag vX.Y.Z naming HEAD, else the umbrella
// chart's appVersion with -dev.g<commit> (and .dirty for a modified tree).
// Output goes to <out>/<version>/, emptied first; Go's build cache makes a
// second run quick.
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"
)

// archs are the architectures of the controllers' images.
var archs = []string{"amd64", "arm64"}

// cliPlatforms are the OS/architecture pairs of the CLI binaries.
var cliPlatforms = [][2]string{{"linux", "amd64"}, {"linux", "arm64"}, {"darwin", "amd64"}, {"darwin", "arm64"}}

// umbrella is the chart that bundles every other one.
const umbrella = "cozyplane"

// library is the library chart each controller chart bundles already.
const library = "cozyplane-lib"

// cliVersionVar is the variable -ldflags -X stamps with the CLI's version.
const cliVersionVar = "github.com/cozyplane/cozyplane/cmd/cozyplane/internal/cli.version"

func main() {
	root := flag.String("root", ".", "the repository's root")
	out := flag.String("out", ".cache/release", "where <version>/ is written")
	version := flag.String("version", "", "the release's version (default: from git, see the package doc)")
	helm := flag.String("helm", "", "the helm binary (default: .cache/bin/helm under -root, else helm in PATH)")
	caCerts := flag.String("ca-certs", "/etc/ssl/certs/ca-certificates.crt", "the CA bundle of the images' base layer (empty: none)")
	jobs := flag.Int("jobs", min(2, runtime.NumCPU()), "go builds run at once")
	chartsOnly := flag.Bool("charts-only", false, "package only the charts, with the image references of -images; build nothing")
	images := flag.String("images", "", "with -charts-only: the images' references, images.txt's format")
	flag.Parse()
	log.SetFlags(0)
	start := time.Now()

	r, err := filepath.Abs(*root)
	if err != nil {
		log.Fatal(err)
	}
	v := *version
	if v == "" {
		if v, err = gitVersion(r); err != nil {
			log.Fatalf("release: %v (pass -version)", err)
		}
	}
	if err := checkVersion(v); err != nil {
		log.Fatalf("release: %v", err)
	}
	h := *helm
	if h == "" {
		h = filepath.Join(r, ".cache", "bin", "helm")
		if _, err := os.Stat(h); err != nil {
			if h, err = exec.LookPath("helm"); err != nil {
				log.Fatal("release: no helm at .cache/bin/helm nor in PATH: run make tools")
			}
		}
	}
	var certs []byte
	if *caCerts != "" {
		if certs, err = os.ReadFile(*caCerts); err != nil {
			log.Fatalf("release: the CA bundle: %v (pass -ca-certs= for none)", err)
		}
	}
	o, err := filepath.Abs(*out)
	if err != nil {
		log.Fatal(err)
	}
	if *chartsOnly {
		if *images == "" {
			log.Fatal("release: -charts-only needs -images FILE")
		}
		if err := runChartsOnly(r, filepath.Join(o, v), v, h, *images); err != nil {
			log.Fatalf("release: %v", err)
		}
		log.Printf("release %s (charts only): %s in %s", v, filepath.Join(o, v), time.Since(start).Round(time.Second))
		return
	}
	if err := run(r, filepath.Join(o, v), v, h, certs, *jobs); err != nil {
		log.Fatalf("release: %v", err)
	}
	log.Printf("release %s: %s in %s", v, filepath.Join(o, v), time.Since(start).Round(time.Second))
}

// semver is the versions a chart and an image tag both take: SemVer 2 with
// no build metadata (an image tag cannot hold "+").
var semver = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)

func checkVersion(v string) error {
	if !semver.MatchString(v) || len(v) > 128 {
		return fmt.Errorf("version %q is not MAJOR.MINOR.PATCH[-PRERELEASE] (no +build: image tags cannot hold it)", v)
	}
	return nil
}

// gitVersion is the version of the checkout at root: X.Y.Z when a tag vX.Y.Z
// names HEAD, else the umbrella chart's appVersion followed by
// -dev.g<commit>, plus .dirty when tracked files differ from HEAD.
func gitVersion(root string) (string, error) {
	git := func(args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		b, err := cmd.Output()
		return strings.TrimSpace(string(b)), err
	}
	if tag, err := git("describe", "--tags", "--exact-match", "--match", "v[0-9]*", "HEAD"); err == nil && semver.MatchString(strings.TrimPrefix(tag, "v")) {
		return strings.TrimPrefix(tag, "v"), nil
	}
	commit, err := git("rev-parse", "--short=12", "HEAD")
	if err != nil {
		return "", fmt.Errorf("git rev-parse HEAD: %w", err)
	}
	data, err := os.ReadFile(filepath.Join(root, "charts", umbrella, "Chart.yaml"))
	if err != nil {
		return "", err
	}
	m := regexp.MustCompile(`(?m)^appVersion: *"?([^"\s]+)"?`).FindSubmatch(data)
	if m == nil {
		return "", fmt.Errorf("charts/%s/Chart.yaml has no appVersion", umbrella)
	}
	v := fmt.Sprintf("%s-dev.g%s", m[1], commit)
	if _, err := git("diff", "--quiet", "HEAD", "--"); err != nil {
		v += ".dirty"
	}
	return v, nil
}

// controllers are the controllers/<name> modules with a main.go; each must
// have its chart at charts/<name>.
func controllers(root string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(root, "controllers"))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(root, "controllers", e.Name(), "main.go")); err != nil || !e.IsDir() {
			continue
		}
		if _, err := os.Stat(filepath.Join(root, "charts", e.Name(), "Chart.yaml")); err != nil {
			return nil, fmt.Errorf("controller %s has no chart at charts/%s", e.Name(), e.Name())
		}
		names = append(names, e.Name())
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("no controller under %s/controllers", root)
	}
	return names, nil
}

// build is one go build.
type build struct {
	dir, pkg, goos, goarch, ldflags, out string
}

func (b build) run() error {
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", b.ldflags, "-o", b.out, b.pkg)
	cmd.Dir = b.dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off", "GOTOOLCHAIN=local", "GOOS="+b.goos, "GOARCH="+b.goarch)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s (%s/%s): %w: %s", b.dir, b.goos, b.goarch, err, stderr.String())
	}
	return nil
}

func runBuilds(builds []build, jobs int) error {
	sem := make(chan struct{}, max(1, jobs))
	var wg sync.WaitGroup
	errs := make([]error, len(builds))
	for i, b := range builds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			t := time.Now()
			errs[i] = b.run()
			log.Printf("  built %s (%s/%s) in %s", filepath.Base(b.out), b.goos, b.goarch, time.Since(t).Round(100*time.Millisecond))
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func run(root, dir, version, helm string, caCerts []byte, jobs int) error {
	names, err := controllers(root)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	work := filepath.Join(dir, ".work")
	for _, d := range []string{"images", "charts", "cli", ".work/bin", ".work/charts"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return err
		}
	}
	defer os.RemoveAll(work)

	log.Printf("==> release %s: binaries (%d controllers x %v, the CLI x %d)", version, len(names), archs, len(cliPlatforms))
	var builds []build
	for _, n := range names {
		for _, a := range archs {
			builds = append(builds, build{dir: filepath.Join(root, "controllers", n), pkg: ".", goos: "linux", goarch: a,
				ldflags: "-s -w", out: filepath.Join(work, "bin", n+"-linux-"+a)})
		}
	}
	for _, p := range cliPlatforms {
		builds = append(builds, build{dir: filepath.Join(root, "cmd", "cozyplane"), pkg: ".", goos: p[0], goarch: p[1],
			ldflags: fmt.Sprintf("-s -w -X %s=%s", cliVersionVar, version), out: filepath.Join(work, "bin", "cozyplane-"+p[0]+"-"+p[1])})
	}
	if err := runBuilds(builds, jobs); err != nil {
		return err
	}

	log.Printf("==> images")
	digests := map[string]string{}
	var refs []string
	for _, n := range names {
		repo, err := imageRepository(filepath.Join(root, "charts", n))
		if err != nil {
			return err
		}
		bins := map[string]string{}
		for _, a := range archs {
			bins[a] = filepath.Join(work, "bin", n+"-linux-"+a)
		}
		idx, err := buildIndex(imageSpec{Name: n, Version: version, Binaries: bins, CACerts: caCerts})
		if err != nil {
			return fmt.Errorf("image %s: %w", n, err)
		}
		path := filepath.Join(dir, "images", n+"-"+version+".oci.tar")
		if err := writeArchive(idx, repo+":"+version, version, path); err != nil {
			return fmt.Errorf("image %s: %w", n, err)
		}
		// Read the archive back: what ships is what the charts name.
		tmp, err := os.MkdirTemp(work, "check-")
		if err != nil {
			return err
		}
		loaded, _, err := loadArchive(path, tmp)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if err := checkIndex(loaded, archs); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		d, err := loaded.Digest()
		if err != nil {
			return err
		}
		os.RemoveAll(tmp)
		digests[n] = d.String()
		ref := repo + ":" + version + "@" + d.String()
		refs = append(refs, ref)
		log.Printf("  %s", ref)
	}
	if err := os.WriteFile(filepath.Join(dir, "images.txt"), []byte(strings.Join(refs, "\n")+"\n"), 0o644); err != nil {
		return err
	}

	log.Printf("==> charts")
	if err := packageCharts(root, dir, version, helm, digests); err != nil {
		return err
	}

	log.Printf("==> CLI archives")
	license, _ := os.ReadFile(filepath.Join(root, "LICENSE"))
	for _, p := range cliPlatforms {
		bin, err := os.ReadFile(filepath.Join(work, "bin", "cozyplane-"+p[0]+"-"+p[1]))
		if err != nil {
			return err
		}
		files := []file{{name: "cozyplane", mode: 0o755, body: bin}}
		if len(license) > 0 {
			files = append(files, file{name: "LICENSE", mode: 0o644, body: license})
		}
		path := filepath.Join(dir, "cli", fmt.Sprintf("cozyplane-%s-%s-%s.tar.gz", version, p[0], p[1]))
		if err := writeTarGz(files, path); err != nil {
			return err
		}
		log.Printf("  %s", filepath.Base(path))
	}

	if err := os.RemoveAll(work); err != nil {
		return err
	}
	return writeChecksums(dir)
}

// runChartsOnly packages the charts into dir/charts as run does, each
// controller chart with the digest images (a file of images.txt's format)
// gives its image repository at version; every controller needs one.
func runChartsOnly(root, dir, version, helm, images string) error {
	names, err := controllers(root)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(images)
	if err != nil {
		return err
	}
	digests, err := digestsOf(root, names, version, string(data))
	if err != nil {
		return fmt.Errorf("%s: %w", images, err)
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	for _, d := range []string{"charts", ".work/charts"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return err
		}
	}
	log.Printf("==> charts of release %s, with the images of %s", version, images)
	if err := packageCharts(root, dir, version, helm, digests); err != nil {
		return err
	}
	if err := os.RemoveAll(filepath.Join(dir, ".work")); err != nil {
		return err
	}
	return writeChecksums(dir)
}

// sha256Digest is an image digest as images.txt writes it.
var sha256Digest = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// digestsOf reads images.txt's lines (<repository>:<version>@<digest>) and
// returns each controller's digest by the image repository of its chart.
func digestsOf(root string, names []string, version, lines string) (map[string]string, error) {
	byRepo := map[string]string{}
	for _, l := range strings.Fields(lines) {
		ref, digest, ok := strings.Cut(l, "@")
		repo, tag, ok2 := strings.Cut(ref, ":"+version)
		if !ok || !ok2 || tag != "" || !sha256Digest.MatchString(digest) {
			return nil, fmt.Errorf("%q is not <repository>:%s@sha256:<64 hex digits>", l, version)
		}
		byRepo[repo] = digest
	}
	digests := map[string]string{}
	for _, n := range names {
		repo, err := imageRepository(filepath.Join(root, "charts", n))
		if err != nil {
			return nil, err
		}
		d, ok := byRepo[repo]
		if !ok {
			return nil, fmt.Errorf("no image %s:%s@<digest> for the controller %s", repo, version, n)
		}
		digests[n] = d
	}
	return digests, nil
}

// packageCharts packages every chart at version into dir/charts: the
// controller charts with their image's digest, checked by rendering each
// package; then the umbrella chart bundling those packages.
func packageCharts(root, dir, version, helm string, digests map[string]string) error {
	entries, err := os.ReadDir(filepath.Join(root, "charts"))
	if err != nil {
		return err
	}
	released := map[string]bool{}
	var charts []string
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(root, "charts", e.Name(), "Chart.yaml")); err != nil || e.Name() == library || e.Name() == umbrella {
			continue
		}
		charts = append(charts, e.Name())
		released[e.Name()] = true
	}
	stage := filepath.Join(dir, ".work", "charts")
	out := filepath.Join(dir, "charts")
	var packages []string
	for _, c := range charts {
		p, err := packageChart(root, stage, out, c, version, helm, digests[c], released)
		if err != nil {
			return err
		}
		packages = append(packages, p)
	}
	// The umbrella chart bundles exactly the packages above.
	src := filepath.Join(stage, umbrella)
	if err := copyTree(filepath.Join(root, "charts", umbrella), src); err != nil {
		return err
	}
	if err := stampChart(src, version, released); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(src, "charts"), 0o755); err != nil {
		return err
	}
	for _, p := range packages {
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(src, "charts", filepath.Base(p)), data, 0o644); err != nil {
			return err
		}
	}
	p, err := helmPackage(helm, src, out)
	if err != nil {
		return err
	}
	log.Printf("  %s (bundles %d charts)", filepath.Base(p), len(packages))
	return nil
}

// packageChart stages charts/<name>, stamps it with version (and, for a
// controller chart, digest) and packages it into out. A controller chart's
// package must render its image as <repository>:<version>@<digest>.
func packageChart(root, stage, out, name, version, helm, digest string, released map[string]bool) (string, error) {
	src := filepath.Join(stage, name)
	if err := copyTree(filepath.Join(root, "charts", name), src); err != nil {
		return "", err
	}
	if err := stampChart(src, version, released); err != nil {
		return "", err
	}
	if digest != "" {
		if err := stampDigest(src, digest); err != nil {
			return "", err
		}
	}
	p, err := helmPackage(helm, src, out)
	if err != nil {
		return "", err
	}
	if digest != "" {
		repo, err := imageRepository(src)
		if err != nil {
			return "", err
		}
		want := repo + ":" + version + "@" + digest
		images, err := renderedImages(helm, p)
		if err != nil {
			return "", err
		}
		if len(images) == 0 {
			return "", fmt.Errorf("%s renders no container image", filepath.Base(p))
		}
		for _, got := range images {
			if got != want {
				return "", fmt.Errorf("%s renders the image %s, want %s", filepath.Base(p), got, want)
			}
		}
	}
	log.Printf("  %s", filepath.Base(p))
	return p, nil
}

// writeTarGz writes files into the gzip-compressed tar path (fixed times).
func writeTarGz(files []file, path string) error {
	l, err := layer(files)
	if err != nil {
		return err
	}
	rc, err := l.Compressed()
	if err != nil {
		return err
	}
	defer rc.Close()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, rc); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeChecksums writes dir/SHA256SUMS: every file under dir (but itself),
// by path relative to dir, in the format of sha256sum.
func writeChecksums(dir string) error {
	var lines []string
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() || filepath.Base(p) == "SHA256SUMS" {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		h := sha256.New()
		if _, err := io.Copy(h, f); err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		lines = append(lines, hex.EncodeToString(h.Sum(nil))+"  "+filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return err
	}
	sort.Slice(lines, func(i, j int) bool { return lines[i][66:] < lines[j][66:] })
	log.Printf("==> SHA256SUMS (%d files)", len(lines))
	return os.WriteFile(filepath.Join(dir, "SHA256SUMS"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}
