// Package profiling profiles mcptrace's long-running commands, so CPU and
// memory cost can be split by the pool's pprof labels (the key hash and the
// phase, handshake or call): continuously towards a Pyroscope server with
// the Pyroscope Go SDK, or into local pprof files when no server is at hand.
//
// It lives under internal because it is CLI wiring (flags --pyroscope-url
// and --profile-dir), not an API of the toolkit.
package profiling

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"strings"
	"sync"
	"time"

	"github.com/grafana/pyroscope-go"
	"github.com/mcptrace/mcptrace/internal/outfile"
)

// Names of the files written in Config.Dir.
const (
	// CPUFile is the CPU profile of the whole run.
	CPUFile = "cpu.pprof"
	// HeapFile is the heap profile taken at Stop: in-use and allocated
	// objects and bytes, the four memory profiles Pyroscope collects.
	HeapFile = "heap.pprof"
	// GoroutineFile lists the goroutines alive at Stop.
	GoroutineFile = "goroutine.pprof"
)

// uploadTimeout bounds one profile upload to Pyroscope.
const uploadTimeout = 10 * time.Second

// ErrInvalidConfig marks configuration errors (both destinations, a URL that
// is not http(s)); the CLI maps it to a usage error.
var ErrInvalidConfig = errors.New("invalid profiling configuration")

// Config says where profiles go. The zero value profiles nothing.
type Config struct {
	// PyroscopeURL is the Pyroscope server to push to, e.g.
	// http://localhost:4040. Credentials in the URL (http://user:pass@host)
	// are sent as HTTP basic auth and never logged. Empty: no push.
	PyroscopeURL string
	// Dir receives CPUFile, HeapFile and GoroutineFile; it is created if
	// missing. Empty: no files. Dir and PyroscopeURL exclude each other: Go
	// has one CPU profiler per process.
	Dir string
	// ApplicationName is the Pyroscope application (its service_name).
	// Empty: "mcptrace".
	ApplicationName string
	// Tags are added to every Pyroscope profile, e.g. a version.
	Tags map[string]string
	// Logger receives the Pyroscope SDK's errors (failed uploads). Nil:
	// discard.
	Logger *slog.Logger
}

// Profiler is a running profiling session, started by [Start]; call Stop
// exactly when the profiled work is over.
type Profiler struct {
	cfg     Config
	pyro    *pyroscope.Profiler
	stopCPU func() error // nil: no CPU profile into Config.Dir

	stopOnce sync.Once
	stopErr  error
}

// Start validates cfg and starts profiling. With Config.Dir it starts the
// CPU profile into Dir/cpu.pprof at once; with Config.PyroscopeURL it starts
// the Pyroscope SDK (CPU, allocations and in-use memory, uploaded every 15
// seconds and at Stop). With neither it returns a Profiler that does
// nothing. Errors name the setting at fault and never contain credentials.
func Start(cfg Config) (*Profiler, error) {
	p := &Profiler{cfg: cfg}
	if cfg.PyroscopeURL != "" && cfg.Dir != "" {
		return nil, fmt.Errorf("%w: a Pyroscope URL and a profile directory exclude each other (one CPU profiler per process): choose one", ErrInvalidConfig)
	}
	if cfg.ApplicationName == "" {
		cfg.ApplicationName = "mcptrace"
		p.cfg.ApplicationName = cfg.ApplicationName
	}
	switch {
	case cfg.Dir != "":
		if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
			return nil, fmt.Errorf("create profile directory: %w", err)
		}
		stop, err := StartCPU(filepath.Join(cfg.Dir, CPUFile))
		if err != nil {
			return nil, err
		}
		p.stopCPU = stop
	case cfg.PyroscopeURL != "":
		pc, err := pyroscopeConfig(cfg)
		if err != nil {
			return nil, err
		}
		prof, err := pyroscope.Start(pc)
		if err != nil {
			return nil, fmt.Errorf("start Pyroscope profiler for %s: %w", redactURL(cfg.PyroscopeURL), err)
		}
		p.pyro = prof
	}
	return p, nil
}

// pyroscopeConfig turns cfg into the SDK's configuration, moving URL
// credentials into basic auth.
func pyroscopeConfig(cfg Config) (pyroscope.Config, error) {
	u, err := url.Parse(cfg.PyroscopeURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return pyroscope.Config{}, fmt.Errorf("%w: Pyroscope URL %q: expected http(s)://host[:port]", ErrInvalidConfig, redactURL(cfg.PyroscopeURL))
	}
	pc := pyroscope.Config{
		ApplicationName: cfg.ApplicationName,
		Tags:            cfg.Tags,
		Logger:          slogAdapter{logger(cfg.Logger)},
		// Bounds each upload, and so Stop's final flush, when the server
		// is unreachable (the SDK's own default is 30 seconds).
		HTTPClient: &http.Client{Timeout: uploadTimeout},
	}
	if u.User != nil {
		pc.BasicAuthUser = u.User.Username()
		pc.BasicAuthPassword, _ = u.User.Password()
		u.User = nil
	}
	pc.ServerAddress = strings.TrimSuffix(u.String(), "/")
	return pc, nil
}

