package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The user the controllers run as: the charts' podSecurityContext and the
// restricted Pod Security Standard expect this uid and gid, not root.
const (
	nonRootUser = "65532:65532"
	entrypoint  = "/manager"
)

// epoch is the time of every file and of the image config: the same
// binaries give the same digests on any machine and at any time.
var epoch = time.Unix(0, 0).UTC()

// file is one entry of an image layer.
type file struct {
	name string // absolute path in the image, without the leading slash
	mode int64
	body []byte // nil for a directory
}

// baseFiles is the layer every controller image shares: the passwd and group
// entries of the non-root user (so the process has a name and a home) and,
// when caCerts is not empty, the CA bundle a controller needs to reach
// anything but the API server (whose CA comes with the ServiceAccount token).
func baseFiles(caCerts []byte) []file {
	files := []file{
		{name: "etc/", mode: 0o755},
		{name: "etc/passwd", mode: 0o644, body: []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
		{name: "etc/group", mode: 0o644, body: []byte("root:x:0:\nnonroot:x:65532:\n")},
		{name: "home/", mode: 0o755},
		{name: "home/nonroot/", mode: 0o700},
		{name: "tmp/", mode: 0o1777},
	}
	if len(caCerts) > 0 {
		files = append(files,
			file{name: "etc/ssl/", mode: 0o755},
			file{name: "etc/ssl/certs/", mode: 0o755},
			file{name: "etc/ssl/certs/ca-certificates.crt", mode: 0o644, body: caCerts})
	}
	return files
}

// layer is an OCI layer (gzip) holding files, with fixed times and owners.
// The home directory belongs to the non-root user; everything else to root.
func layer(files []file) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	sort.Slice(files, func(i, j int) bool { return files[i].name < files[j].name })
	for _, f := range files {
		h := &tar.Header{Name: f.name, Mode: f.mode, ModTime: epoch, Format: tar.FormatPAX}
		if f.name == "home/nonroot/" {
			h.Uid, h.Gid = 65532, 65532
		}
		if f.body == nil {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag = tar.TypeReg
			h.Size = int64(len(f.body))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if f.body != nil {
			if _, err := tw.Write(f.body); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer))
}

// imageSpec says what goes into one controller's image.
type imageSpec struct {
	Name     string            // the controller's name (controllers/<name>)
	Version  string            // the release's version
	Binaries map[string]string // architecture (amd64, arm64) -> the static linux binary
	CACerts  []byte            // the CA bundle of the base layer; may be empty
}

// buildIndex builds one image per architecture, each the base layer plus the
// binary at /manager run as the non-root user, and the index that names them
// by platform.
func buildIndex(spec imageSpec) (v1.ImageIndex, error) {
	base, err := layer(baseFiles(spec.CACerts))
	if err != nil {
		return nil, err
	}
	archs := make([]string, 0, len(spec.Binaries))
	for a := range spec.Binaries {
		archs = append(archs, a)
	}
	sort.Strings(archs)
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, arch := range archs {
		bin, err := os.ReadFile(spec.Binaries[arch])
		if err != nil {
			return nil, err
		}
		top, err := layer([]file{{name: entrypoint[1:], mode: 0o755, body: bin}})
		if err != nil {
			return nil, err
		}
		img, err := mutate.AppendLayers(mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON), base, top)
		if err != nil {
			return nil, err
		}
		cf, err := img.ConfigFile()
		if err != nil {
			return nil, err
		}
		cf = cf.DeepCopy()
		cf.Architecture, cf.OS = arch, "linux"
		cf.Created = v1.Time{Time: epoch}
		cf.Config = v1.Config{
			User:       nonRootUser,
			Entrypoint: []string{entrypoint},
			WorkingDir: "/",
			Env:        []string{"PATH=/", "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"},
			Labels: map[string]string{
				"org.opencontainers.image.title":       "cozyplane-" + spec.Name,
				"org.opencontainers.image.description": "The " + spec.Name + " controller of cozyplane",
				"org.opencontainers.image.version":     spec.Version,
				"org.opencontainers.image.licenses":    "Apache-2.0",
			},
		}
		if img, err = mutate.ConfigFile(img, cf); err != nil {
			return nil, err
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: arch}},
		})
	}
	return idx, nil
}

// writeArchive writes idx as an OCI image layout packed in one tar file at
// path, its index.json naming it ref (a registry reference with a tag), so
// that `docker load`, `ctr image import`, `kind load image-archive` and
// `skopeo copy oci-archive:` all find it under that name.
func writeArchive(idx v1.ImageIndex, ref, tag, path string) error {
	dir, err := os.MkdirTemp(filepath.Dir(path), ".oci-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	if err := p.AppendIndex(idx, layout.WithAnnotations(map[string]string{
		"io.containerd.image.name":          ref,
		"org.opencontainers.image.ref.name": tag,
	})); err != nil {
		return err
	}
	return tarDir(dir, path)
}

