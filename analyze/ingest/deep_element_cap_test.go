package ingest

import (
	"strings"
	"testing"
)

// TestADeepDocumentElementAtTheValueCapIsRead pins the bounds of a
// document's element nested past encoding/json's 10000 levels, which the
// reader takes apart itself (readDeepElement): an element of exactly the
// value cap is read, its deep value cut with a warning; one byte longer,
// it is skipped and reported, the input partial; the element after it is
// read either way. A document cut off right after such an element, the
// bytes the reader kept ending with the element's, still has the element
// read before the cut is reported.
func TestADeepDocumentElementAtTheValueCapIsRead(t *testing.T) {
	const budget = 16 << 20
	valueCap := ReadOptions{MaxMemory: budget}.budget().recordCap()
	deep := strings.Repeat("[", 10_001) + strings.Repeat("]", 10_001)
	element := func(size int64) string {
		head := `{"scopeSpans":[{"spans":[{` + hostileSpanJSON(1) + `,"pad":"`
		tail := `","x":` + deep + `}]}]}`
		return head + strings.Repeat("p", int(size)-len(head)-len(tail)) + tail
	}
	next := `{"scopeSpans":[{"spans":[{` + hostileSpanJSON(2) + `}]}]}`
	small := int64(64 << 10)
	for _, tc := range []struct {
		name     string
		doc      string
		spans    int
		partial  bool
		skipped  bool     // the deep element is skipped, not cut and read
		warnings []string // a substring of each warning, in order
	}{
		{"exactly the cap", "{\"resourceSpans\":[\n" + element(valueCap) + ",\n" + next + "]}\n", 2, false, false, []string{"cut there"}},
		{"one byte over the cap", "{\"resourceSpans\":[\n" + element(valueCap+1) + ",\n" + next + "]}\n", 1, true, true, []string{"nested at most 100 deep"}},
		{"cut off after the element", "{\"resourceSpans\":[\n" + element(small), 1, true, false, []string{"cut there", "truncated"}},
		{"cut off after the element and a comma", "{\"resourceSpans\":[\n" + element(small) + ",", 1, true, false, []string{"cut there", "truncated"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inputs, spans, err := readHostile(t, []byte(tc.doc), ReadOptions{MaxMemory: budget}, false)
			if err != nil {
				t.Fatal(err)
			}
			in := inputs[0]
			ok := spans == tc.spans && in.Partial == tc.partial && len(in.Warnings) == len(tc.warnings)
			for i := 0; ok && i < len(tc.warnings); i++ {
				ok = strings.Contains(in.Warnings[i], tc.warnings[i])
			}
			if ok && tc.skipped {
				ok = !strings.Contains(in.Warnings[0], "cut there")
			}
			if !ok {
				t.Errorf("%d spans, partial %v, warnings %q; want %d spans, partial %v, warnings saying %q",
					spans, in.Partial, in.Warnings, tc.spans, tc.partial, tc.warnings)
			}
		})
	}
}
