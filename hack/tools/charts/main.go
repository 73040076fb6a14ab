// Command charts keeps the generated parts of the Helm charts in charts/
// current; hack/generate.sh runs it and hack/verify.sh fails when its output
// differs from what is committed.
//
//	go run . CHARTS_DIR
//
// For every chart that depends on the library chart cozyplane-lib it
//
//   - packages the library into <chart>/charts/cozyplane-lib-<version>.tgz,
//     byte for byte reproducible (sorted entries, fixed times and owners), so
//     `helm template charts/<chart>` works from a fresh clone and the packaged
//     copy can be verified like any generated file (vendorLibrary);
//   - writes <chart>/values.schema.json from the library's schema/ files: the
//     controller schema, plus the sharding values when values.yaml has
//     `shards`, plus the chart's own values from <chart>/schema/own.json when
//     it has one (the flags of that controller alone) (composeSchema).
//
// For the policies chart, whose values are one boolean switch per policy, it
// writes values.schema.json from values.yaml: exactly those switches
// (switchesSchema), so adding a policy needs no hand edit of the schema.
//
// For every chart with a values.yaml and a values.schema.json it rewrites the
// values table of README.md between the markers
//
//	<!-- values:begin --> and <!-- values:end -->
//
// from values.yaml (each key's comment is its description) and the schema
// (its type, allowed values) (valuesTable). A key without a description is
// an error: every value is documented where it is set.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Library is the name of the library chart holding the shared templates.
const Library = "cozyplane-lib"

const (
	beginMarker = "<!-- values:begin -->"
	endMarker   = "<!-- values:end -->"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: charts CHARTS_DIR")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

type chartMeta struct {
	Name         string `yaml:"name"`
	Version      string `yaml:"version"`
	Type         string `yaml:"type"`
	Dependencies []struct {
		Name       string `yaml:"name"`
		Version    string `yaml:"version"`
		Repository string `yaml:"repository"`
	} `yaml:"dependencies"`
}

func readChart(dir string) (chartMeta, error) {
	var m chartMeta
	b, err := os.ReadFile(filepath.Join(dir, "Chart.yaml"))
	if err != nil {
		return m, err
	}
	if err := yaml.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("%s/Chart.yaml: %w", dir, err)
	}
	return m, nil
}

func run(root string) error {
	lib, err := readChart(filepath.Join(root, Library))
	if err != nil {
		return err
	}
	archive, err := packageChart(filepath.Join(root, Library), Library)
	if err != nil {
		return err
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		dir := filepath.Join(root, e.Name())
		if !e.IsDir() || e.Name() == Library {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, "Chart.yaml")); err != nil {
			continue
		}
		if err := generateChart(root, dir, lib, archive); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", e.Name(), err))
		}
	}
	return errors.Join(errs...)
}

func generateChart(root, dir string, lib chartMeta, archive []byte) error {
	meta, err := readChart(dir)
	if err != nil {
		return err
	}
	values, err := os.ReadFile(filepath.Join(dir, "values.yaml"))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(values, &doc); err != nil {
		return fmt.Errorf("values.yaml: %w", err)
	}
	for _, d := range meta.Dependencies {
		if d.Name != Library {
			continue
		}
		if d.Version != lib.Version || d.Repository != "file://../"+Library {
			return fmt.Errorf("Chart.yaml: the %s dependency must be version %s from file://../%s", Library, lib.Version, Library)
		}
		if err := vendorLibrary(dir, lib.Version, archive); err != nil {
			return err
		}
		schema, err := composeSchema(filepath.Join(root, Library, "schema"), hasTopKey(&doc, "shards"), filepath.Join(dir, OwnSchema))
		if err != nil {
			return err
		}
		if err := writeIfChanged(filepath.Join(dir, "values.schema.json"), schema); err != nil {
			return err
		}
	}
	if meta.Name == "policies" {
		var own map[string]any
		if b, err := os.ReadFile(filepath.Join(dir, OwnSchema)); err == nil {
			var add struct {
				Properties map[string]any `json:"properties"`
			}
			if err := json.Unmarshal(b, &add); err != nil {
				return fmt.Errorf("%s: %w", OwnSchema, err)
			}
			own = add.Properties
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		schema, err := switchesSchema(&doc, "Values of the policies chart: one switch per admission policy, and the identities they trust", own)
		if err != nil {
			return err
		}
		if err := writeIfChanged(filepath.Join(dir, "values.schema.json"), schema); err != nil {
			return err
		}
	}
	schemaBytes, err := os.ReadFile(filepath.Join(dir, "values.schema.json"))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return errors.New("values.schema.json is missing: every chart validates its values")
		}
		return err
	}
	var schema map[string]any
	if err := json.Unmarshal(schemaBytes, &schema); err != nil {
		return fmt.Errorf("values.schema.json: %w", err)
	}
	table, err := valuesTable(&doc, schema)
	if err != nil {
		return fmt.Errorf("values.yaml: %w", err)
	}
	readmePath := filepath.Join(dir, "README.md")
	readme, err := os.ReadFile(readmePath)
	if err != nil {
		return fmt.Errorf("README.md: %w", err)
	}
	out, err := replaceBlock(string(readme), table)
	if err != nil {
		return fmt.Errorf("README.md: %w", err)
	}
	return writeIfChanged(readmePath, []byte(out))
}

