package index

// CopyTraces appends to dst every span of src whose trace sel selects
// (sel is indexed by src's trace index), in src's arrival order, copies of
// a span included, and returns per src trace its index in dst (-1 when not
// copied) and the number of spans copied. dst must keep the same attribute
// keys as src (both built with the same IndexOptions): key ids are shared.
// The engine uses it to take finalized traces out of a shard's open index
// and to compact the open index; its cost is one pass over src's spans plus
// the interning of what is copied.
func CopyTraces(dst, src *Index, sel []bool) (newIdx []int32, copied int) {
	return copyTracesInto(dst, src, sel, false)
}

// BorrowTraces is copyTraces into a scratch index that borrows src's string
// tables instead of interning into its own: the names and values keep
// their ids, so a finalization copies ids and looks nothing up. dst is
// only read until its next reset (which drops the borrowed tables without
// clearing them) and must not be added to otherwise; src may grow its
// tables meanwhile (dst sees the ids it copied, all below its length),
// on another goroutine too: dst's value lookups in src's map take src's
// lock. src must not be reset until dst is (src.Lent tells).
func BorrowTraces(dst, src *Index, sel []bool) (newIdx []int32, copied int) {
	src.lent.Add(1)
	dst.Names, dst.Vals, dst.lender = src.Names, src.Vals, src
	return copyTracesInto(dst, src, sel, true)
}

func copyTracesInto(dst, src *Index, sel []bool, borrowed bool) (newIdx []int32, copied int) {
	dst.ensureMaps()
	newIdx = make([]int32, len(src.TraceRecs))
	for i := range newIdx {
		newIdx[i] = -1
	}
	resIdx := make(map[int32]int32)
	for ci := range src.Chunks {
		c := src.chunk(ci)
		for k := range c {
			s := &c[k]
			if int(s.Trace) >= len(sel) || !sel[s.Trace] {
				continue
			}
			t := newIdx[s.Trace]
			if t < 0 {
				t = dst.internTrace(src.TraceRecs[s.Trace].ID)
				newIdx[s.Trace] = t
			}
			r, ok := resIdx[s.Res]
			if !ok {
				r = copyResource(dst, src, s.Res, borrowed)
				resIdx[s.Res] = r
			}
			attrs := src.AttrsOf(s)
			ci := dst.attrRoom()
			d := dst.spanRoom() // copied whole, then changed in place (see newSpan)
			*d = *s
			d.Trace, d.Res = t, r
			d.attrs = int32(ci<<attrChunkBits | len(dst.attrs[ci]))
			d.Parent, d.flags = ParentNone, d.flags&^spanDup
			if borrowed {
				dst.attrs[ci] = append(dst.attrs[ci], attrs...)
			} else {
				d.Name = dst.internName(src.Names[s.Name])
				for _, a := range attrs {
					dst.attrs[ci] = append(dst.attrs[ci], Attr{Key: a.Key, Val: dst.internKeyStr(a.Key, src.Vals[a.Val])})
				}
			}
			copied++
		}
	}
	return newIdx, copied
}

// copyResource interns src's resource r in dst (its value ids as they are
// when dst borrows src's tables).
func copyResource(dst, src *Index, r int32, borrowed bool) int32 {
	res := src.Resources[r]
	start := dst.beginResource()
	for _, a := range src.ResAttrs[res.Attrs : res.Attrs+int32(res.N)] {
		if !borrowed {
			a.Val = dst.internString(src.Vals[a.Val])
		}
		dst.ResAttrs = append(dst.ResAttrs, a)
	}
	return dst.endResource(start)
}

// KeepTraces drops from x, in place, every span of the traces sel does not
// select (sel is indexed by x's trace index), and leaves x as CopyTraces
// of the same selection into an empty index would have built it: the
// spans in arrival order, the traces and resources numbered again in order
// of first use, every span's parent link and copy mark left to the next
// Finish, which sets them all again. It keeps the names and values as
// they are, and the attributes where they lie. The copies the duplicate
// cache dropped are no longer counted (Dropped is zero, as in a copy): a
// caller that counts them reads Dropped first. It returns how many spans
// it kept.
//
// The engine hands a shard's open index itself to the observer this way
// once most of it is finalized: copying the few traces still open out of
// it costs less than copying the many finalized ones, and then the
// finalized spans, already indexed once, are never copied at all.
func (x *Index) KeepTraces(sel []bool) int32 {
	newTrace := make([]int32, len(x.TraceRecs))
	newRes := make([]int32, len(x.Resources))
	for i := range newTrace {
		newTrace[i] = -1
	}
	for i := range newRes {
		newRes[i] = -1
	}
	var traces []TraceRec
	var resources []Resource
	var resAttrs []Attr
	var kept int32
	for ci := range x.Chunks {
		c := x.chunk(ci)
		for k := range c {
			s := &c[k]
			if int(s.Trace) >= len(sel) || !sel[s.Trace] {
				continue
			}
			if newTrace[s.Trace] < 0 {
				newTrace[s.Trace] = int32(len(traces))
				traces = append(traces, TraceRec{ID: x.TraceRecs[s.Trace].ID})
			}
			if newRes[s.Res] < 0 {
				r := x.Resources[s.Res]
				newRes[s.Res] = int32(len(resources))
				resources = append(resources, Resource{Attrs: int32(len(resAttrs)), N: r.N})
				resAttrs = append(resAttrs, x.ResAttrs[r.Attrs:r.Attrs+int32(r.N)]...)
			}
			// Moved down whole, then renumbered in place (see newSpan).
			t, r := newTrace[s.Trace], newRes[s.Res]
			if d := x.Span(kept); d != s { // never ahead of the span read: kept counts fewer
				*d = *s
				s = d
			}
			s.Trace, s.Res = t, r
			kept++
		}
	}
	x.truncateSpans(kept)
	x.TraceRecs, x.Resources, x.ResAttrs = traces, resources, resAttrs
	x.reindexTracesAndResources()
	x.dirty, x.layout, x.Order, x.Dropped = true, nil, x.Order[:0], 0
	return kept
}

// truncateSpans keeps the first n spans of x, its emptied chunks kept
// as spares.
func (x *Index) truncateSpans(n int32) {
	full := (int(n) + spanChunk - 1) >> spanChunkBits // the chunks n spans fill
	x.SpareChunks = append(x.SpareChunks, x.Chunks[full:]...)
	clear(x.Chunks[full:])
	x.Chunks, x.NumSpans = x.Chunks[:full], n
}

// reindexTracesAndResources marks the trace and resource lookup maps
// stale after KeepTraces numbered both again (when x has them: the next
// Add fills them again), and empties the duplicate cache, which holds
// trace numbers.
func (x *Index) reindexTracesAndResources() {
	if x.traceIdx != nil {
		x.stale = true
	}
	if x.Recent != nil {
		*x.Recent = [recentSlots]recentSpan{}
	}
}
