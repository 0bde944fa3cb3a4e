package analyze

import (
	"strings"

	"github.com/mcptrace/mcptrace/spans"
)

// vocab is the vocabulary resolved against one finished index: the ids of
// the span names and attribute keys the measures read, and which spans are
// calls under the configured profile. Measures share it so each name and key
// is looked up once per analysis, not once per span.
type vocab struct {
	x       *Index
	profile Profile
	// poll stops the measures' long loops when the context of
	// [AnalyzeContext] is done; nil never stops.
	poll *poll

	invoke, acquire, handshake, callTool int32 // name ids, -1 when absent

	kHit, kKey, kAttempt, kReason, kPoolID, kSession, kMethod, kErrType, kAddr, kPort uint16
	rInstance, rService                                                               uint16
	kScope                                                                            int32 // --scope-attr key id, -1 when unset

	valTrue, valToolsCall, valToolError, valRedial, valHealthCheck int32 // value ids, -1 when absent

	callName []bool // per name id: a call span under the profile

	inh map[uint16][]int32 // per key: inherited's values per span index, computed on first use
}

func newVocab(x *Index, cfg Config) *vocab {
	x.finish()
	if cfg.Profile == ProfileAuto {
		cfg.Profile = detectIndex(x, nil).resolve(ProfileAuto) // detect.go
	}
	v := &vocab{
		x:         x,
		profile:   cfg.Profile,
		invoke:    x.nameID(spans.SpanInvoke),
		acquire:   x.nameID(spans.SpanAcquire),
		handshake: x.nameID(spans.SpanHandshake),
		callTool:  x.nameID(spans.SpanCallTool),
		kScope:    -1,
	}
	key := func(k string) uint16 { id, _ := x.lookupKey(k); return id } // vocabulary keys are always kept
	v.kHit, v.kKey, v.kAttempt = key(spans.AttrCacheHit), key(spans.AttrCacheKey), key(spans.AttrAttempt)
	v.kReason, v.kPoolID, v.kSession = key(spans.AttrMissReason), key(spans.AttrPoolID), key(spans.AttrSessionID)
	v.kMethod, v.kErrType = key(spans.AttrMethodName), key(spans.AttrErrorType)
	v.kAddr, v.kPort = key(spans.AttrServerAddress), key(spans.AttrServerPort)
	v.rInstance, v.rService = key(spans.ResourceServiceInstanceID), key(spans.ResourceServiceName)
	if cfg.ScopeAttr != "" {
		if id, ok := x.lookupKey(cfg.ScopeAttr); ok {
			v.kScope = int32(id)
		}
	}
	v.valTrue = 1 // NewIndex interns "false" and "true" first
	v.valToolsCall = x.valueID(spans.MethodToolsCall)
	v.valToolError = x.valueID(spans.ErrTypeToolError)
	v.valRedial = x.valueID(spans.MissRedial)
	v.valHealthCheck = x.valueID(spans.MissHealthCheck)

	v.callName = make([]bool, len(x.names))
	for i, n := range x.names {
		if cfg.Profile == ProfileSemconv {
			v.callName[i] = n == spans.MethodToolsCall || strings.HasPrefix(n, spans.MethodToolsCall+" ")
		} else {
			v.callName[i] = int32(i) == v.callTool
		}
	}
	return v
}

// isCall reports whether span i is a tool call under the profile: the pool's
// call_tool span, or for semconv an MCP client span of tools/call.
func (v *vocab) isCall(i int32) bool {
	s := v.x.sp(i)
	if v.callName[s.name] {
		return true
	}
	if v.profile != ProfileSemconv || v.valToolsCall < 0 {
		return false
	}
	m, ok := v.x.attrVal(i, v.kMethod)
	return ok && m == v.valToolsCall
}

// failed reports whether span i ended in a failure that drops the pool's
// session: status error, unless the error is only the tool's own isError
// answer, which is a clean release.
func (v *vocab) failed(i int32) bool {
	if v.x.sp(i).status != statusError {
		return false
	}
	t, ok := v.x.attrVal(i, v.kErrType)
	return !ok || t != v.valToolError
}

// inherited returns the value of key on span i or its nearest ancestor that
// has it: the pool may set scope and key on the invoke span only.
// The values are computed for every span in one pass (each span resolved
// once, Index.inheritedValues) on the first call for a key, so a deep
// chain costs no walk per span.
func (v *vocab) inherited(i int32, key uint16) (int32, bool) {
	vals, ok := v.inh[key]
	if !ok {
		vals = v.x.inheritedValues(key)
		if v.inh == nil {
			v.inh = map[uint16][]int32{}
		}
		v.inh[key] = vals
	}
	if val := vals[i]; val >= 0 {
		return val, true
	}
	return 0, false
}

// scopeOf names the pool scope of span i as an interned value, -1 when
// nothing names it. With --scope-attr only that attribute counts.
func (v *vocab) scopeOf(i int32) int32 {
	if v.kScope >= 0 {
		k := uint16(v.kScope)
		if val, ok := v.inherited(i, k); ok {
			return val
		}
		if val, ok := v.x.resAttrVal(i, k); ok {
			return val
		}
		return -1
	}
	if val, ok := v.inherited(i, v.kPoolID); ok {
		return val
	}
	if val, ok := v.x.resAttrVal(i, v.rInstance); ok {
		return val
	}
	if val, ok := v.x.resAttrVal(i, v.rService); ok {
		return val
	}
	return -1
}

// valueString returns an interned value, "" for -1.
func (v *vocab) valueString(id int32) string {
	if id < 0 {
		return ""
	}
	return v.x.vals[id]
}

// countNames returns the number of spans of each name id.
func (v *vocab) countNames() []int {
	counts := make([]int, len(v.x.names))
	for _, i := range v.x.order {
		if v.poll.stop() {
			break
		}
		counts[v.x.sp(i).name]++
	}
	return counts
}

// nameCount returns counts[name], 0 for an absent name (-1).
func nameCount(counts []int, name int32) int {
	if name < 0 {
		return 0
	}
	return counts[name]
}

// callSpans returns how many spans carry a call span name: a capacity hint,
// since semconv calls may also be recognised by attribute alone.
func (v *vocab) callSpans(counts []int) int {
	n := 0
	for id, c := range counts {
		if v.callName[id] {
			n += c
		}
	}
	return n
}

// optStr is an interned value taken out of its index: a string that may be
// absent. Absent (id -1) is not the same as "", so the figures keyed by it
// group exactly as they would by id within one index.
type optStr struct {
	s  string
	ok bool
}

// optValue returns the value of id as an optStr.
func (v *vocab) optValue(id int32) optStr {
	if id < 0 {
		return optStr{}
	}
	return optStr{s: v.x.vals[id], ok: true}
}