func writeIfChanged(p string, b []byte) error {
	if old, err := os.ReadFile(p); err == nil && bytes.Equal(old, b) {
		return nil
	}
	return os.WriteFile(p, b, 0o644)
}

// vendorLibrary writes the packaged library into dir/charts and removes other
// versions of it there.
func vendorLibrary(dir, version string, archive []byte) error {
	charts := filepath.Join(dir, "charts")
	if err := os.MkdirAll(charts, 0o755); err != nil {
		return err
	}
	name := fmt.Sprintf("%s-%s.tgz", Library, version)
	old, _ := filepath.Glob(filepath.Join(charts, Library+"-*.tgz"))
	for _, f := range old {
		if filepath.Base(f) != name {
			if err := os.Remove(f); err != nil {
				return err
			}
		}
	}
	return writeIfChanged(filepath.Join(charts, name), archive)
}

// packageChart archives Chart.yaml and templates/ of the chart in dir under
// the folder name, as `helm package` lays it out, reproducibly: entries
// sorted, times, owners and modes fixed, no gzip name or time.
func packageChart(dir, name string) ([]byte, error) {
	var files []string
	if _, err := os.Stat(filepath.Join(dir, "Chart.yaml")); err != nil {
		return nil, err
	}
	files = append(files, "Chart.yaml")
	err := filepath.WalkDir(filepath.Join(dir, "templates"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		files = append(files, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var buf bytes.Buffer
	gz, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(gz)
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f)))
		if err != nil {
			return nil, err
		}
		hdr := &tar.Header{
			Name: path.Join(name, f), Mode: 0o644, Size: int64(len(b)),
			ModTime: time.Unix(0, 0).UTC(), Typeflag: tar.TypeReg, Format: tar.FormatPAX,
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(b); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// OwnSchema is where a controller chart keeps the schema of the values only
// it has ({"properties": ..., "required": [...]}), relative to the chart.
const OwnSchema = "schema/own.json"

// composeSchema returns the controller schema, with the sharding values when
// sharded, and the properties of the file own when it exists.
func composeSchema(dir string, sharded bool, own string) ([]byte, error) {
	var base map[string]any
	if err := readJSON(filepath.Join(dir, "controller.values.schema.json"), &base); err != nil {
		return nil, err
	}
	add := func(p string) error {
		var add struct {
			Properties map[string]any `json:"properties"`
			Required   []any          `json:"required"`
		}
		if err := readJSON(p, &add); err != nil {
			return err
		}
		props := base["properties"].(map[string]any)
		for k, v := range add.Properties {
			if _, ok := props[k]; ok {
				return fmt.Errorf("%s: %s is already a value of every controller chart", p, k)
			}
			props[k] = v
		}
		base["required"] = append(base["required"].([]any), add.Required...)
		return nil
	}
	if sharded {
		if err := add(filepath.Join(dir, "shards.values.schema.json")); err != nil {
			return nil, err
		}
	}
	if _, err := os.Stat(own); err == nil {
		if err := add(own); err != nil {
			return nil, err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	b, err := json.MarshalIndent(base, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

func readJSON(p string, v any) error {
	b, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	return nil
}

func hasTopKey(doc *yaml.Node, key string) bool {
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return false
	}
	m := doc.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return true
		}
	}
	return false
}

func replaceBlock(readme, table string) (string, error) {
	b := strings.Index(readme, beginMarker)
	e := strings.Index(readme, endMarker)
	if b < 0 || e < b {
		return "", fmt.Errorf("add the markers %s and %s where the values table goes", beginMarker, endMarker)
	}
	return readme[:b+len(beginMarker)] + "\n" + table + readme[e:], nil
}

// switchesSchema is the schema of a chart whose values are top-level
// booleans: each key of values.yaml, and nothing else. A key that is not a
// boolean takes its schema from own (the chart's schema/own.json
// properties); one own does not describe is an error.
func switchesSchema(doc *yaml.Node, title string, own map[string]any) ([]byte, error) {
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("values.yaml: the top level is not a mapping")
	}
	m := doc.Content[0]
	props := map[string]any{
		"global":  map[string]any{"type": "object", "description": "Helm's global values (passed to every subchart of the umbrella chart)."},
		"enabled": map[string]any{"type": "boolean", "description": "The umbrella chart's switch for this component."},
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if v.Tag != "!!bool" {
			p, ok := own[k.Value].(map[string]any)
			if !ok {
				return nil, fmt.Errorf("values.yaml: %s is not a boolean switch, and %s does not describe it", k.Value, OwnSchema)
			}
			props[k.Value] = p
			continue
		}
		props[k.Value] = map[string]any{"type": "boolean", "description": comment(k)}
	}
	b, err := json.MarshalIndent(map[string]any{
		"$schema": "https://json-schema.org/draft-07/schema#", "title": title, "type": "object",
		"additionalProperties": false, "properties": props,
	}, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
