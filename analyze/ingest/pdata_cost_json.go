package ingest

import (
	"bytes"
	"unicode/utf8"
)

// What a JSON record takes to decode. pdata's JSONUnmarshaler builds the
// same messages from a JSON record as its ProtoUnmarshaler from a
// protobuf one, so a JSON record pdata decodes is charged as pdataBytes
// charges a protobuf one: its bytes, which the strings pdata copies take
// at most, and its messages at pdataMessageBytes, counted by a scan that
// follows the OTLP member names pdata reads (camelCase or snake_case).
// A record normalised first (every Tempo record, and an OTLP one pdata
// does not read as it stands: normalizeRequest) also goes through
// encoding/json's map[string]any, which holds up to twenty times the
// record (a map of one member holds 336 bytes: an attribute of 37 bytes,
// two of them, some 700), and is encoded back: the same scan counts the
// tree's maps, slices and strings (TestTheTreeEstimateHoldsWhatEncodingJSONBuilds
// holds that count to the runtime's), and a few counts of bytes bound what
// the encoding writes.

// jsonCost is what decoding one JSON record takes (jsonCosts).
type jsonCost struct {
	size int64 // the record's bytes
	msgs int64 // what pdata holds for the messages it builds of the record
	tree int64 // what encoding/json's map[string]any of the record holds, its strings and any copy protectBytes makes included
	out  int64 // the most json.Marshal writes encoding that tree back (withEncoding)
}

// pdataOf is what pdata holds once it decoded n bytes of JSON that hold
// the record's messages: the messages, and the strings it copies out of
// the n bytes.
func (c jsonCost) pdataOf(n int64) int64 { return n + c.msgs }

// normalized is what the record takes on its way through
// normalizeRequest or normalizeResourceSpans and then pdata: the tree,
// the decoder's buffer (which grows to twice the record), the tree's
// encoding (json.Marshal's buffer and its copy), the encoding's wrapped
// copy, and what pdata builds of it. They are summed, though each step
// lets the one before it go: the collector may not have taken it yet.
// c must be withEncoding's.
func (c jsonCost) normalized() int64 {
	return c.tree + 2*c.size + 3*c.out + c.pdataOf(c.out)
}

// withEncoding adds to c, the cost of data, what normalising data takes
// past the scan: the bound of the tree's encoding, and, when data holds
// bytes that are not valid UTF-8, the copies protectBytes makes. It is a
// few passes of the library's vector code, done only for a record that
// is normalised.
func (c jsonCost) withEncoding(data []byte) jsonCost {
	// json.Marshal writes every string's <, > and & as \u003c (six
	// bytes), U+2028 and U+2029 as \u2028 (six for three, and 0xe2 leads
	// them), base64 ids as hex (four thirds of their length), and takes
	// out the white space.
	html := bytes.Count(data, []byte{'<'}) + bytes.Count(data, []byte{'>'}) + bytes.Count(data, []byte{'&'})
	c.out = c.size + c.size/3 + 5*int64(html) + 3*int64(bytes.Count(data, []byte{0xe2}))
	if !utf8.Valid(data) {
		// protectBytes copies the record with three bytes for each byte
		// that is not valid UTF-8 (and its strings, in the tree, take as
		// much more: twice the record bounds them), and the encoding
		// (restoreBytes copies that back).
		c.tree += 3*c.size + 2*c.size
		c.out *= 3
	}
	return c
}

// Costs of encoding/json's map[string]any tree on 64-bit Go: an array
// element's slot in a slice appended to (twice its 16 bytes, for the room
// growth leaves), the header of a boxed slice, string or number, and a
// map (mapBytes).
const (
	treeSlot = 32
	treeBox  = 16
)

// mapBytes is what a map[string]any of n members holds (Go's swiss
// tables): its header alone when empty; with its first member, one group
// of eight 32-byte slots and their control word (264 bytes, in a block of
// 288); past eight, a table whose capacity doubles once the groups are
// seven eighths full, with its header and directory, the groups' blocks
// rounded up a size class.
func mapBytes(n int64) int64 {
	const header = 48
	switch {
	case n == 0:
		return header
	case n <= 8:
		return header + 288
	}
	slots := int64(16)
	for slots*7/8 < n {
		slots *= 2
	}
	tables := (slots + 1023) / 1024
	return header + 56*tables + slots*33*9/8
}

