package dashboards

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// PoolFile is the file name of the "MCP pool" dashboard.
const PoolFile = "mcp-pool.json"

// ReadmeFile is the generated description of every panel and its queries.
const ReadmeFile = "README.md"

// ProvisioningDir is the directory, beside the dashboards, that holds the
// example Grafana provisioning files.
const ProvisioningDir = "provisioning"

// File is one generated file: a name relative to the output directory, and
// its content.
type File struct {
	Name string
	Data []byte
}

// Generate builds every dashboard and returns its JSON, indented and ending
// in a newline, then README.md describing each panel and its queries. The
// output depends only on this package and the vocabulary in spans: two runs
// give identical bytes.
func Generate() ([]File, error) {
	d, err := PoolDashboard()
	if err != nil {
		return nil, fmt.Errorf("build dashboard %s: %w", PoolUID, err)
	}
	data, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode dashboard %s: %w", PoolUID, err)
	}
	data = append(data, '\n')
	doc, err := readme(data)
	if err != nil {
		return nil, fmt.Errorf("describe dashboard %s: %w", PoolUID, err)
	}
	return []File{{Name: PoolFile, Data: data}, {Name: ReadmeFile, Data: doc}}, nil
}

//go:embed provisioning
var provisioning embed.FS

// Provisioning returns the example Grafana provisioning files: a datasource
// file declaring Prometheus, Tempo and Pyroscope, and a dashboard provider
// loading the JSON from /var/lib/grafana/dashboards/mcptrace. Names are
// relative to the output directory (provisioning/...).
func Provisioning() ([]File, error) {
	var files []File
	err := fs.WalkDir(provisioning, ProvisioningDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := provisioning.ReadFile(path)
		if err != nil {
			return err
		}
		files = append(files, File{Name: filepath.FromSlash(path), Data: data})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read embedded provisioning files: %w", err)
	}
	return files, nil
}

// Write writes files under dir, creating dir and subdirectories as needed,
// and returns the paths written. Existing files are replaced.
func Write(dir string, files []File) ([]string, error) {
	var paths []string
	for _, f := range files {
		path := filepath.Join(dir, f.Name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return paths, fmt.Errorf("create directory for %s: %w", path, err)
		}
		if err := os.WriteFile(path, f.Data, 0o644); err != nil {
			return paths, fmt.Errorf("write %s: %w", path, err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}
