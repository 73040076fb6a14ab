package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// copyTree copies the directory src to dst (which must not exist).
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s: not a regular file", p)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}

var (
	depNameLine    = regexp.MustCompile(`^- name: *(\S+)\s*$`)
	depVersionLine = regexp.MustCompile(`^  version: *\S+\s*$`)
)

// stampChart rewrites the Chart.yaml of the chart at dir: its version and
// appVersion become version, and so does the version of every dependency
// named in released (the charts of this release, packaged at the same
// version); other dependencies (the library chart) keep theirs.
func stampChart(dir, version string, released map[string]bool) error {
	path := filepath.Join(dir, "Chart.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	lines := strings.Split(string(data), "\n")
	var sawVersion, sawApp bool
	inDeps, dep := false, ""
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "version:"):
			lines[i], sawVersion = "version: "+version, true
		case strings.HasPrefix(l, "appVersion:"):
			lines[i], sawApp = fmt.Sprintf("appVersion: %q", version), true
		case strings.HasPrefix(l, "dependencies:"):
			inDeps = true
		case inDeps && depNameLine.MatchString(l):
			dep = depNameLine.FindStringSubmatch(l)[1]
		case inDeps && depVersionLine.MatchString(l) && released[dep]:
			lines[i] = "  version: " + version
		case l != "" && !strings.HasPrefix(l, " ") && !strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "#"):
			inDeps = false
		}
	}
	if !sawVersion || !sawApp {
		return fmt.Errorf("%s: no top-level version and appVersion", path)
	}
	return os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644)
}

var digestLine = regexp.MustCompile(`(?m)^  digest: ""(\s*)$`)

// stampDigest sets image.digest in the values.yaml of the chart at dir (the
// line `  digest: ""` of the image block), so the Deployment names the image
// by digest as well as by tag.
func stampDigest(dir, digest string) error {
	path := filepath.Join(dir, "values.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if n := len(digestLine.FindAllIndex(data, -1)); n != 1 {
		return fmt.Errorf("%s: %d lines `  digest: \"\"` (the image block's), want one", path, n)
	}
	data = digestLine.ReplaceAll(data, []byte(fmt.Sprintf(`  digest: %q$1`, digest)))
	return os.WriteFile(path, data, 0o644)
}

var repositoryLine = regexp.MustCompile(`(?m)^image:\s*\n(?:  #.*\n)*  repository: *(\S+)`)

// imageRepository is the image.repository of the chart at dir.
func imageRepository(dir string) (string, error) {
	data, err := os.ReadFile(filepath.Join(dir, "values.yaml"))
	if err != nil {
		return "", err
	}
	m := repositoryLine.FindSubmatch(data)
	if m == nil {
		return "", fmt.Errorf("%s/values.yaml: no image.repository", dir)
	}
	return strings.Trim(string(m[1]), `"'`), nil
}

// helmPackage packages the chart at dir into out and returns the package's path.
func helmPackage(helm, dir, out string) (string, error) {
	cmd := exec.Command(helm, "package", dir, "--destination", out)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("helm package %s: %w: %s", dir, err, stderr.String())
	}
	// "Successfully packaged chart and saved it to: PATH"
	s := strings.TrimSpace(stdout.String())
	i := strings.LastIndex(s, ": ")
	if i < 0 {
		return "", fmt.Errorf("helm package %s: unexpected output %q", dir, s)
	}
	return s[i+2:], nil
}

var imageLine = regexp.MustCompile(`(?m)^\s+image: *"?([^"\s]+)"?\s*$`)

// renderedImages are the container images of every Deployment the packaged
// chart at pkg renders with its default values.
func renderedImages(helm, pkg string) ([]string, error) {
	cmd := exec.Command(helm, "template", "release", pkg, "--namespace", "cozy-system")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("helm template %s: %w: %s", pkg, err, stderr.String())
	}
	var images []string
	for _, m := range imageLine.FindAllStringSubmatch(stdout.String(), -1) {
		images = append(images, m[1])
	}
	return images, nil
}
