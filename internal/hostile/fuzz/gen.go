package fuzz

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/mcptrace/mcptrace/internal/tracegen"
	"github.com/mcptrace/mcptrace/spans"
)

// Family is one kind of hostile input. Gen builds the case of a seed, a
// size (the family's knob: a depth, a count, a length) and a mask (which of
// the family's parts are on; the minimizer clears bits one at a time).
type Family struct {
	// Name identifies the family in reports and manifests.
	Name string
	// MaxSize is the largest size the driver picks.
	MaxSize int
	// Parts is how many mask bits the family reads.
	Parts int
	// Gen fills c (whose Seed, Size and Mask are set) from rng.
	Gen func(c *Case, rng *rand.Rand)
}

// Families returns every family, sorted by name.
func Families() []Family {
	fs := []Family{
		{"markup", 1, len(hostileStrings) + 1, genMarkup},
		{"nesting", 1_000_000, 4, genNesting},
		{"cardinality", 40_000, 4, genCardinality},
		{"amplification", 64 << 10, 3, genAmplification},
		{"ids-times", 5_000, 8, genIDsTimes},
		{"encodings", 8 << 20, 10, genEncodings},
		{"special-files", 2_000, 11, genSpecialFiles},
		{"sources", 64, 5, genSources},
		{"rules", 5_000, 7, genRules},
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i].Name < fs[j].Name })
	return fs
}

// FamilyByName returns the family called name.
func FamilyByName(name string) (Family, error) {
	var names []string
	for _, f := range Families() {
		if f.Name == name {
			return f, nil
		}
		names = append(names, f.Name)
	}
	return Family{}, fmt.Errorf("unknown family %q: expected one of %q", name, names)
}

// Generate returns the case of family, seed, size and mask: the same four,
// the same bytes. A generator that panics is a bug of this package,
// returned as an error naming the four.
func Generate(family string, seed uint64, size int, mask uint64) (c *Case, err error) {
	f, err := FamilyByName(family)
	if err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			c, err = nil, fmt.Errorf("generator of -family %s -seed %d -size %d -mask %d panicked: %v", family, seed, size, mask, r)
		}
	}()
	c = &Case{Family: family, Seed: seed, Size: max(size, 1), Mask: mask, Files: map[string][]byte{}}
	f.Gen(c, rand.New(rand.NewPCG(seed, 0x686f7374696c65))) // "hostile"
	c.Budget = budgets[(seed/uint64(len(Families())))%uint64(len(budgets))]
	if c.RawBytes == 0 {
		for _, b := range c.Files {
			c.RawBytes += int64(len(b))
		}
	}
	return c, nil
}

// budgets are the --max-memory values cases are run with, in turn: a
// small budget holds the readers to it, the default lets a shape past the
// line and value caps into the decoders.
var budgets = []string{"64MiB", "192MiB", "default"}

// on says whether part i of the mask is set.
func (c *Case) on(i int) bool { return c.Mask&(1<<uint(i)) != 0 }

// genMarkup appends the hostile strings the mask selects to every string
// of a scenario's dump, in one encoding; the last part adds a rules file
// whose failing rule carries them in its description, so the offenders'
// examples print the strings too.
func genMarkup(c *Case, rng *rand.Rand) {
	name, td := scenario(rng)
	var picked []string
	for i, h := range hostileStrings {
		if c.on(i) {
			picked = append(picked, h.s)
		}
	}
	if len(picked) > 0 {
		all := strings.Join(picked, " ")
		forEachString(td, func(s string) string { return s + " " + all })
	}
	e := rng.IntN(len(encodings))
	data := encode(e, td)
	data = bytes.ReplaceAll(data, []byte(rawFF), rawFFBytes)
	c.RawBytes = int64(len(data))
	file := "dump." + encodings[e].ext
	if rng.IntN(3) == 0 {
		data, file = gz(data), file+".gz"
	}
	c.Files[file] = data
	c.Inputs = []string{file}
	c.What = fmt.Sprintf("scenario %s as %s with %d hostile strings in every string field", name, encodings[e].name, len(picked))
	if c.on(len(hostileStrings)) && len(picked) > 0 {
		// Go's ASCII quoting is YAML's double-quoted style too (\x, \u,
		// \n...), so every control character reaches the description.
		desc := strconv.QuoteToASCII(strings.Join(picked, " "))
		c.Files["rules.yaml"] = []byte("rules:\n  - id: fuzz-markup\n    description: " + desc + "\n" +
			"    scope: trace\n    select: {name: " + spans.SpanCallTool + "}\n    expect: {of: count, op: \"==\", than: 99}\n")
		c.Config = "rules.yaml"
		c.Args = []string{"--builtin"}
		c.What += ", and a failing rule describing itself with them"
	}
}

