package ingest

import (
	"fmt"
	"path/filepath"
	"runtime"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// smallFilesDir writes n one-span dumps of the format (protobuf records or
// JSON lines) into a new directory and returns it.
func smallFilesDir(t testing.TB, n int, proto bool) string {
	t.Helper()
	dir := t.TempDir()
	for i := range n {
		if proto {
			writeInputFile(t, dir, fmt.Sprintf("f%05d.pb", i), timeProtoRecordTB(t, i+1))
		} else {
			writeInputFile(t, dir, fmt.Sprintf("f%05d.jsonl", i), []byte(timeOTLPLine(i+1, "1777539654000000000", "1777539654000000001")+"\n"))
		}
	}
	return dir
}

// timeProtoRecordTB is a length-prefixed protobuf record of one span.
func timeProtoRecordTB(t testing.TB, id int) []byte {
	td := ptrace.NewTraces()
	sp := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetTraceID(rtTraceID(1))
	sp.SetSpanID(rtSpanID(uint64(id)))
	sp.SetName("plugin.mcp.invoke")
	sp.SetStartTimestamp(1777539654000000000)
	sp.SetEndTimestamp(1777539654000000001)
	recs := protoRecords(t, td)
	return recs[0]
}

// TestSmallFilesReuseReadBlocks pins that reading a directory of many
// small dumps reuses the read blocks from one file to the next: it
// allocates far less than a 2 MiB block per file (making two fresh blocks
// per file, and zeroing them, took most of such a read). It counts bytes
// allocated, not time.
func TestSmallFilesReuseReadBlocks(t *testing.T) {
	const files = 48
	// An earlier test's abandoned read stops all recycling for the
	// process (read_cancel.go); the blocks it may still write into were
	// let go then, so recycling again here puts none of them in the pool.
	if readsAbandoned.Load() {
		readsAbandoned.Store(false)
		t.Cleanup(abandonRead)
	}
	for _, proto := range []bool{true, false} {
		t.Run(fmt.Sprintf("protobuf=%v", proto), func(t *testing.T) {
			dir := smallFilesDir(t, files, proto)
			sink := &batchSink{}
			read := func() {
				if _, err := Read(t.Context(), []string{dir}, ReadOptions{Keep: testKeep, Strict: true}, sink); err != nil {
					t.Fatal(err)
				}
			}
			read() // warm up what is made once per process
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			read()
			runtime.ReadMemStats(&after)
			per := (after.TotalAlloc - before.TotalAlloc) / files
			t.Logf("%d bytes per file", per)
			if per >= blockBytes/4 {
				t.Errorf("reading %d one-span files allocated %d bytes per file, want under a quarter of a %d-byte block", files, per, blockBytes)
			}
			if sink.spans != 2*files {
				t.Errorf("read %d spans, want %d", sink.spans, 2*files)
			}
		})
	}
}

// BenchmarkReadDirectoryOfSmallFiles reads a directory of one-span
// protobuf dumps: the per-file cost of a read.
func BenchmarkReadDirectoryOfSmallFiles(b *testing.B) {
	dir := smallFilesDir(b, 1000, true)
	paths := []string{filepath.Clean(dir)}
	for b.Loop() {
		if _, err := Read(b.Context(), paths, ReadOptions{Keep: testKeep, Strict: true}, &batchSink{}); err != nil {
			b.Fatal(err)
		}
	}
}
