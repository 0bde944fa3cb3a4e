package ingest

import (
	"bytes"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// pdataOnlyRecord is a protobuf request that only pdata reads (its span's
// kind is one OTLP does not define), of one span with n 6-byte int
// attributes: pdata holds some 15 times its size to decode it.
func pdataOnlyRecord(n int) []byte {
	attrs := bytes.Repeat(pb(nil).bytes(fieldSpanAttributes, pb(nil).bytes(2, pb(nil).varint(3, 1))), n)
	return request(baseResource, baseSpan(pb(nil).varint(fieldSpanKind, maxSpanKind+1), attrs))
}

// TestRecordsForPdataAreChargedWhatTheyGrowTo pins the memory budget on
// the records the projection decoder leaves to pdata, which builds every
// attribute at many times its size: a record whose decoding pdata would
// take exactly the share of the budget the records in flight may hold is
// read, one whose decoding takes one byte more is skipped with a warning
// naming its size and --max-memory, and the records around it are read.
func TestRecordsForPdataAreChargedWhatTheyGrowTo(t *testing.T) {
	rec := pdataOnlyRecord(40_000)
	if _, ok := decodeFastProto(rec, newKeepSet(testKeep)); ok {
		t.Fatal("the projection decoder reads the record: the test pins nothing")
	}
	var u ptrace.ProtoUnmarshaler
	if _, err := u.UnmarshalTraces(rec); err != nil {
		t.Fatal(err)
	}
	need := pdataBytes(rec)
	if need < 3<<20 || need < 10*int64(len(rec)) {
		t.Fatalf("pdataBytes = %d for a record of %d bytes: want at least 3 MiB, ten times its size", need, len(rec))
	}
	okRec := request(baseResource, baseSpan())
	data := append(append(framed(okRec), framed(rec)...), framed(okRec)...)
	for _, tc := range []struct {
		name   string
		budget int64 // its share in flight is a quarter of it
		skips  bool
	}{
		{"a share of exactly what it takes", 4 * need, false},
		{"a share one byte short", 4 * (need - 1), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := (ReadOptions{MaxMemory: tc.budget}).budget().inflightShare(); got != tc.budget/4 {
				t.Fatalf("share %d, want a quarter of the budget %d", got, tc.budget)
			}
			for _, workers := range []int{1, 4} {
				inputs, spans, err := readHostile(t, data, ReadOptions{MaxMemory: tc.budget, Workers: workers}, true)
				if err != nil {
					t.Fatalf("%d workers: %v", workers, err)
				}
				warned := len(inputs) == 1 && len(inputs[0].Warnings) == 1 && strings.Contains(inputs[0].Warnings[0], "only the full decoder (pdata) reads") &&
					strings.Contains(inputs[0].Warnings[0], "--max-memory")
				if want := 3 - btoi(tc.skips); spans != want || warned != tc.skips {
					t.Errorf("%d workers: %d spans read, warnings %q; want %d, warned %v", workers, spans, inputs[0].Warnings, want, tc.skips)
				}
			}
		})
	}
}

// btoi is 1 for true.
func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestTheConsumerNeverWaitsForPdataRoom pins the share's rule for the
// records pdata decodes: a worker waits for room as for any charge, the
// goroutine that feeds the sink (which alone gives room back) charges at
// once however full the share is, and once a record was charged the
// consumer decodes no more (decodersWait).
func TestTheConsumerNeverWaitsForPdataRoom(t *testing.T) {
	g := newInflight(10)
	stop := make(chan struct{})
	g.stop = stop
	g.serve(1)
	if g.decodersWait() {
		t.Fatal("a fresh share makes the decoders wait")
	}
	if n, err := g.chargePdata(2, 8, true); n != 8 || err != nil {
		t.Fatalf("the consumer's charge = %d, %v; want 8 at once", n, err)
	}
	if n, err := g.chargePdata(3, 8, true); n != 8 || err != nil {
		t.Fatalf("the consumer's charge on a full share = %d, %v; want 8 at once", n, err)
	}
	if !g.decodersWait() {
		t.Error("after a record charged for pdata the consumer still decodes")
	}
	done := make(chan error, 1)
	go func() {
		_, err := g.chargePdata(4, 4, false)
		done <- err
	}()
	close(stop)
	if err := <-done; err != errReadStopped {
		t.Errorf("a worker's charge on a full share = %v, want it to wait until the read stops", err)
	}
}
