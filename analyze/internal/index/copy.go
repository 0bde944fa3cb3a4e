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
	for _, c := range src.Chunks {
		for k := range c {
			s := c[k]
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
			attrs := src.AttrsOf(&s)
			ci := dst.attrRoom()
			s.Trace, s.Res = t, r
			s.attrs = int32(ci<<attrChunkBits | len(dst.attrs[ci]))
			s.Parent, s.dup = ParentNone, false
			if borrowed {
				dst.attrs[ci] = append(dst.attrs[ci], attrs...)
			} else {
				s.Name = dst.internName(src.Names[s.Name])
				for _, a := range attrs {
					dst.attrs[ci] = append(dst.attrs[ci], Attr{Key: a.Key, Val: dst.internKeyStr(a.Key, src.Vals[a.Val])})
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