// deepValue returns an OTLP JSON AnyValue nested depth deep: arrays,
// kvlists, or both alternating.
func deepValue(depth int, kind int) []byte {
	var b bytes.Buffer
	open := [2]string{`{"arrayValue":{"values":[`, `{"kvlistValue":{"values":[{"key":"k","value":`}
	shut := [2]string{`]}}`, `}]}}`}
	for i := range depth {
		b.WriteString(open[pick(kind, i)])
	}
	b.WriteString(`{"stringValue":"bottom"}`)
	for i := depth - 1; i >= 0; i-- {
		b.WriteString(shut[pick(kind, i)])
	}
	return b.Bytes()
}

// pick chooses array (0) or kvlist (1) at level i for kind 0, 1 or 2
// (alternating).
func pick(kind, i int) int {
	if kind == 2 {
		return i % 2
	}
	return kind
}

// genNesting puts a value nested size deep into a kept attribute
// (plugin.mcp.cache_key, part 0), the resource (part 1), an unknown span
// attribute (part 2), or an unknown field of the document (part 3), in an
// OTLP JSON or Tempo dump, gzip-compressed so the reproducer is small.
func genNesting(c *Case, rng *rand.Rand) {
	b := newBuilder(rng)
	ss := b.scope("gateway", "scope-1")
	for i := range 4 {
		b.invocation(ss, tracegen.BaseTime.Add(time.Duration(i)*time.Second), "k1", "s1", "t", i > 0)
	}
	const marker = "@@DEEP@@"
	td := b.td
	rs := td.ResourceSpans().At(0)
	sp := rs.ScopeSpans().At(0).Spans()
	if c.on(0) {
		sp.At(1).Attributes().PutStr(spans.AttrCacheKey, marker)
	}
	if c.on(1) {
		rs.Resource().Attributes().PutStr(spans.ResourceServiceInstanceID, marker)
	}
	if c.on(2) {
		sp.At(0).Attributes().PutStr("x.deep", marker)
	}
	encs := []string{"otlp-jsonl", "otlp-json", "tempo", "tempo-v2", "jaeger"}
	e := encodingByName(encs[rng.IntN(len(encs))])
	kind := rng.IntN(3)
	data := encode(e, td)
	deep := deepValue(c.Size, kind)
	if encodings[e].name == "jaeger" {
		deep = append(append(bytes.Repeat([]byte("["), c.Size), '1'), bytes.Repeat([]byte("]"), c.Size)...)
	}
	data = bytes.ReplaceAll(data, []byte(`{"stringValue":"`+marker+`"}`), deep)
	data = bytes.ReplaceAll(data, []byte(`"`+marker+`"`), deep)
	if c.on(3) {
		unknown := append(append([]byte(`{"x_unknown":`), bytes.Repeat([]byte("["), c.Size)...), bytes.Repeat([]byte("]"), c.Size)...)
		unknown = append(unknown, ',')
		if i := bytes.IndexByte(data, '{'); i >= 0 {
			data = append(unknown, data[i+1:]...)
		}
	}
	c.RawBytes = int64(len(data))
	file := "deep." + encodings[e].ext + ".gz"
	c.Files[file] = gz(data)
	c.Inputs = []string{file}
	c.What = fmt.Sprintf("a value nested %d deep (kind %d: array, kvlist, alternating) in %s", c.Size, kind, encodings[e].name)
}

