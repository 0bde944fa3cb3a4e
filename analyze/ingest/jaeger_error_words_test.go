package ingest

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// TestJaegerTypeErrorsNameTheFieldInJSONTerms pins how a Jaeger trace
// with a value of the wrong JSON type is described: the field's path in
// the trace object and what it should hold in JSON's terms, never a Go
// type of the reader (int64, ingest.jaegerInt, []ingest.jaegerRef).
func TestJaegerTypeErrorsNameTheFieldInJSONTerms(t *testing.T) {
	goNames := regexp.MustCompile(`ingest\.|int64|\[\]|jaeger[A-Z]`)
	for _, tc := range []struct{ field, want string }{
		{`"startTime":"abc"`, "field spans.startTime holds a JSON string, expected a whole number (a JSON number or a string of digits)"},
		{`"duration":{}`, "field spans.duration holds a JSON object, expected a whole number"},
		{`"operationName":5`, "field spans.operationName holds a JSON number, expected a string"},
		{`"references":{}`, "field spans.references holds a JSON object, expected an array"},
		{`"tags":5`, "field spans.tags holds a JSON number, expected an array"},
	} {
		t.Run(tc.field, func(t *testing.T) {
			doc := fmt.Sprintf(`{"data":[{"traceID":"01","spans":[{"traceID":"01","spanID":"02","operationName":"x","startTime":5,"duration":5,"references":[],"tags":[],"processID":"p1",%s}],"processes":{"p1":{"serviceName":"s","tags":[]}}}]}`, tc.field)
			_, err := ReadFrom(context.Background(), "j.json", strings.NewReader(doc), ReadOptions{}, SinkFunc(func(*Input, ptrace.Traces) error { return nil }))
			if err == nil || !strings.Contains(err.Error(), tc.want) || goNames.MatchString(err.Error()) {
				t.Errorf("err %v: want it to hold %q and no Go type", err, tc.want)
			}
		})
	}
}
