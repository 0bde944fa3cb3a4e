package ingest

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Grafana Tempo writes traces as protobuf's JSON mapping of OTLP: trace and
// span ids in base64 rather than OTLP/JSON's hex, enum names, 64-bit
// integers as strings, and, before Tempo 2, instrumentationLibrarySpans
// instead of scopeSpans. Its documents are {"batches": [ResourceSpans...]}
// (the v1 API), {"trace": {"resourceSpans": [...]}} (the v2 API) or plain
// {"resourceSpans": [...]}. Each ResourceSpans is normalised into what
// pdata's OTLP/JSON unmarshaler takes and decoded by it.

// openTempo streams the ResourceSpans of a Tempo document.
func openTempo(o openArgs) (producer, func(rec) result, func(), error) {
	return o.s.produceDoc(tempoDocSpec, o.opts.budget().recordCap()), decodeTempoResourceSpans(o.s.path, o.share), func() {}, nil
}

// decodeTempoResourceSpans decodes one element of a Tempo document's
// batches or resourceSpans array, charged to share (the budget's share
// in flight) by what it builds: unmarshalTempo.
func decodeTempoResourceSpans(path string, share *inflight) func(rec) result {
	return func(r rec) result {
		const expected = "a Tempo ResourceSpans JSON object"
		data, cut := r.cutDeep(path)
		c := newPdataCharge(share, r, "a Tempo ResourceSpans JSON object", len(data))
		td, err := unmarshalTempo(data, c)
		if err != nil {
			return result{prob: &ReadError{Path: path, Offset: r.off, Expected: expected, Err: r.placed(err)}}
		}
		return result{td: td, cut: cut, lone: noteLoneSurrogates(r), held: c.holding()}
	}
}

// unmarshalTempo normalises one Tempo ResourceSpans (normalizeResourceSpans)
// and decodes it with pdata. Both go through far more memory than the
// record (encoding/json's map[string]any of it takes up to twenty times
// its size): what they take is charged to c before they start
// (jsonCost.normalized), and a record that does not fit the share in
// flight fails with c's error, naming --max-memory. Once the record is
// decoded c keeps what pdata holds of it, and on an error nothing.
func unmarshalTempo(data []byte, c *pdataCharge) (ptrace.Traces, error) {
	cost := c.normalizing(c.json(data, pbResourceSpans), data)
	if err := c.add(cost.normalized()); err != nil {
		return ptrace.Traces{}, err
	}
	norm, err := normalizeResourceSpans(data)
	if err != nil {
		c.keep(0)
		return ptrace.Traces{}, err
	}
	var u ptrace.JSONUnmarshaler
	td, err := u.UnmarshalTraces(wrapResourceSpans(norm))
	if err != nil {
		c.keep(0)
		return ptrace.Traces{}, cleanJSONError(err)
	}
	c.keep(cost.pdataOf(cost.out))
	return td, nil
}

// idError is a trace or span id that is neither hex nor base64 of the right
// length.
type idError struct {
	field string
	size  int
}

// Error names the field and the two spellings it accepts, never the value.
func (e *idError) Error() string {
	return fmt.Sprintf("%s is neither %d hex digits nor base64 of %d bytes", e.field, 2*e.size, e.size)
}

// normalizeRequest normalises every ResourceSpans of an
// ExportTraceServiceRequest JSON object (see normalizeResourceSpans).
func normalizeRequest(data []byte) ([]byte, error) {
	data, protected := protectBytes(data)
	doc, err := decodeJSONObject(data)
	if err != nil {
		return nil, err
	}
	for _, key := range []string{"resourceSpans", "resource_spans"} {
		rss := dropNulls(doc, key)
		for _, rs := range rss {
			if m, ok := rs.(map[string]any); ok {
				if err := normalizeRSMap(m); err != nil {
					return nil, err
				}
			}
		}
	}
	return marshalRestoring(doc, protected)
}