// genCardinality writes size of one thing the report lists: pool scopes
// (part 0), sessions in one execution (part 1), cache keys (part 2), or
// one-span traces (part 3); the first part set wins.
func genCardinality(c *Case, rng *rand.Rand) {
	b := newBuilder(rng)
	n := c.Size
	start := tracegen.BaseTime
	switch {
	case c.on(0):
		for i := range n {
			ss := b.scope("gateway", "scope-"+strconv.Itoa(i))
			b.invocation(ss, start.Add(time.Duration(i)*time.Millisecond), "k", "s"+strconv.Itoa(i), "t", false)
		}
		c.What = fmt.Sprintf("%d pool scopes of one invocation each", n)
	case c.on(1):
		ss := b.scope("gateway", "scope-1")
		tid := b.traceID()
		root := b.span(ss, tid, pcommon.NewSpanIDEmpty(), "executor.execute", start, time.Hour)
		for i := range n {
			call := b.span(ss, tid, root.SpanID(), spans.SpanCallTool, start.Add(time.Duration(i)*time.Microsecond), time.Microsecond)
			call.Attributes().PutStr(spans.AttrSessionID, "session-"+strconv.Itoa(i))
			call.Attributes().PutStr(spans.AttrMethodName, "tools/call")
		}
		c.Args = []string{"--execution-root", "executor.execute"}
		c.What = fmt.Sprintf("one execution over %d sessions", n)
	case c.on(2):
		ss := b.scope("gateway", "scope-1")
		for i := range n {
			b.invocation(ss, start.Add(time.Duration(i)*time.Second), "key-"+strconv.Itoa(i), "s"+strconv.Itoa(i), "tool-"+strconv.Itoa(i), false)
		}
		c.What = fmt.Sprintf("%d cache keys and tools in one scope", n)
	default:
		ss := b.scope("gateway", "scope-1")
		for i := range n {
			b.span(ss, b.traceID(), pcommon.NewSpanIDEmpty(), spans.SpanInvoke, start.Add(time.Duration(i)*time.Millisecond), time.Millisecond)
		}
		c.What = fmt.Sprintf("%d one-span traces", n)
	}
	e := encodingByName([]string{"otlp-jsonl", "otlp-proto"}[rng.IntN(2)])
	data := encode(e, b.td)
	c.RawBytes = int64(len(data))
	file := "many." + encodings[e].ext + ".zst"
	c.Files[file] = zst(data)
	c.Inputs = []string{file}
}

// genAmplification writes cells a renderer might pad or repeat: one scope
// name of size bytes beside many short ones (part 0), a long tool name and
// cache key on failing spans (part 1), many long distinct values (part 2).
func genAmplification(c *Case, rng *rand.Rand) {
	b := newBuilder(rng)
	start := tracegen.BaseTime
	long := strings.Repeat("W", c.Size)
	rows := 200
	if c.on(0) {
		ss := b.scope("gateway", long)
		b.invocation(ss, start, "k", "s", "t", false)
		for i := range rows {
			ss := b.scope("gateway", "s"+strconv.Itoa(i))
			b.invocation(ss, start.Add(time.Duration(i)*time.Second), "k", "s"+strconv.Itoa(i), "t", false)
		}
	}
	if c.on(1) {
		ss := b.scope("gateway", "wide")
		for i := range rows / 4 {
			// a hit with a handshake: handshake-only-on-miss fails on
			// every trace, with examples.
			tid := b.invocation(ss, start.Add(time.Duration(i)*time.Second), long+strconv.Itoa(i), long, long, true)
			_ = tid
		}
		sp := ss
		for i := 0; i < sp.Len(); i++ {
			if sp.At(i).Name() == spans.SpanAcquire {
				b.span(ss, sp.At(i).TraceID(), sp.At(i).SpanID(), spans.SpanHandshake, start, time.Millisecond)
			}
		}
	}
	if c.on(2) {
		ss := b.scope("gateway", "distinct")
		for i := range 20 {
			v := strings.Repeat(strconv.Itoa(i%10), c.Size/20+1)
			b.invocation(ss, start.Add(time.Duration(i)*time.Minute), v, v, v, i%2 == 0)
		}
	}
	data := encode(encodingByName("otlp-jsonl"), b.td)
	c.RawBytes = int64(len(data))
	c.Files["wide.otlp.jsonl.zst"] = zst(data)
	c.Inputs = []string{"wide.otlp.jsonl.zst"}
	c.What = fmt.Sprintf("cells of %d bytes beside short ones (parts %03b)", c.Size, c.Mask&7)
}
