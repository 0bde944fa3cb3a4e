package engine

// copyTraces appends to dst every span of src whose trace sel selects
// (sel is indexed by src's trace index), in src's arrival order, copies of
// a span included, and returns per src trace its index in dst (-1 when not
// copied) and the number of spans copied. dst must keep the same attribute
// keys as src (both built with the same IndexOptions): key ids are shared.
// The engine uses it to take finalized traces out of a shard's open index
// and to compact the open index; its cost is one pass over src's spans plus
// the interning of what is copied.
func copyTraces(dst, src *index, sel []bool) (newIdx []int32, copied int) {
	return copyTracesInto(dst, src, sel, false)
}

// borrowTraces is copyTraces into a scratch index that borrows src's string
// tables instead of interning into its own: the names and values keep
// their ids, so a finalization copies ids and looks nothing up. dst is
// only read until its next reset (which drops the borrowed tables without
// clearing them) and must not be added to otherwise; src may grow its
// tables meanwhile (dst sees the ids it copied, all below its length).
func borrowTraces(dst, src *index, sel []bool) (newIdx []int32, copied int) {
	dst.names, dst.vals, dst.lender = src.names, src.vals, src
	return copyTracesInto(dst, src, sel, true)
}

func copyTracesInto(dst, src *index, sel []bool, borrowed bool) (newIdx []int32, copied int) {
	dst.ensureMaps()
	newIdx = make([]int32, len(src.traces))
	for i := range newIdx {
		newIdx[i] = -1
	}
	resIdx := make(map[int32]int32)
	for _, c := range src.spans {
		for k := range c {
			s := c[k]
			if int(s.trace) >= len(sel) || !sel[s.trace] {
				continue
			}
			t := newIdx[s.trace]
			if t < 0 {
				t = dst.internTrace(src.traces[s.trace].id)
				newIdx[s.trace] = t
			}
			r, ok := resIdx[s.res]
			if !ok {
				r = copyResource(dst, src, s.res, borrowed)
				resIdx[s.res] = r
			}
			attrs := src.attrsOf(&s)
			ci := dst.attrRoom()
			s.trace, s.res = t, r
			s.attrs = int32(ci<<attrChunkBits | len(dst.attrs[ci]))
			s.parent, s.dup = parentNone, false
			if borrowed {
				dst.attrs[ci] = append(dst.attrs[ci], attrs...)
			} else {
				s.name = dst.internName(src.names[s.name])
				for _, a := range attrs {
					dst.attrs[ci] = append(dst.attrs[ci], attr{key: a.key, val: dst.internKeyStr(a.key, src.vals[a.val])})
				}
			}
			dst.appendSpan(s)
			copied++
		}
	}
	return newIdx, copied
}

// copyResource interns src's resource r in dst (its value ids as they are
// when dst borrows src's tables).
func copyResource(dst, src *index, r int32, borrowed bool) int32 {
	res := src.resources[r]
	start := dst.beginResource()
	for _, a := range src.resAttrs[res.attrs : res.attrs+int32(res.n)] {
		if !borrowed {
			a.val = dst.internString(src.vals[a.val])
		}
		dst.resAttrs = append(dst.resAttrs, a)
	}
	return dst.endResource(start)
}
