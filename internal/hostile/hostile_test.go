package hostile

import (
	"bytes"
	"crypto/sha256"
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/spans"
)

// Every shape writes the same bytes for the same size, of about the size
// asked for bytes shapes and one span or line per unit otherwise.
func TestShapesAreDeterministicAndSized(t *testing.T) {
	for _, s := range Shapes() {
		t.Run(s.Name, func(t *testing.T) {
			n := int64(1000)
			if s.Unit == "bytes" {
				n = 100_000
			}
			var a, b bytes.Buffer
			if err := s.Write(&a, n); err != nil {
				t.Fatal(err)
			}
			if err := s.Write(&b, n); err != nil {
				t.Fatal(err)
			}
			if sha256.Sum256(a.Bytes()) != sha256.Sum256(b.Bytes()) {
				t.Fatal("two runs wrote different bytes")
			}
			switch s.Unit {
			case "bytes":
				if got := int64(a.Len()); got < n-8 || got > n+4096 {
					t.Errorf("%d bytes for %d", got, n)
				}
			case "spans":
				if got := strings.Count(a.String(), `"spanId":"`) + strings.Count(a.String(), `"operationName":"`); got != int(n) {
					t.Errorf("%d spans for %d", got, n)
				}
			case "lines":
				if got := bytes.Count(a.Bytes(), []byte("\n")); got != int(n) {
					t.Errorf("%d lines for %d", got, n)
				}
			case "levels":
				if got := bytes.Count(a.Bytes(), []byte(`{"arrayValue":`)); got != int(n) {
					t.Errorf("%d levels for %d", got, n)
				}
			case "executions", "scopes":
				got := bytes.Count(a.Bytes(), []byte(`"`+spans.SpanInvoke+`"`))
				if s.Name == "wide-cell" {
					got-- // the wide scope's own
				}
				if got != int(n) {
					t.Errorf("%d executions for %d", got, n)
				}
			case "traces":
				if got := bytes.Count(a.Bytes(), []byte(`"msg":"trace not found"`)); got != int(n)-1 {
					t.Errorf("%d traces not loaded for %d asked", got, n)
				}
			case "record-spans":
				if got := bytes.Count(a.Bytes(), []byte{0x28, 0xb5, 0x2f, 0xfd}); got != 8 {
					t.Errorf("%d zstd frames, want 8", got)
				}
			default:
				t.Errorf("unknown unit %q", s.Unit)
			}
			var z bytes.Buffer
			if err := WriteShape(&z, s, n); err != nil {
				t.Fatal(err)
			}
			if s.Zstd && z.Len() >= a.Len() {
				t.Errorf("compressed shape: %d bytes compressed, %d raw", z.Len(), a.Len())
			}
		})
	}
	if _, err := ShapeByName("nope"); err == nil {
		t.Error("ShapeByName(nope) succeeded")
	}
}
