package dashboards

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/grafana/grafana-foundation-sdk/go/dashboard"

	"github.com/mcptrace/mcptrace/internal/outfile"
)

// PoolFile is the file name of the "MCP pool" dashboard.
const PoolFile = "mcp-pool.json"

// FleetFile is the file name of the "MCP pool fleet" dashboard.
const FleetFile = "mcp-pool-fleet.json"

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
	pool, err := encode(PoolUID, PoolDashboard)
	if err != nil {
		return nil, err
	}
	fleet, err := encode(FleetUID, FleetDashboard)
	if err != nil {
		return nil, err
	}
	doc, err := readme(pool, fleet)
	if err != nil {
		return nil, fmt.Errorf("describe dashboards: %w", err)
	}
	return []File{{Name: PoolFile, Data: pool}, {Name: FleetFile, Data: fleet}, {Name: ReadmeFile, Data: doc}}, nil
}

// encode builds one dashboard and returns its JSON, indented and ending in
// a newline.
//
//lint:ignore SA1019 file provisioning imports the v1 JSON model; see PoolDashboard.
func encode(uid string, build func() (dashboard.Dashboard, error)) ([]byte, error) {
	d, err := build()
	if err != nil {
		return nil, fmt.Errorf("build dashboard %s: %w", uid, err)
	}
	data, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode dashboard %s: %w", uid, err)
	}
	return append(data, '\n'), nil
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

// GeneratedMarker appears near the top of every file [Generate] and
// [Provisioning] return (in the dashboard's description, a comment at the
// head of README.md and of the provisioning files). [Write] replaces an
// existing file only when it carries the marker: the file is one an earlier
// run wrote, not the user's own.
const GeneratedMarker = "github.com/mcptrace/mcptrace/dashboards"

// markerWindow is how much of an existing file Write reads to find
// GeneratedMarker: generated files carry it in their first lines.
const markerWindow = 64 << 10

// ErrNotGenerated is returned (wrapped, naming every such file) by [Write]
// when a file it would write already exists and was not written by mcptrace:
// no marker, a symbolic link, or a directory. Nothing is written then.
var ErrNotGenerated = errors.New("exists and was not written by mcptrace dashboards")

// WriteStatus says what [Write] did with one file.
type WriteStatus string

// The statuses of a written file.
const (
	// Created: the file did not exist.
	Created WriteStatus = "created"
	// Replaced: an earlier generated file (or, with force, any file or
	// symbolic link) was replaced.
	Replaced WriteStatus = "replaced"
	// Unchanged: the file already held these exact bytes.
	Unchanged WriteStatus = "unchanged"
)

// Written is one file [Write] handled: its path (dir joined with the file's
// name) and what happened to it.
type Written struct {
	Path   string
	Status WriteStatus
}

// Write writes files under dir, creating dir and subdirectories as needed,
// and returns what it did with each, in order.
//
// It never writes outside dir: every path is resolved inside dir with
// [os.Root], so a symbolic link among the output names (a file or a
// subdirectory) is never followed out of it. Without force it refuses, before
// writing anything, when a target exists and is not a file an earlier run
// wrote (see [GeneratedMarker]); the error wraps [ErrNotGenerated] and names
// every such path. With force such files are replaced, a symbolic link
// itself rather than its target. Each file is written to a temporary file
// beside it and renamed into place, so a reader never sees half a file.
func Write(dir string, files []File, force bool) ([]Written, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create output directory %s: %w", dir, err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open output directory %s: %w", dir, err)
	}
	defer root.Close()

	status := make([]WriteStatus, len(files))
	var refused []string
	for i, f := range files {
		st, why := plan(root, f)
		if why != "" && !force {
			refused = append(refused, fmt.Sprintf("%s (%s)", filepath.Join(dir, f.Name), why))
		}
		status[i] = st
	}
	if len(refused) > 0 {
		return nil, fmt.Errorf("refusing to overwrite %s: each %w; move it away or pass --force", strings.Join(refused, ", "), ErrNotGenerated)
	}

	var done []Written
	for i, f := range files {
		path := filepath.Join(dir, f.Name)
		if status[i] != Unchanged {
			if err := writeIn(root, f); err != nil {
				return done, err // naming path
			}
		}
		done = append(done, Written{Path: path, Status: status[i]})
	}
	return done, nil
}

// plan decides what writing f into root does: Created, Unchanged or
// Replaced, and for a target that is not an earlier generated file, why
// (which only --force overrides).
func plan(root *os.Root, f File) (WriteStatus, string) {
	info, err := root.Lstat(f.Name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Created, ""
	case err != nil:
		// A path that escapes the root through a symbolic link directory,
		// or any other error: not a file we wrote.
		return Replaced, err.Error()
	case info.Mode()&fs.ModeSymlink != 0:
		return Replaced, "a symbolic link, not followed"
	case !info.Mode().IsRegular():
		return Replaced, "not a regular file"
	}
	in, err := root.Open(f.Name)
	if err != nil {
		return Replaced, err.Error()
	}
	defer in.Close()
	head, err := io.ReadAll(io.LimitReader(in, max(markerWindow, int64(len(f.Data))+1)))
	if err != nil {
		return Replaced, err.Error()
	}
	if bytes.Equal(head, f.Data) {
		return Unchanged, ""
	}
	if !bytes.Contains(head[:min(len(head), markerWindow)], []byte(GeneratedMarker)) {
		return Replaced, "no " + GeneratedMarker + " marker"
	}
	return Replaced, ""
}

// writeIn writes f into root whole or not at all (internal/outfile): a
// fresh temporary file of a random name, never through a link, renamed
// over the target, so the rename replaces a symbolic link itself, never its
// target, and a failure leaves the previous file as it was.
func writeIn(root *os.Root, f File) error {
	if d := filepath.Dir(f.Name); d != "." {
		if err := root.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("write %s: %w", filepath.Join(root.Name(), f.Name), err)
		}
	}
	out, err := outfile.CreateIn(root, f.Name)
	if err != nil {
		return err
	}
	if _, err := out.Write(f.Data); err != nil {
		out.Abort()
		return err
	}
	return out.Commit()
}
