package index

import (
	"cmp"
	"slices"
	"strings"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/report"
)

// ResourceText names resource r by its kept attributes, sorted by key:
// "service.instance.id=gw-1 service.name=gateway"; "(no resource
// attributes)" when it has none. Values are escaped and clipped when
// shown, not here: the text is also a map key.
func (x *Index) ResourceText(r int32) string {
	res := x.Resources[r]
	attrs := slices.Clone(x.ResAttrs[res.Attrs : res.Attrs+int32(res.N)])
	if len(attrs) == 0 {
		return "(no resource attributes)"
	}
	slices.SortFunc(attrs, func(a, b Attr) int { return cmp.Compare(x.Keys[a.Key], x.Keys[b.Key]) })
	var b strings.Builder
	for k, a := range attrs {
		if k > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(x.Keys[a.Key])
		b.WriteByte('=')
		b.WriteString(x.Vals[a.Val])
	}
	return b.String()
}

// NameID returns the id of an interned span name, -1 when no span has it.
func (x *Index) NameID(name string) int32 {
	for i, n := range x.Names {
		if n == name {
			return int32(i)
		}
	}
	return -1
}

// SetInputs records what was read into the index, for the report's inputs
// list. Load calls it, and so does an Engine for its report.
func (x *Index) SetInputs(inputs []ingest.Input) {
	x.InputReports = make([]report.InputReport, 0, len(inputs))
	for _, in := range inputs {
		x.InputReports = append(x.InputReports, report.InputReport{
			Path:        in.Path,
			Format:      string(in.Format),
			Compression: in.Compression,
			Spans:       in.Spans,
			Partial:     in.Partial,
			Warnings:    append([]string{}, in.Warnings...),
			Window:      report.WindowOf(in.Start, in.End),
			Backend:     backendInput(in.Backend),

			LoneSurrogates: in.LoneSurrogates,
		})
	}
}

// backendInput is the report's form of what a backend's query read; nil
// for a file.
func backendInput(b *ingest.BackendRead) *report.BackendInput {
	if b == nil {
		return nil
	}
	return &report.BackendInput{
		Backend: b.Backend, URL: b.URL, Services: append([]string{}, b.Services...),
		Window: report.WindowOf(uint64(b.Start.UnixNano()), uint64(b.End.UnixNano())), Filter: b.Filter,
		Pages: b.Pages, Traces: b.Traces, Spans: b.Spans, SettlingTraces: b.Settling, Cut: b.Cut,
	}
}
