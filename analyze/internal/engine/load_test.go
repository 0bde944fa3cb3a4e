package engine

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

func TestLoadReportsProgressAndInputs(t *testing.T) {
	paths := []string{tracesDir + "/pooled.otlp.jsonl", tracesDir + "/per-call-dial.otlp.pb"}
	var calls, last int
	idx, inputs, err := load(context.Background(), ingest.Files(paths), LoadOptions{Progress: func(in *Input, spansRead int) {
		calls++
		if spansRead < last {
			t.Errorf("progress went back from %d to %d spans", last, spansRead)
		}
		last = spansRead
	}})
	if err != nil {
		t.Fatal(err)
	}
	if calls == 0 || last != 22+27 {
		t.Errorf("progress: %d calls ending at %d spans, want some ending at 49", calls, last)
	}
	r, err := Analyze(asDump(idx), rulefmt.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if len(inputs) != 2 || len(r.Inputs) != 2 || r.Inputs[1].Format != "otlp-proto" || r.Inputs[0].Spans != 22 || r.Partial {
		t.Errorf("report inputs = %+v (partial %v)", r.Inputs, r.Partial)
	}
}

func TestLoadKeepsWhatADamagedDumpHeld(t *testing.T) {
	data, err := os.ReadFile(tracesDir + "/prod-cold-starts.otlp.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	first := bytes.IndexByte(data, '\n') + 1
	path := filepath.Join(t.TempDir(), "cut.jsonl")
	if err := os.WriteFile(path, data[:first+10], 0o600); err != nil { // one whole line, then 10 bytes
		t.Fatal(err)
	}
	idx, _, err := load(context.Background(), ingest.Files{path}, LoadOptions{})
	if err != nil {
		t.Fatalf("a truncated dump is read up to the damage: %v", err)
	}
	r, err := Analyze(asDump(idx), rulefmt.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Partial || r.Spans == 0 || len(r.Inputs[0].Warnings) == 0 {
		t.Errorf("partial %v spans %d warnings %v: want a partial report of the first line", r.Partial, r.Spans, r.Inputs[0].Warnings)
	}

	_, _, err = load(context.Background(), ingest.Files{path}, LoadOptions{Read: ReadOptions{Strict: true}})
	var re *ReadError
	if !errors.As(err, &re) || re.Path != path {
		t.Errorf("strict Load = %v, want a *ReadError naming %s", err, path)
	}
}

func TestAnalyzeFilesIsLoadThenAnalyze(t *testing.T) {
	r, err := AnalyzeFiles(context.Background(), []string{tracesDir + "/pooled.otlp.jsonl"}, rulefmt.Config{}, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Pool.Hits != 5 || len(r.Inputs) != 1 {
		t.Errorf("hits %d inputs %d, want 5 and 1", r.Pool.Hits, len(r.Inputs))
	}
	if _, err := AnalyzeFiles(context.Background(), []string{t.TempDir() + "/none.jsonl"}, rulefmt.Config{}, ReadOptions{}); err == nil {
		t.Error("a missing file must be an error")
	}
}

// TestProgressIsToldForEveryReaderPath pins that the progress callback
// hears every span read, by Load and by a stream engine's Feed, from the
// projection decoders (OTLP JSON lines, protobuf) and from the formats
// read through pdata (Jaeger, Tempo), which reach the sinks by another
// method.
func TestProgressIsToldForEveryReaderPath(t *testing.T) {
	files := []string{"acquire-on-miss.otlp.jsonl", "acquire-on-miss.otlp.pb", "acquire-on-miss.jaeger.json", "acquire-on-miss.tempo.json"}
	readers := []struct {
		name string
		read func(path string, lo LoadOptions) ([]Input, error)
	}{
		{"Load", func(path string, lo LoadOptions) ([]Input, error) {
			_, inputs, err := Load(context.Background(), []string{path}, lo)
			return inputs, err
		}},
		{"a stream's Feed", func(path string, lo LoadOptions) ([]Input, error) {
			_, inputs, err := AnalyzeStream(context.Background(), ingest.Files{path}, rulefmt.Config{}, lo, EngineOptions{Window: time.Hour})
			return inputs, err
		}},
		{"a speculative Feed", func(path string, lo LoadOptions) ([]Input, error) {
			_, inputs, err := AnalyzeStream(context.Background(), ingest.Files{path}, rulefmt.Config{}, lo, EngineOptions{})
			return inputs, err
		}},
	}
	for _, f := range files {
		for _, rd := range readers {
			t.Run(f+" by "+rd.name, func(t *testing.T) {
				calls, last := 0, 0
				inputs, err := rd.read(tracesDir+"/"+f, LoadOptions{Progress: func(_ *Input, spansRead int) {
					calls++
					if spansRead < last {
						t.Errorf("progress went back from %d to %d spans", last, spansRead)
					}
					last = spansRead
				}})
				if err != nil {
					t.Fatal(err)
				}
				if len(inputs) != 1 || inputs[0].Spans == 0 {
					t.Fatalf("inputs = %+v, want one holding spans", inputs)
				}
				if calls == 0 || last != inputs[0].Spans {
					t.Errorf("progress: %d calls ending at %d spans, want some ending at the %d read", calls, last, inputs[0].Spans)
				}
			})
		}
	}
}