// tarDir packs the files under dir into the tar file path, in name order
// with fixed times, through a temporary file renamed at the end.
func tarDir(dir, path string) error {
	var names []string
	if err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if p != dir {
			names = append(names, p)
		}
		return nil
	}); err != nil {
		return err
	}
	sort.Strings(names)
	tmp := path + ".tmp"
	out, err := os.Create(tmp)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	tw := tar.NewWriter(out)
	for _, p := range names {
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		h := &tar.Header{Name: filepath.ToSlash(rel), ModTime: epoch, Mode: 0o644, Format: tar.FormatPAX}
		if fi.IsDir() {
			h.Typeflag, h.Name, h.Mode = tar.TypeDir, h.Name+"/", 0o755
			if err := tw.WriteHeader(h); err != nil {
				return err
			}
			continue
		}
		h.Typeflag, h.Size = tar.TypeReg, fi.Size()
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		_, err = io.Copy(tw, f)
		f.Close()
		if err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// loadArchive unpacks the OCI archive at path into dir and returns the image
// index it holds (the one index.json names) and that index's annotations.
func loadArchive(path, dir string) (v1.ImageIndex, map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		target := filepath.Join(dir, filepath.FromSlash(h.Name))
		if rel, err := filepath.Rel(dir, target); err != nil || rel == ".." || filepath.IsAbs(rel) || len(rel) > 1 && rel[:2] == ".." {
			return nil, nil, fmt.Errorf("%s: entry %q leaves the archive", path, h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return nil, nil, err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return nil, nil, err
			}
			out, err := os.Create(target)
			if err != nil {
				return nil, nil, err
			}
			_, err = io.Copy(out, tr)
			out.Close()
			if err != nil {
				return nil, nil, err
			}
		default:
			return nil, nil, fmt.Errorf("%s: entry %q is neither a file nor a directory", path, h.Name)
		}
	}
	outer, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, nil, err
	}
	m, err := outer.IndexManifest()
	if err != nil {
		return nil, nil, err
	}
	if len(m.Manifests) != 1 {
		return nil, nil, fmt.Errorf("%s: index.json names %d entries, want one image index", path, len(m.Manifests))
	}
	idx, err := outer.ImageIndex(m.Manifests[0].Digest)
	if err != nil {
		return nil, nil, err
	}
	return idx, m.Manifests[0].Annotations, nil
}

// checkIndex verifies what the charts rely on for every image of idx: one
// image per architecture of archs, each for linux on its platform, run as
// the non-root user with /manager as its entrypoint, holding /manager.
func checkIndex(idx v1.ImageIndex, archs []string) error {
	m, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, d := range m.Manifests {
		if d.Platform == nil {
			return fmt.Errorf("manifest %s has no platform", d.Digest)
		}
		img, err := idx.Image(d.Digest)
		if err != nil {
			return err
		}
		cf, err := img.ConfigFile()
		if err != nil {
			return err
		}
		switch {
		case cf.OS != "linux" || cf.Architecture != d.Platform.Architecture:
			return fmt.Errorf("image %s: config says %s/%s, the index %s/%s", d.Digest, cf.OS, cf.Architecture, d.Platform.OS, d.Platform.Architecture)
		case cf.Config.User != nonRootUser:
			return fmt.Errorf("image %s (%s): user %q, want %q", d.Digest, cf.Architecture, cf.Config.User, nonRootUser)
		case len(cf.Config.Entrypoint) != 1 || cf.Config.Entrypoint[0] != entrypoint:
			return fmt.Errorf("image %s (%s): entrypoint %q, want [%s]", d.Digest, cf.Architecture, cf.Config.Entrypoint, entrypoint)
		}
		if err := hasFile(img, entrypoint[1:]); err != nil {
			return fmt.Errorf("image %s (%s): %w", d.Digest, cf.Architecture, err)
		}
		seen[cf.Architecture] = true
	}
	for _, a := range archs {
		if !seen[a] {
			return fmt.Errorf("no image for linux/%s", a)
		}
	}
	if len(seen) != len(archs) {
		return fmt.Errorf("images for %d architectures, want %d (%v)", len(seen), len(archs), archs)
	}
	return nil
}

// hasFile is nil when the image's filesystem holds an executable regular
// file at name.
func hasFile(img v1.Image, name string) error {
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return fmt.Errorf("no /%s", name)
		}
		if err != nil {
			return err
		}
		if h.Name == name {
			if h.Typeflag != tar.TypeReg || h.Mode&0o111 == 0 {
				return fmt.Errorf("/%s is not an executable file", name)
			}
			return nil
		}
	}
}
