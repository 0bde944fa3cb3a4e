package analyze

// copyTraces appends to dst every span of src whose trace sel selects
// (sel is indexed by src's trace index), in src's arrival order, copies of
// a span included, and returns per src trace its index in dst (-1 when not
// copied) and the number of spans copied. dst must keep the same attribute
// keys as src (both built with the same IndexOptions): key ids are shared.
// The engine uses it to take finalized traces out of a shard's open index
// and to compact the open index; its cost is one pass over src's spans plus
// the interning of what is copied.
func copyTraces(dst, src *Index, sel []bool) (newIdx []int32, copied int) {
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
				r = copyResource(dst, src, s.res)
				resIdx[s.res] = r
			}
			attrs := src.attrsOf(&s)
			ci := dst.attrRoom()
			s.trace, s.res = t, r
			s.name = dst.internName(src.names[s.name])
			s.attrs = int32(ci<<attrChunkBits | len(dst.attrs[ci]))
			s.parent, s.dup = parentNone, false
			for _, a := range attrs {
				dst.attrs[ci] = append(dst.attrs[ci], attr{key: a.key, val: dst.internKeyStr(a.key, src.vals[a.val])})
			}
			dst.appendSpan(s)
			copied++
		}
	}
	return newIdx, copied
}

// copyResource interns src's resource r in dst.
func copyResource(dst, src *Index, r int32) int32 {
	res := src.resources[r]
	start := dst.beginResource()
	for _, a := range src.resAttrs[res.attrs : res.attrs+int32(res.n)] {
		dst.resAttrs = append(dst.resAttrs, attr{key: a.key, val: dst.internString(src.vals[a.val])})
	}
	return dst.endResource(start)
}
