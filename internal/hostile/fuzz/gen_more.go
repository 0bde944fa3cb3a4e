package fuzz

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/mcptrace/mcptrace/internal/hostile"
	"github.com/mcptrace/mcptrace/internal/tracegen"
	"github.com/mcptrace/mcptrace/spans"
)

// genIDsTimes writes a well-formed dump of ill-formed spans: ids longer
// than their width (part 0), all-zero ids (1), size copies of one span id
// with different content (2), a parent cycle of size spans (3), a span its
// own parent (4), times at the uint64 limit and ends before starts (5),
// orphans whose parents never come (6), Jaeger durations that overflow
// int64 microseconds (7, in a Jaeger dump).
func genIDsTimes(c *Case, rng *rand.Rand) {
	b := newBuilder(rng)
	ss := b.scope("gateway", "ids")
	start := tracegen.BaseTime
	for i := range 3 {
		b.invocation(ss, start.Add(time.Duration(i)*time.Second), "k", "s", "t", i > 0)
	}
	n := c.Size
	var parts []string
	if c.on(1) {
		sp := b.span(ss, pcommon.NewTraceIDEmpty(), pcommon.NewSpanIDEmpty(), spans.SpanInvoke, start, time.Second)
		sp.SetSpanID(pcommon.NewSpanIDEmpty())
		parts = append(parts, "zero ids")
	}
	if c.on(2) {
		tid := b.traceID()
		id := b.spanID()
		for i := range n {
			sp := b.span(ss, tid, pcommon.NewSpanIDEmpty(), []string{spans.SpanInvoke, spans.SpanAcquire, spans.SpanCallTool}[i%3], start.Add(time.Duration(i)*time.Microsecond), time.Millisecond)
			sp.SetSpanID(id)
			sp.Attributes().PutInt("copy", int64(i))
		}
		parts = append(parts, fmt.Sprintf("%d copies of one span id", n))
	}
	if c.on(3) {
		tid := b.traceID()
		ids := make([]pcommon.SpanID, n)
		for i := range ids {
			ids[i] = b.spanID()
		}
		for i := range n {
			sp := b.span(ss, tid, ids[(i+1)%n], []string{spans.SpanInvoke, spans.SpanAcquire, spans.SpanHandshake}[i%3], start, time.Millisecond)
			sp.SetSpanID(ids[i])
		}
		parts = append(parts, fmt.Sprintf("a parent cycle of %d spans", n))
	}
	if c.on(4) {
		tid := b.traceID()
		sp := b.span(ss, tid, pcommon.NewSpanIDEmpty(), spans.SpanAcquire, start, time.Millisecond)
		sp.SetParentSpanID(sp.SpanID())
		parts = append(parts, "a span its own parent")
	}
	if c.on(5) {
		tid := b.traceID()
		sp := b.span(ss, tid, pcommon.NewSpanIDEmpty(), spans.SpanInvoke, start, time.Millisecond)
		sp.SetStartTimestamp(pcommon.Timestamp(math.MaxUint64))
		sp.SetEndTimestamp(0)
		ch := b.span(ss, tid, sp.SpanID(), spans.SpanAcquire, start, time.Millisecond)
		ch.SetEndTimestamp(pcommon.Timestamp(math.MaxUint64))
		ch.Attributes().PutBool(spans.AttrCacheHit, false)
		parts = append(parts, "times at the uint64 limit")
	}
	if c.on(6) {
		for range min(n, 500) {
			b.span(ss, b.traceID(), b.spanID(), spans.SpanAcquire, start, time.Millisecond)
		}
		parts = append(parts, "orphans")
	}
	e := encodingByName([]string{"otlp-jsonl", "otlp-proto", "tempo", "jaeger"}[rng.IntN(4)])
	if c.on(7) {
		e = encodingByName("jaeger")
	}
	data := encode(e, b.td)
	if c.on(0) {
		// Widen the first trace id and span id the dump spells in hex.
		tid := b.td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).TraceID()
		h := fmt.Sprintf("%x", tid[:])
		data = bytes.Replace(data, []byte(h), []byte(h+strings.Repeat("f", 48)), 1)
		parts = append(parts, "ids wider than 128 bits")
	}
	if c.on(7) {
		data = bytes.Replace(data, []byte(`"duration":`), []byte(`"duration":9223372036854775807,"x":`), 1)
		data = bytes.Replace(data, []byte(`"startTime":`), []byte(`"startTime":9223372036854775807,"y":`), 1)
		parts = append(parts, "Jaeger times past int64")
	}
	file := "ids." + encodings[e].ext
	c.Files[file] = data
	c.Inputs = []string{file}
	c.What = fmt.Sprintf("%s: %s", encodings[e].name, strings.Join(parts, ", "))
}