// normalizeResourceSpans rewrites one ResourceSpans JSON object so pdata
// reads all of it: instrumentationLibrarySpans (and instrumentationLibrary)
// renamed to scopeSpans (and scope), base64 ids turned into hex.
func normalizeResourceSpans(data []byte) ([]byte, error) {
	data, protected := protectBytes(data)
	m, err := decodeJSONObject(data)
	if err != nil {
		return nil, err
	}
	if err := normalizeRSMap(m); err != nil {
		return nil, err
	}
	return marshalRestoring(m, protected)
}

// marshalRestoring encodes a normalised document, with the bytes that
// are not valid UTF-8 that protectBytes stood in for (when protected)
// back in place, for pdata, which keeps them as the OTLP readers do.
func marshalRestoring(doc map[string]any, protected bool) ([]byte, error) {
	out, err := json.Marshal(doc)
	if err != nil || !protected {
		return out, err
	}
	return restoreBytes(out), nil
}

func decodeJSONObject(data []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // keep 64-bit integers exact
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	if m == nil {
		return nil, errors.New("not a JSON object")
	}
	return m, nil
}

// normalizeRSMap normalises one decoded ResourceSpans in place (see
// normalizeResourceSpans).
func normalizeRSMap(rs map[string]any) error {
	renameKey(rs, "scopeSpans", "instrumentationLibrarySpans", "instrumentation_library_spans")
	for _, key := range []string{"scopeSpans", "scope_spans"} {
		scopes := dropNulls(rs, key)
		for _, sc := range scopes {
			scm, ok := sc.(map[string]any)
			if !ok {
				continue
			}
			renameKey(scm, "scope", "instrumentationLibrary", "instrumentation_library")
			sps := dropNulls(scm, "spans")
			for _, sp := range sps {
				if spm, ok := sp.(map[string]any); ok {
					if err := normalizeSpanIDs(spm); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// dropNulls removes the null elements of the array m[key] (pdata would
// read each as an empty message: a span with zero ids) and returns the
// array, nil when m[key] is not one.
func dropNulls(m map[string]any, key string) []any {
	arr, ok := m[key].([]any)
	if !ok {
		return nil
	}
	kept := slices.DeleteFunc(arr, func(v any) bool { return v == nil })
	m[key] = kept
	return kept
}

// renameKey renames the keys olds of m (the names older Tempo wrote) to
// key; when key is there already, it wins and the old keys are dropped.
func renameKey(m map[string]any, key string, olds ...string) {
	for _, old := range olds {
		if v, ok := m[old]; ok {
			delete(m, old)
			if _, has := m[key]; !has {
				m[key] = v
			}
		}
	}
}

// normalizeSpanIDs rewrites the ids of a span and of its links to hex.
func normalizeSpanIDs(spm map[string]any) error {
	if err := normalizeIDs(spm, true); err != nil {
		return err
	}
	links, _ := spm["links"].([]any)
	for _, l := range links {
		if lm, ok := l.(map[string]any); ok {
			if err := normalizeIDs(lm, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// normalizeIDs rewrites the ids of a span (or a link) to hex.
func normalizeIDs(m map[string]any, withParent bool) error {
	fields := []struct {
		key  string
		size int
	}{{"traceId", 16}, {"trace_id", 16}, {"spanId", 8}, {"span_id", 8}, {"parentSpanId", 8}, {"parent_span_id", 8}}
	for _, f := range fields {
		if !withParent && f.size == 8 && f.key != "spanId" && f.key != "span_id" {
			continue
		}
		s, ok := m[f.key].(string)
		if !ok || s == "" {
			continue
		}
		h, err := normalizeID(s, f.size)
		if err != nil {
			return &idError{field: f.key, size: f.size}
		}
		m[f.key] = h
	}
	return nil
}

// normalizeID returns an id as hex: kept when it is already 2*size hex
// digits, decoded when it is base64 (standard or URL alphabet, padded or
// not) of size bytes.
func normalizeID(s string, size int) (string, error) {
	if len(s) == 2*size && isHex(s) {
		return s, nil
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if enc.DecodedLen(len(s)) < size || enc.DecodedLen(len(s)) > size+2 {
			continue
		}
		raw, err := enc.DecodeString(s)
		if err == nil && len(raw) == size {
			return hex.EncodeToString(raw), nil
		}
	}
	return "", &idError{size: size}
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}
