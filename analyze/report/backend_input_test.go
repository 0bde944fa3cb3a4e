package report

import (
	"strings"
	"testing"
	"time"
)

// TestABackendInputSaysWhatWasReadAndWhatIsMissing pins the one line every
// report for people draws for a backend's query: where, which services
// and window, what was fetched, and each reason the input is partial.
func TestABackendInputSaysWhatWasReadAndWhatIsMissing(t *testing.T) {
	start, end := time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC), time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)
	base := BackendInput{Backend: "jaeger", URL: "http://127.0.0.1:16686", Services: []string{"gw", "api"},
		Window: Window{Start: &start, End: &end}, Pages: 1, Traces: 1, Spans: 2}
	tests := []struct {
		name   string
		edit   func(b *BackendInput)
		has    []string
		hasNot []string
	}{
		{"whole", func(*BackendInput) {}, []string{"read from jaeger http://127.0.0.1:16686", "services gw, api", "2026-12-03T00:00:00Z .. 2026-12-04T00:00:00Z", "1 page, 1 trace, 2 spans"}, []string{"CUT", "still receiving", "operation"}},
		{"a filter", func(b *BackendInput) { b.Filter = "operation call" }, []string{", operation call;"}, nil},
		{"cut", func(b *BackendInput) { b.Cut = true }, []string{"CUT"}, nil},
		{"settling", func(b *BackendInput) { b.SettlingTraces = 3 }, []string{"3 traces still receiving spans, not judged"}, []string{"CUT"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := base
			tc.edit(&b)
			got := b.Text()
			for _, s := range tc.has {
				if !strings.Contains(got, s) {
					t.Errorf("%q lacks %q", got, s)
				}
			}
			for _, s := range tc.hasNot {
				if strings.Contains(got, s) {
					t.Errorf("%q has %q", got, s)
				}
			}
		})
	}
}
