package typegen

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// generatedPrefix and generatedSuffix name every file the generator writes.
const (
	generatedPrefix = "zz_generated."
	generatedSuffix = ".go"
)

// ErrHandWritten is returned (wrapped) when a file the generator would
// write exists without the generated-code header.
var ErrHandWritten = errors.New("refusing to overwrite a file that lacks the generated-code header (hand-written code?)")

// HasHeader reports whether the file's first line is the generator's
// header comment.
func HasHeader(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil && line == "" {
		return false, nil
	}
	return strings.TrimRight(line, "\r\n") == "// "+Header, nil
}

// WritePackage writes a package's files into dir (created if needed). It
// never overwrites a file that lacks the header, writes only files whose
// content changed, and removes the generated files of an earlier run that
// this one no longer produces (those with the header only).
func WritePackage(dir string, files []File) error {
	for _, f := range files {
		if len(bytes.TrimSpace(f.Content)) == 0 {
			return fmt.Errorf("%s: refusing to write an empty file", filepath.Join(dir, f.Name))
		}
		p := filepath.Join(dir, f.Name)
		if _, err := os.Stat(p); err == nil {
			ok, err := HasHeader(p)
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("%s: %w", p, ErrHandWritten)
			}
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	keep := map[string]bool{}
	for _, f := range files {
		keep[f.Name] = true
		p := filepath.Join(dir, f.Name)
		if old, err := os.ReadFile(p); err == nil && bytes.Equal(old, f.Content) {
			continue
		}
		tmp, err := os.CreateTemp(dir, ".gen-*")
		if err != nil {
			return err
		}
		if _, err := tmp.Write(f.Content); err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
			return err
		}
		if err := tmp.Close(); err != nil {
			os.Remove(tmp.Name())
			return err
		}
		if err := os.Chmod(tmp.Name(), 0o644); err != nil {
			os.Remove(tmp.Name())
			return err
		}
		if err := os.Rename(tmp.Name(), p); err != nil {
			os.Remove(tmp.Name())
			return err
		}
	}
	stale, err := generatedFiles(dir)
	if err != nil {
		return err
	}
	for _, name := range stale {
		if !keep[name] {
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				return err
			}
		}
	}
	return nil
}

// generatedFiles lists the zz_generated.*.go files of dir that carry the
// header.
func generatedFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasPrefix(n, generatedPrefix) || !strings.HasSuffix(n, generatedSuffix) {
			continue
		}
		if ok, err := HasHeader(filepath.Join(dir, n)); err != nil {
			return nil, err
		} else if ok {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out, nil
}

// Prune removes the generated packages under root that are not in keep
// (package directory names): a directory is removed only when every file in
// it is a generated file with the header, so nothing hand-written is lost.
func Prune(root string, keep map[string]bool) ([]string, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	var removed []string
	for _, e := range entries {
		if !e.IsDir() || keep[e.Name()] {
			continue
		}
		dir := filepath.Join(root, e.Name())
		files, err := os.ReadDir(dir)
		if err != nil {
			return nil, err
		}
		gen, err := generatedFiles(dir)
		if err != nil {
			return nil, err
		}
		if len(gen) == 0 || len(gen) != len(files) {
			continue
		}
		for _, n := range gen {
			if err := os.Remove(filepath.Join(dir, n)); err != nil {
				return nil, err
			}
		}
		if err := os.Remove(dir); err != nil {
			return nil, err
		}
		removed = append(removed, dir)
	}
	return removed, nil
}

// ImportPath returns the import path of dir, from the go.mod of the module
// that holds it; "" when there is none.
func ImportPath(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := abs; ; d = filepath.Dir(d) {
		b, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil {
			for _, l := range strings.Split(string(b), "\n") {
				l = strings.TrimSpace(l)
				if strings.HasPrefix(l, "module ") {
					mod := strings.Trim(strings.TrimSpace(strings.TrimPrefix(l, "module")), `"`)
					rel, err := filepath.Rel(d, abs)
					if err != nil {
						return "", err
					}
					if rel == "." {
						return mod, nil
					}
					return mod + "/" + filepath.ToSlash(rel), nil
				}
			}
			return "", nil
		}
		if filepath.Dir(d) == d {
			return "", nil
		}
	}
}
