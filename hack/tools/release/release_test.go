package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const repoRoot = "../../.."

func helmBin(t *testing.T) string {
	t.Helper()
	p, _ := filepath.Abs(filepath.Join(repoRoot, ".cache", "bin", "helm"))
	if _, err := os.Stat(p); err == nil {
		return p
	}
	if p, err := exec.LookPath("helm"); err == nil {
		return p
	}
	t.Fatalf("no helm at %s nor in PATH: run make tools", p)
	return ""
}

// An image archive written by the release holds, under its reference, an
// index with one image per architecture, each with the config the charts
// rely on: the non-root user, /manager as entrypoint, its architecture; and
// reading it back checks exactly that.
func TestImageArchive(t *testing.T) {
	dir := t.TempDir()
	bins := map[string]string{}
	for _, a := range archs {
		bins[a] = filepath.Join(dir, "manager-"+a)
		if err := os.WriteFile(bins[a], []byte("#!/bin/false "+a+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	idx, err := buildIndex(imageSpec{Name: "demo", Version: "1.2.3", Binaries: bins, CACerts: []byte("certs\n")})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "demo.oci.tar")
	if err := writeArchive(idx, "example.org/demo:1.2.3", "1.2.3", path); err != nil {
		t.Fatal(err)
	}
	loaded, ann, err := loadArchive(path, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if got := ann["io.containerd.image.name"]; got != "example.org/demo:1.2.3" {
		t.Errorf("index.json names the image %q, want example.org/demo:1.2.3", got)
	}
	if got := ann["org.opencontainers.image.ref.name"]; got != "1.2.3" {
		t.Errorf("index.json's ref.name is %q, want 1.2.3", got)
	}
	want, _ := idx.Digest()
	if got, _ := loaded.Digest(); got != want {
		t.Errorf("the archive's index digest is %s, the built one %s", got, want)
	}
	if err := checkIndex(loaded, archs); err != nil {
		t.Fatal(err)
	}
	m, err := loaded.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range m.Manifests {
		img, _ := loaded.Image(d.Digest)
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cf.Config.User != "65532:65532" || len(cf.Config.Entrypoint) != 1 || cf.Config.Entrypoint[0] != "/manager" ||
			cf.Architecture != d.Platform.Architecture || cf.OS != "linux" || cf.Config.Labels["org.opencontainers.image.version"] != "1.2.3" {
			t.Errorf("image %s: config %+v (%s/%s)", d.Platform.Architecture, cf.Config, cf.OS, cf.Architecture)
		}
	}
	// The same inputs give the same digest: nothing of the build machine or
	// the time goes into the image.
	again, err := buildIndex(imageSpec{Name: "demo", Version: "1.2.3", Binaries: bins, CACerts: []byte("certs\n")})
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := again.Digest(); d != want {
		t.Errorf("a second build gives %s, the first %s", d, want)
	}
}

// checkIndex refuses an image that would run as root, with another
// entrypoint, or without one of the architectures.
func TestCheckIndexRefuses(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "manager")
	if err := os.WriteFile(bin, []byte("x"), 0o755); err != nil {
		t.Fatal(err)
	}
	idx, err := buildIndex(imageSpec{Name: "demo", Version: "1.2.3", Binaries: map[string]string{"amd64": bin}})
	if err != nil {
		t.Fatal(err)
	}
	if err := checkIndex(idx, archs); err == nil || !strings.Contains(err.Error(), "arm64") {
		t.Errorf("an index without arm64: %v, want an error naming arm64", err)
	}
}

// A controller chart packaged by the release carries the release's version
// as version and appVersion, and its Deployment names the image by that tag
// and the digest.
func TestPackageChart(t *testing.T) {
	helm := helmBin(t)
	dir := t.TempDir()
	stage, out := filepath.Join(dir, "stage"), filepath.Join(dir, "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	root, _ := filepath.Abs(repoRoot)
	p, err := packageChart(root, stage, out, "ns-labels", "1.2.3-rc.1", helm, digest, map[string]bool{"ns-labels": true})
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(p) != "ns-labels-1.2.3-rc.1.tgz" {
		t.Errorf("package %s, want ns-labels-1.2.3-rc.1.tgz", filepath.Base(p))
	}
	images, err := renderedImages(helm, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(images) != 1 || images[0] != "ghcr.io/cozyplane/ns-labels:1.2.3-rc.1@"+digest {
		t.Errorf("rendered images %v", images)
	}
	show, err := exec.Command(helm, "show", "chart", p).Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(show), "\nversion: 1.2.3-rc.1") || !strings.Contains(string(show), "appVersion: 1.2.3-rc.1") {
		t.Errorf("Chart.yaml of the package:\n%s", show)
	}
}

func TestCheckVersion(t *testing.T) {
	for _, v := range []string{"1.2.3", "0.1.0-dev.g5e6a06e12345", "0.1.0-dev.g5e6a06e12345.dirty"} {
		if err := checkVersion(v); err != nil {
			t.Errorf("%s: %v", v, err)
		}
	}
	for _, v := range []string{"v1.2.3", "1.2", "1.2.3+build", "01.2.3", ""} {
		if err := checkVersion(v); err == nil {
			t.Errorf("%s: accepted", v)
		}
	}
}

// -charts-only takes each controller's digest from images.txt's lines, by
// its chart's image repository at the release's version, and refuses a
// missing controller or a malformed line.
func TestDigestsOf(t *testing.T) {
	names, err := controllers(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	digest := "sha256:" + strings.Repeat("ab", 32)
	var lines []string
	for _, n := range names {
		repo, err := imageRepository(filepath.Join(repoRoot, "charts", n))
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, repo+":1.2.3@"+digest)
	}
	got, err := digestsOf(repoRoot, names, "1.2.3", strings.Join(lines, "\n"))
	if err != nil || len(got) != len(names) || got[names[0]] != digest {
		t.Fatalf("digests %v, %v", got, err)
	}
	if _, err := digestsOf(repoRoot, names, "1.2.3", strings.Join(lines[1:], "\n")); err == nil || !strings.Contains(err.Error(), "for the controller "+names[0]) {
		t.Errorf("a missing controller: %v", err)
	}
	if _, err := digestsOf(repoRoot, names, "1.2.4", strings.Join(lines, "\n")); err == nil {
		t.Error("another version's references were taken")
	}
	if _, err := digestsOf(repoRoot, names, "1.2.3", lines[0]+"x"); err == nil {
		t.Error("a malformed digest was taken")
	}
}