// genEncodings wraps a scenario's dump in a container that hurts: a
// truncated gzip (part 0, broken) or zstd (1, broken) stream, the
// Collector's zstd records with a damaged frame (2, broken), concatenated
// gzip members (3), gzip inside gzip (4), a zip (5, broken) or tar.gz (6,
// broken) archive of dumps, UTF-16 with a BOM (7, broken), a UTF-8 BOM (8),
// a string of size zeros compressed at a bomb's ratio (9). The first part
// set wins.
func genEncodings(c *Case, rng *rand.Rand) {
	name, td := scenario(rng)
	jsonl := encode(encodingByName("otlp-jsonl"), td)
	c.RawBytes = int64(len(jsonl))
	put := func(file string, data []byte, what string, broken bool) {
		c.Files[file] = data
		c.Inputs = []string{file}
		c.Broken = broken
		c.What = "scenario " + name + ": " + what
	}
	cut := func(b []byte) []byte { return b[:len(b)*(1+rng.IntN(9))/10] }
	switch {
	case c.on(0):
		put("cut.otlp.jsonl.gz", cut(gz(jsonl)), "a gzip stream cut short", true)
	case c.on(1):
		put("cut.otlp.jsonl.zst", cut(zst(jsonl)), "a zstd stream cut short", true)
	case c.on(2):
		if td.ResourceSpans().Len() < 2 { // the damage goes in a second record
			td.ResourceSpans().At(0).CopyTo(td.ResourceSpans().AppendEmpty())
		}
		data, _ := tracegen.ZstdRecordsWithBadSecond(td)
		put("bad.otlp-proto-zstd-records.bin", data, "zstd records, the second damaged", true)
	case c.on(3):
		half := bytes.IndexByte(jsonl[len(jsonl)/2:], '\n') + len(jsonl)/2 + 1
		put("members.otlp.jsonl.gz", append(gz(jsonl[:half]), gz(jsonl[half:])...), "two gzip members", false)
	case c.on(4):
		put("twice.otlp.jsonl.gz", gz(gz(jsonl)), "gzip inside gzip", true)
	case c.on(5):
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		w, _ := zw.Create("dump.otlp.jsonl")
		w.Write(jsonl)
		zw.Close()
		put("dumps.zip", buf.Bytes(), "a zip archive of a dump", true)
	case c.on(6):
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		tw.WriteHeader(&tar.Header{Name: "dump.otlp.jsonl", Mode: 0o644, Size: int64(len(jsonl))})
		tw.Write(jsonl)
		tw.Close()
		put("dumps.tar.gz", gz(buf.Bytes()), "a tar.gz archive of a dump", true)
	case c.on(7):
		u := []byte{0xff, 0xfe}
		for _, r := range string(jsonl) {
			u = binary.LittleEndian.AppendUint16(u, uint16(r))
		}
		put("utf16.otlp.jsonl", u, "UTF-16LE with a BOM", true)
	case c.on(8):
		put("bom.otlp.jsonl", append([]byte("\xef\xbb\xbf"), jsonl...), "a UTF-8 BOM", false)
	default:
		line := `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"` +
			strings.Repeat("\\u0000", c.Size/6+1) + `"}}]},"scopeSpans":[]}]}` + "\n"
		data := append(jsonl, line...)
		c.RawBytes = int64(len(data))
		put("ratio.otlp.jsonl.zst", zst(data), fmt.Sprintf("%d bytes of escaped NULs at a bomb's ratio", len(line)), false)
	}
}

