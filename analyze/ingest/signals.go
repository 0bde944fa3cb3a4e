package ingest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// A source's own word about missing data. A trace store that could not load
// every trace it was asked for often says so in its answer, beside the
// traces it did load: a dump of that answer is not the whole story, and a
// verdict on it must not be green. Each function here reads one such field
// (docSpec.signals names where) and returns why the answer is incomplete,
// or "" when it is not. The reason never quotes span data; a message the
// source wrote is quoted clipped and escaped.

// jaegerErrors reads a Jaeger /api/traces answer's "errors": a list of
// {code, msg, traceID} for the traces it could not load; null or [] when
// every one loaded.
func jaegerErrors(raw json.RawMessage) string {
	var errs []struct {
		Code    int    `json:"code"`
		Msg     string `json:"msg"`
		TraceID string `json:"traceID"`
	}
	if isNull(raw) {
		return ""
	}
	if err := json.Unmarshal(raw, &errs); err != nil {
		return errorsField(raw)
	}
	if len(errs) == 0 {
		return ""
	}
	first := errs[0].Msg
	if first == "" {
		first = "code " + strconv.Itoa(errs[0].Code)
	}
	return fmt.Sprintf("%d trace(s) were not loaded (first: %s)", len(errs), QuoteText(first))
}

// tempoStatus reads a Tempo v2 trace-by-id answer's "status": COMPLETE
// (or 0) when the whole trace came back, PARTIAL (1) when Tempo cut it
// (a trace past its size limit, a querier that timed out).
func tempoStatus(raw json.RawMessage) string {
	var name string
	if json.Unmarshal(raw, &name) == nil {
		switch name {
		case "", "COMPLETE":
			return ""
		case "PARTIAL":
			return "the trace is partial (PARTIAL)"
		}
		return "the trace's status is " + QuoteText(name) + ", not COMPLETE"
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		if n.String() == "0" {
			return ""
		}
		return "the trace is partial (status " + QuoteText(n.String()) + ")"
	}
	if isNull(raw) {
		return ""
	}
	return "the trace's status is not COMPLETE"
}

// otlpPartialSuccess reads an OTLP export response's partialSuccess:
// rejectedSpans above zero means spans were refused and are not in the
// dump. (A message without rejected spans is only a warning in OTLP.)
func otlpPartialSuccess(raw json.RawMessage) string {
	var ps struct {
		Rejected      json.Number `json:"rejectedSpans"` // int64: a number or a string
		RejectedSnake json.Number `json:"rejected_spans"`
		Message       string      `json:"errorMessage"`
		MessageSnake  string      `json:"error_message"`
	}
	if isNull(raw) {
		return ""
	}
	if err := json.Unmarshal(raw, &ps); err != nil {
		return "a partial success that cannot be read"
	}
	n := ps.Rejected
	if n == "" {
		n = ps.RejectedSnake
	}
	v, err := strconv.ParseInt(string(n), 10, 64)
	switch {
	case n == "", err == nil && v <= 0:
		return ""
	case err != nil:
		return "rejected spans, a count that cannot be read"
	}
	why := strconv.FormatInt(v, 10) + " span(s) were rejected"
	if msg := ps.Message + ps.MessageSnake; msg != "" {
		why += " (" + QuoteText(msg) + ")"
	}
	return why
}

// errorsField reads a generic "error" or "errors" field: anything but
// null, false, an empty string, list or object says something went wrong.
func errorsField(raw json.RawMessage) string {
	t := bytes.TrimSpace(raw)
	switch string(t) {
	case "", "null", "false", `""`, "[]", "{}":
		return ""
	}
	var s string
	if json.Unmarshal(t, &s) == nil {
		return "the source reports an error: " + QuoteText(s)
	}
	return "the source reports errors"
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }
