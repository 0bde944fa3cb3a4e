package profiling_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"go.uber.org/goleak"

	"github.com/mcptrace/mcptrace/internal/demo"
	"github.com/mcptrace/mcptrace/internal/profiling"
	"github.com/mcptrace/mcptrace/spans"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// load runs the live workload with no pause for d: a CPU load through the
// pool, with handshakes (cold, ttl, evicted ... misses) and calls.
func load(t *testing.T, d time.Duration) {
	t.Helper()
	if _, err := demo.RunLive(context.Background(), demo.LiveConfig{Duration: d, Pause: -1}); err != nil {
		t.Fatalf("RunLive: %v", err)
	}
}

// parse reads a pprof file.
func parse(t *testing.T, path string) *profile.Profile {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	return p
}

func TestProfileDirCPUProfileSplitsHandshakeFromCall(t *testing.T) {
	// The CPU profile samples 100 times a second: a second of load gives
	// dozens of samples, dials among them. On a busy machine one profile
	// may catch no handshake: profile again, up to a bound, until both
	// phases have been seen.
	dir := filepath.Join(t.TempDir(), "profiles")
	phases := map[string]int64{}
	keyed := 0
	var p *profiling.Profiler
	for attempt := 0; attempt < 8 && (phases[spans.PhaseHandshake] == 0 || phases[spans.PhaseCall] == 0); attempt++ {
		var err error
		p, err = profiling.Start(profiling.Config{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		load(t, time.Second)
		if err := p.Stop(); err != nil {
			t.Fatalf("Stop: %v", err)
		}
		cpu := parse(t, filepath.Join(dir, profiling.CPUFile))
		for _, s := range cpu.Sample {
			for _, v := range s.Label[spans.PprofLabelPhase] {
				phases[v] += s.Value[0]
			}
			if len(s.Label[spans.PprofLabelKey]) > 0 {
				keyed++
			}
		}
	}
	if err := p.Stop(); err != nil {
		t.Errorf("second Stop: %v, want the first's nil", err)
	}
	for _, phase := range []string{spans.PhaseHandshake, spans.PhaseCall} {
		if phases[phase] == 0 {
			t.Errorf("no CPU sample labelled %s=%s (phases seen: %v)", spans.PprofLabelPhase, phase, phases)
		}
	}
	if keyed == 0 {
		t.Errorf("no CPU sample carries the %s label", spans.PprofLabelKey)
	}

	heap := parse(t, filepath.Join(dir, profiling.HeapFile))
	var types []string
	for _, st := range heap.SampleType {
		types = append(types, st.Type)
	}
	if got := strings.Join(types, ","); got != "alloc_objects,alloc_space,inuse_objects,inuse_space" {
		t.Errorf("heap profile sample types = %s, want the four memory profiles", got)
	}
	parse(t, filepath.Join(dir, profiling.GoroutineFile))
	if got := p.Files(); len(got) != 3 || got[0] != filepath.Join(dir, profiling.CPUFile) {
		t.Errorf("Files() = %v", got)
	}
}

// ingest is a stand-in Pyroscope server on 127.0.0.1 recording uploads.
type ingest struct {
	mu       sync.Mutex
	names    []string
	auth     []string
	profiles []*profile.Profile
	errs     []error
	srv      *http.Server
	done     chan struct{}
	url      string
}

// uploadedProfile parses the pprof "profile" part of an ingest upload.
func uploadedProfile(r *http.Request) (*profile.Profile, error) {
	if err := r.ParseMultipartForm(32 << 20); err != nil {
		return nil, fmt.Errorf("upload is not multipart: %w", err)
	}
	f, _, err := r.FormFile("profile")
	if err != nil {
		return nil, fmt.Errorf("upload has no profile part: %w", err)
	}
	defer f.Close()
	return profile.Parse(f)
}

func startIngest(t *testing.T) *ingest {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	in := &ingest{done: make(chan struct{}), url: "http://" + ln.Addr().String()}
	in.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer io.Copy(io.Discard, r.Body)
		if r.URL.Path != "/ingest" {
			http.NotFound(w, r)
			return
		}
		prof, err := uploadedProfile(r)
		in.mu.Lock()
		defer in.mu.Unlock()
		in.names = append(in.names, r.URL.Query().Get("name"))
		in.auth = append(in.auth, r.Header.Get("Authorization"))
		if err != nil {
			in.errs = append(in.errs, err)
			return
		}
		in.profiles = append(in.profiles, prof)
	})}
	go func() {
		defer close(in.done)
		_ = in.srv.Serve(ln)
	}()
	t.Cleanup(func() {
		in.srv.Close()
		<-in.done
	})
	return in
}

func TestPyroscopeURLUploadsProfilesWithBasicAuthFromTheURL(t *testing.T) {
	in := startIngest(t)
	u := strings.Replace(in.url, "http://", "http://alice:s3cret@", 1)
	p, err := profiling.Start(profiling.Config{PyroscopeURL: u, ApplicationName: "mcptrace-test", Tags: map[string]string{"env": "test"}})
	if err != nil {
		t.Fatal(err)
	}
	load(t, time.Second)
	if err := p.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if len(in.names) == 0 {
		t.Fatal("no profile reached the Pyroscope server after Stop")
	}
	for _, err := range in.errs {
		t.Errorf("bad upload: %v", err)
	}
	for i, name := range in.names {
		if !strings.HasPrefix(name, "mcptrace-test{") || !strings.Contains(name, "env=test") {
			t.Errorf("upload name = %q, want mcptrace-test{...env=test...}", name)
		}
		// "alice:s3cret" in base64.
		if in.auth[i] != "Basic YWxpY2U6czNjcmV0" {
			t.Errorf("upload Authorization = %q, want basic auth from the URL", in.auth[i])
		}
	}
	phases := map[string]bool{}
	cpu := false
	for _, prof := range in.profiles {
		if len(prof.SampleType) == 0 || prof.SampleType[0].Type != "samples" {
			continue
		}
		cpu = true
		for _, s := range prof.Sample {
			for _, v := range s.Label[spans.PprofLabelPhase] {
				phases[v] = true
			}
		}
	}
	if !cpu {
		t.Fatalf("no CPU profile among %d uploads", len(in.profiles))
	}
	if len(phases) == 0 {
		t.Errorf("the uploaded CPU profiles carry no %s label", spans.PprofLabelPhase)
	}
}

func TestStartRejectsBadConfigurationWithoutLeakingSecrets(t *testing.T) {
	cases := map[string]profiling.Config{
		"both destinations": {PyroscopeURL: "http://127.0.0.1:4040", Dir: t.TempDir()},
		"not http":          {PyroscopeURL: "ftp://user:hunter2@example.com"},
		"no host":           {PyroscopeURL: "http://"},
	}
	for name, cfg := range cases {
		t.Run(name, func(t *testing.T) {
			p, err := profiling.Start(cfg)
			if err == nil {
				p.Stop()
				t.Fatal("Start succeeded, want an error")
			}
			if !errors.Is(err, profiling.ErrInvalidConfig) {
				t.Errorf("error %v does not wrap ErrInvalidConfig", err)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("error %q leaks the password", err)
			}
		})
	}
}

func TestZeroConfigProfilesNothing(t *testing.T) {
	p, err := profiling.Start(profiling.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Stop(); err != nil || p.Files() != nil {
		t.Errorf("Stop = %v, Files = %v; want nil, nil", err, p.Files())
	}
}