// genSpecialFiles makes a directory of dumps holding, beside one good dump,
// what a crash or a careless glob leaves: an empty .jsonl (part 0, broken),
// a NUL-filled one of size bytes (1, broken), random junk named .jsonl (2,
// broken), a FIFO without a writer (3), a symlink to itself (4), a symlink
// to the directory above (5), a dangling symlink (6), a symlink to
// /dev/zero (7, broken), an empty dump whose name holds an escape and a
// bidi override (8, broken), size small junk files in a subdirectory (9,
// broken), and a directory named like a dump (10).
func genSpecialFiles(c *Case, rng *rand.Rand) {
	name, td := scenario(rng)
	dump := encode(encodingByName("otlp-jsonl"), td)
	c.Files["dumps/good.otlp.jsonl"] = dump
	c.Inputs = []string{"dumps"}
	var parts []string
	broken := func(part string) {
		c.Broken = true
		parts = append(parts, part)
	}
	if c.on(0) {
		c.Files["dumps/empty.jsonl"] = nil
		broken("an empty .jsonl")
	}
	if c.on(1) {
		c.Files["dumps/nul.jsonl"] = make([]byte, c.Size)
		broken(fmt.Sprintf("a .jsonl of %d NULs", c.Size))
	}
	if c.on(2) {
		junk := make([]byte, c.Size)
		for i := range junk {
			junk[i] = byte(rng.Uint32())
		}
		c.Files["dumps/junk.jsonl"] = junk
		broken("random bytes named .jsonl")
	}
	if c.on(3) {
		c.Special = append(c.Special, Special{Path: "dumps/fifo.jsonl", Kind: "fifo"})
		parts = append(parts, "a FIFO without a writer")
	}
	if c.on(4) {
		c.Special = append(c.Special, Special{Path: "dumps/loop.jsonl", Kind: "symlink", Target: "loop.jsonl"})
		parts = append(parts, "a symlink to itself")
	}
	if c.on(5) {
		c.Special = append(c.Special, Special{Path: "dumps/sub/up", Kind: "symlink", Target: ".."})
		parts = append(parts, "a symlink to the directory above")
	}
	if c.on(6) {
		c.Special = append(c.Special, Special{Path: "dumps/dangling.jsonl", Kind: "symlink", Target: "nowhere.jsonl"})
		parts = append(parts, "a dangling symlink")
	}
	if c.on(7) {
		c.Special = append(c.Special, Special{Path: "dumps/zero.jsonl", Kind: "symlink", Target: "/dev/zero"})
		broken("a symlink to /dev/zero")
	}
	if c.on(8) {
		c.Special = append(c.Special, Special{Path: "dumps/\x1b[31mevil\u202egpj.jsonl", Kind: "empty"})
		broken("an empty dump whose name holds ESC and U+202E")
	}
	if c.on(9) {
		for i := range min(c.Size, 2000) {
			c.Files["dumps/junk/"+strconv.Itoa(i)+".json"] = []byte{byte(i), '{', 0}
		}
		broken(fmt.Sprintf("%d junk files", min(c.Size, 2000)))
	}
	if c.on(10) {
		c.Files["dumps/dir.jsonl/inner.otlp.jsonl"] = dump
		parts = append(parts, "a directory named .jsonl")
	}
	c.What = "scenario " + name + " in a directory with " + strings.Join(parts, ", ")
}

// genSources writes what a trace store answers when it has lost data:
// Jaeger's errors array naming traces not loaded (part 0, broken; its
// messages hostile), Jaeger's errors as an empty list or null (1), a
// Tempo answer with a span id that is not base64 (2, broken), a Tempo
// error body holding raw 0xff bytes (3, broken), Jaeger data null beside
// errors (4, broken). The first part set wins; size is the number of
// traces asked for.
func genSources(c *Case, rng *rand.Rand) {
	b := newBuilder(rng)
	ss := b.scope("gateway", "src")
	b.invocation(ss, tracegen.BaseTime, "k", "s", "t", false)
	n := max(c.Size, 2)
	switch {
	case c.on(0), c.on(4):
		doc := encode(encodingByName("jaeger"), b.td)
		var errs []string
		for i := 1; i < n; i++ {
			errs = append(errs, fmt.Sprintf(`{"code":500,"msg":"trace not found: %x \u001b[31m[click me](https://fuzz.invalid/e)\u202e","traceID":"%x"}`, i, i))
		}
		e := `"errors":[` + strings.Join(errs, ",") + `]`
		if c.on(4) {
			doc = []byte(`{"data":null,` + e + "}\n")
		} else {
			doc = bytes.Replace(doc, []byte(`"errors": null`), []byte(e), 1)
		}
		c.Files["jaeger.json"] = doc
		c.Broken = true
		c.What = fmt.Sprintf("a Jaeger answer whose errors say %d of %d traces were not loaded", n-1, n)
	case c.on(1):
		doc := encode(encodingByName("jaeger"), b.td)
		c.Files["jaeger.json"] = bytes.Replace(doc, []byte(`"errors": null`), []byte(`"errors":[]`), 1)
		c.What = "a Jaeger answer with an empty errors list"
	case c.on(2):
		doc := encode(encodingByName("tempo"), b.td)
		// Tempo's JSON is indented ("spanId": "..."): the value starts
		// after the first quote past the key.
		if loc := spanIDKey.FindIndex(doc); loc != nil {
			doc = append(doc[:loc[1]:loc[1]], append([]byte("!!not*base64\xff"), doc[loc[1]:]...)...)
		}
		c.Files["tempo.json"] = doc
		c.Broken = true
		c.What = "a Tempo answer with a span id that is not base64"
	default:
		c.Files["tempo.json"] = []byte("{\"batches\":[\xff\xfe\x1b[31m\u202e error: trace not found\n")
		c.Broken = true
		c.What = "a Tempo error body with raw 0xff bytes, ESC and U+202E"
	}
	for f := range c.Files {
		c.Inputs = []string{f}
	}
}