// jsonCosts scans a JSON record, whose value is an OTLP message of level
// top (pbRequest for a request, pbResourceSpans for a document's
// element), for what pdata builds of it and what encoding/json's tree of
// it holds (withEncoding adds what normalising it takes besides). It is
// linear, allocates at most a stack of MaxDepth frames, and does not
// validate: a record it misreads pdata refuses.
func jsonCosts(data []byte, top protoLevel) jsonCost {
	s := jsonCostScan{topLevel: top}
	s.scan(data)
	for len(s.st) > 0 || s.deep > 0 { // a record cut short: what it opened was built
		s.close(len(data))
	}
	// Every string is a key or a value, boxed; a key is an object's
	// member.
	tree := s.tree + s.strs + treeBox*max(s.strings-s.keys, 0)
	return jsonCost{size: int64(len(data)), msgs: s.msgs, tree: tree}
}

// jsonCostScan is the state of jsonCosts' scan.
type jsonCostScan struct {
	topLevel protoLevel
	st       []costFrame // the open containers, at most maxCostFrames
	deep     int         // containers open past maxCostFrames: counted, not kept
	last     int         // where the last token seen starts
	msgs     int64
	tree     int64
	strs     int64 // the bytes of the tree's strings, keys included
	strings  int64 // strings, keys included
	keys     int64 // objects' members
}

// costFrame is one open object or array of the scan.
type costFrame struct {
	arr bool
	lvl protoLevel // an object's message, or an array's elements'; pbNone for what pdata does not build
	at  int        // where it opens
	sep int64      // the commas between its members or elements so far
}

// pbNone is the level of a JSON value that is no OTLP message pdata
// builds: an unknown member's, an array's inside an array.
const pbNone protoLevel = 255

// maxCostFrames bounds the scan's stack: the records it scans were cut
// at MaxDepth (cutJSONRecord), so a deeper container is never met, and
// would be counted at the least it holds.
const maxCostFrames = MaxDepth + 1

// scan walks data: strings are jumped over a buffer at a time
// (stringEnd), the bytes between them looked at one by one. The key of
// an object's member that opens a container is the last string read
// before it.
func (s *jsonCostScan) scan(data []byte) {
	var key []byte
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case ' ', '\t', '\r', '\n', ':':
			continue
		case '"':
			end := stringEnd(data, i)
			key = data[i+1 : end]
			s.strings++
			s.strs += allocBytes(len(key))
			s.last, i = i, end
			continue
		case '{', '[':
			s.open(c == '[', key, i)
		case '}', ']':
			s.close(i)
		case ',':
			if n := len(s.st); n > 0 && s.deep == 0 {
				s.st[n-1].sep++
			}
		default:
			j := i + 1
			for j < len(data) && !jsonDelim(data[j]) {
				j++
			}
			if c != 't' && c != 'f' && c != 'n' { // a number, kept as its text (UseNumber), boxed
				s.tree += treeBox + allocBytes(j-i)
			}
			s.last, i = i, j-1
			continue
		}
		s.last = i
	}
}

// jsonDelim reports whether c ends a scalar.
func jsonDelim(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\n', ',', ':', '[', ']', '{', '}', '"':
		return true
	}
	return false
}

// open counts an object or array that opens at i, in an object's member
// named key when its container is an object: the message pdata builds of
// an object, and the tree's boxed slice of an array (a map and a slice's
// slots are counted as they close, by their members).
func (s *jsonCostScan) open(arr bool, key []byte, i int) {
	lvl := s.childLevel(arr, key)
	if arr {
		s.tree += treeBox
	} else if int(lvl) < len(pdataMessageBytes) {
		s.msgs += pdataMessageBytes[lvl]
	}
	if s.deep > 0 || len(s.st) == maxCostFrames {
		s.deep++
		if !arr {
			s.tree += mapBytes(8)
		}
		return
	}
	s.st = append(s.st, costFrame{arr: arr, lvl: lvl, at: i})
}

// close ends the innermost container at i: an object with its map, an
// array with its slots. It holds something when a token came after it
// opened; then its members or elements are its commas and one.
func (s *jsonCostScan) close(i int) {
	switch {
	case s.deep > 0:
		s.deep--
		return
	case len(s.st) == 0:
		return
	}
	f := s.st[len(s.st)-1]
	s.st = s.st[:len(s.st)-1]
	n := f.sep
	if s.last > f.at {
		n++
	}
	if f.arr {
		s.tree += treeSlot * n
	} else {
		s.tree += mapBytes(n)
		s.keys += n
	}
	s.last = i
}

