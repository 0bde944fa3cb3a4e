package ingest

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// TestPdataErrorsAreWordedInTheFormatsTerms pins how a record pdata
// refuses is described: by what the value should have been, never by the
// decoder's Go operation (ReadUint64) or a strconv function, with the
// library's own reason kept and no excerpt of the input. Each record has
// an event, so the projection decoder hands it to pdata.
func TestPdataErrorsAreWordedInTheFormatsTerms(t *testing.T) {
	goNames := regexp.MustCompile(`Read[A-Z][A-Za-z0-9]*|strconv\.|error found in`)
	for _, tc := range []struct{ field, want string }{
		{`"startTimeUnixNano":[1]`, "a value is not a whole number (a JSON number or a string of digits): unsupported value type"},
		{`"startTimeUnixNano":"1x"`, `a value is not a whole number (a JSON number or a string of digits): parsing "1x": invalid syntax`},
		{`"kind":"abc"`, "a value is not an enum OTLP defines (a span kind or status code, by name or number): unknown string value"},
		{`"name":5`, "a value is not a string: "},
		{`"attributes":{"a":1}`, "a value is not an array: "},
		{`"attributes":[{"key":"a","value":{"boolValue":"zz"}}]`, "a value is not true or false: "},
		{`"attributes":[{"key":"a","value":{"doubleValue":"zz"}}]`, `a value is not a number: parsing "zz": invalid syntax`},
	} {
		t.Run(tc.field, func(t *testing.T) {
			line := fmt.Sprintf(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"00000000000000000000000000000001","spanId":"0000000000000001","name":"x",%s,"events":[{"name":"e"}]}]}]}]}`+"\n", tc.field)
			_, err := ReadFrom(context.Background(), "t.jsonl", strings.NewReader(line), ReadOptions{}, SinkFunc(func(*Input, ptrace.Traces) error { return nil }))
			if err == nil || !strings.Contains(err.Error(), tc.want) || goNames.MatchString(err.Error()) {
				t.Errorf("err %v: want it to hold %q and no Go name", err, tc.want)
			}
		})
	}
}