// spanIDKey matches a span id's key up to the opening quote of its value.
var spanIDKey = regexp.MustCompile(`"spanId":\s*"`)

// genRules writes a rules file that is legal and costly, or deep: a regex
// of size states on span names (part 0) and on an attribute (1), under/
// not_under selectors nested size deep (2), size rules (3), YAML flow
// nesting size deep (4), a long description (5). The dump is a scenario's,
// or (6) 80 spans under 80 names of 1 KiB, on which a regex of thousands
// of states runs for seconds: SIGINT must still end it.
func genRules(c *Case, rng *rand.Rand) {
	name, td := scenario(rng)
	c.Files["dump.otlp.jsonl"] = encode(encodingByName("otlp-jsonl"), td)
	if c.on(6) {
		var buf bytes.Buffer
		if err := hostile.SpanNames(&buf, 80); err != nil {
			panic(err)
		}
		name, c.Files["dump.otlp.jsonl"] = "of 80 names of 1 KiB", buf.Bytes()
	}
	c.Inputs = []string{"dump.otlp.jsonl"}
	n := c.Size
	reps := max(min(n/3, 1000), 1)
	regex := []string{
		fmt.Sprintf("^(?:[a-z._]*x){0,%d}$", min(reps, 1000)),
		fmt.Sprintf("[a-z.]{%d}", min(n, 1000)),
		fmt.Sprintf("(?:a|b|c|plugin|mcp|.){0,%d}z", min(reps, 1000)),
		strings.Repeat("(?:[a-z]|.)", min(n, 3000)) + "$",
		strings.Repeat(fmt.Sprintf("[a-z.0-9]{0,%d}", min(reps, 1000)), 3) + "z",
	}[rng.IntN(5)]
	var y strings.Builder
	y.WriteString("rules:\n")
	rule := func(id, sel string) {
		fmt.Fprintf(&y, "  - id: %s\n    scope: trace\n    select: %s\n    expect: {of: count, op: \">=\", than: 0}\n", id, sel)
	}
	var parts []string
	if c.on(0) {
		rule("regex-name", fmt.Sprintf("{name_regex: %q}", regex))
		parts = append(parts, "a name regex "+truncate(regex, 40))
	}
	if c.on(1) {
		rule("regex-attr", fmt.Sprintf("{attributes: {%s: {regex: %q}}}", spans.AttrCacheKey, regex))
		parts = append(parts, "an attribute regex")
	}
	if c.on(2) {
		sel := "{name: " + spans.SpanInvoke + "}"
		for i := range min(n, 5000) {
			sel = fmt.Sprintf("{name: %s, %s: %s}", spans.SpanAcquire, []string{"under", "not_under"}[i%2], sel)
		}
		rule("deep-under", sel)
		parts = append(parts, fmt.Sprintf("selectors nested %d deep", min(n, 5000)))
	}
	if c.on(3) {
		for i := range min(n, 2000) {
			rule("many-"+strconv.Itoa(i), fmt.Sprintf("{name_regex: %q}", "^plugin\\.mcp\\..*"+strconv.Itoa(i)))
		}
		parts = append(parts, fmt.Sprintf("%d rules", min(n, 2000)))
	}
	if c.on(4) {
		fmt.Fprintf(&y, "  - id: deep-yaml\n    scope: trace\n    select: {name: x, attributes: {k: %s1%s}}\n    expect: {of: count, op: \">=\", than: 0}\n",
			strings.Repeat("[", n), strings.Repeat("]", n))
		parts = append(parts, fmt.Sprintf("YAML flow nesting %d deep", n))
	}
	if c.on(5) {
		fmt.Fprintf(&y, "  - id: long-description\n    description: %q\n    scope: dump\n    select: {name: %s}\n    expect: {of: count, op: \"==\", than: -1}\n",
			strings.Repeat("[d](https://fuzz.invalid/d) ", n), spans.SpanInvoke)
		parts = append(parts, "a failing rule with a long linked description")
	}
	if len(parts) == 0 {
		rule("plain", "{name: "+spans.SpanInvoke+"}")
	}
	c.Files["rules.yaml"] = []byte(y.String())
	c.Config = "rules.yaml"
	c.What = "scenario " + name + " with rules: " + strings.Join(parts, ", ")
}

// truncate returns s cut to n bytes with an ellipsis.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