// childLevel is the level of an object (for an array, of its elements)
// that opens inside the innermost container: the record's own at the
// top, an array's elements', or the one an object's member key names.
func (s *jsonCostScan) childLevel(arr bool, key []byte) protoLevel {
	if s.deep > 0 {
		return pbNone
	}
	if len(s.st) == 0 {
		if arr {
			return pbNone
		}
		return s.topLevel
	}
	f := &s.st[len(s.st)-1]
	switch {
	case f.arr && arr:
		return pbNone
	case f.arr:
		return f.lvl
	}
	var buf [maxChildName]byte
	c, ok := jsonChild(f.lvl, memberName(key, &buf))
	if !ok || c.arr != arr {
		return pbNone
	}
	return c.level
}

// childOf is a member of an OTLP message that holds messages: one object,
// or an array of them.
type childOf struct {
	level protoLevel
	arr   bool
}

// jsonChild returns the member name of a message of level lvl that holds
// messages, if it is one, in both spellings pdata reads, and the names
// older exporters wrote that normalizeRequest renames (protoChildren's
// fields, in JSON).
func jsonChild(lvl protoLevel, name []byte) (childOf, bool) {
	switch lvl {
	case pbRequest:
		return named(name, childOf{pbResourceSpans, true}, "resourceSpans", "resource_spans")
	case pbResourceSpans:
		if c, ok := named(name, childOf{pbResource, false}, "resource"); ok {
			return c, ok
		}
		return named(name, childOf{pbScopeSpans, true}, "scopeSpans", "scope_spans", "instrumentationLibrarySpans", "instrumentation_library_spans")
	case pbScopeSpans:
		if c, ok := named(name, childOf{pbSpan, true}, "spans"); ok {
			return c, ok
		}
		return named(name, childOf{pbScope, false}, "scope", "instrumentationLibrary", "instrumentation_library")
	case pbSpan:
		if c, ok := named(name, childOf{pbEvent, true}, "events"); ok {
			return c, ok
		}
		if c, ok := named(name, childOf{pbLink, true}, "links"); ok {
			return c, ok
		}
		return named(name, childOf{pbKeyValue, true}, "attributes")
	case pbResource, pbScope, pbEvent, pbLink:
		return named(name, childOf{pbKeyValue, true}, "attributes")
	case pbKeyValue:
		return named(name, childOf{pbAnyValue, false}, "value")
	case pbAnyValue:
		if c, ok := named(name, childOf{pbArrayValue, false}, "arrayValue", "array_value"); ok {
			return c, ok
		}
		return named(name, childOf{pbKVList, false}, "kvlistValue", "kvlist_value")
	case pbArrayValue:
		return named(name, childOf{pbAnyValue, true}, "values")
	case pbKVList:
		return named(name, childOf{pbKeyValue, true}, "values")
	}
	return childOf{}, false
}

// named returns c when name is one of names.
func named(name []byte, c childOf, names ...string) (childOf, bool) {
	for _, n := range names {
		if string(name) == n {
			return c, true
		}
	}
	return childOf{}, false
}

// maxChildName is longer than every name jsonChild knows.
const maxChildName = 32

// memberName is the name a key's content stands for, with its escapes
// read (pdata reads them: "\u0073pans" is spans) into buf; nil when it
// cannot be a name jsonChild knows (too long, not ASCII, a bad escape).
func memberName(key []byte, buf *[maxChildName]byte) []byte {
	if bytes.IndexByte(key, '\\') < 0 {
		return key
	}
	n := 0
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c == '\\' {
			var ok bool
			if c, i, ok = unescapeASCII(key, i); !ok {
				return nil
			}
		}
		if n == len(buf) {
			return nil
		}
		buf[n] = c
		n++
	}
	return buf[:n]
}

// unescapeASCII reads the escape at key[i] (a backslash): the ASCII byte
// it stands for and the index of its last byte; false for an escape of a
// character past ASCII, or a bad one.
func unescapeASCII(key []byte, i int) (byte, int, bool) {
	if i+1 >= len(key) {
		return 0, i, false
	}
	switch e := key[i+1]; e {
	case '"', '\\', '/':
		return e, i + 1, true
	case 'u':
		if i+6 > len(key) {
			return 0, i, false
		}
		var r int
		for _, h := range key[i+2 : i+6] {
			v, ok := hexValue(h)
			if !ok {
				return 0, i, false
			}
			r = r<<4 | v
		}
		return byte(r), i + 5, r < utf8.RuneSelf
	}
	return 0, i, false // \b, \f, \n, \r, \t: no name holds one
}

// hexValue is the value of a hex digit.
func hexValue(c byte) (int, bool) {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0'), true
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10, true
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10, true
	}
	return 0, false
}

// allocBytes is what the runtime allocates for a string of n bytes: its
// size class, at most an eighth over n past the smallest.
func allocBytes(n int) int64 {
	if n == 0 {
		return 0
	}
	return int64(n+7)&^7 + int64(n/8)
}