// redactURL hides the password of a URL, for errors; a URL that does not
// parse is replaced whole, since it may hold anything.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

func logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}

// Stop ends the session: it stops the CPU profile and writes the heap and
// goroutine profiles into Config.Dir, or uploads what the Pyroscope SDK has
// not sent yet (waiting up to 10 seconds per upload) and stops it. Stop is idempotent: later calls return
// the first call's result.
func (p *Profiler) Stop() error {
	p.stopOnce.Do(func() {
		if p.pyro != nil {
			// Stop alone may drop the last upload still queued: flush
			// and wait for it first.
			p.pyro.Flush(true)
			if err := p.pyro.Stop(); err != nil {
				p.stopErr = fmt.Errorf("stop Pyroscope profiler: %w", err)
			}
		}
		if p.stopCPU != nil {
			p.stopErr = errors.Join(p.stopCPU(), WriteHeap(filepath.Join(p.cfg.Dir, HeapFile)),
				writeProfile(filepath.Join(p.cfg.Dir, GoroutineFile), "goroutine"))
		}
	})
	return p.stopErr
}

// Files lists the profile files Stop writes (none without Config.Dir).
func (p *Profiler) Files() []string {
	if p.cfg.Dir == "" {
		return nil
	}
	return []string{filepath.Join(p.cfg.Dir, CPUFile), filepath.Join(p.cfg.Dir, HeapFile), filepath.Join(p.cfg.Dir, GoroutineFile)}
}

// StartCPU starts the process's CPU profile into the file at path and
// returns the function that stops it and puts the file in place. The file
// is written through internal/outfile, as every output of mcptrace: whole
// or not at all, never through a link. The live demo's Config.Dir and the
// commands' --cpuprofile both profile through it.
func StartCPU(path string) (stop func() error, err error) {
	return streamInto(path, "CPU profile", pprof.StartCPUProfile, pprof.StopCPUProfile)
}

// StartTrace starts an execution trace of the process (runtime/trace)
// into path, written whole through internal/outfile when the returned
// stop is called, or not at all. A trace shows what a CPU profile cannot:
// when a goroutine waited, for what, and how long the cores were idle
// meanwhile (internal/benchtools/idletrace reads it by the analyzer's
// phases). A run of a million spans writes about 200 KB of it.
func StartTrace(path string) (stop func() error, err error) {
	return streamInto(path, "execution trace", trace.Start, trace.Stop)
}

// streamInto starts what (a profile or a trace the runtime streams while
// the process runs) into the file at path, through internal/outfile, and
// returns the function that ends it and puts the file in place.
func streamInto(path, what string, start func(io.Writer) error, end func()) (stop func() error, err error) {
	f, err := outfile.Create(path)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", what, err)
	}
	if err := start(f); err != nil {
		f.Abort()
		return nil, fmt.Errorf("start %s: %w", what, err)
	}
	return func() error {
		end()
		return f.Commit()
	}, nil
}

// WriteHeap writes the heap profile to path, after a GC: the profile
// shows objects as of the last collection, so collecting first makes it
// current.
func WriteHeap(path string) error {
	runtime.GC()
	return writeProfile(path, "heap")
}

// writeProfile writes the named runtime profile in the compressed protobuf
// format pprof and Pyroscope read, through internal/outfile.
func writeProfile(path, name string) error {
	f, err := outfile.Create(path)
	if err != nil {
		return fmt.Errorf("create %s profile: %w", name, err)
	}
	if err := pprof.Lookup(name).WriteTo(f, 0); err != nil {
		f.Abort()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Commit()
}

// slogAdapter gives the Pyroscope SDK's logger interface an slog backend.
type slogAdapter struct{ l *slog.Logger }

func (a slogAdapter) Infof(format string, args ...any) {
	a.l.Debug("pyroscope: " + fmt.Sprintf(format, args...))
}

func (a slogAdapter) Debugf(format string, args ...any) {
	a.l.Debug("pyroscope: " + fmt.Sprintf(format, args...))
}

func (a slogAdapter) Errorf(format string, args ...any) {
	a.l.Warn("pyroscope: " + fmt.Sprintf(format, args...))
}
