package render

import "strings"

// nullTo writes the compact JSON value raw (encoding/json's output) to in,
// with the value at each path (keys from the top; a key ending in "[]"
// names an array, the rest of the path applying to each of its elements)
// replaced by null, every key kept in its place. A path through a value
// that is not an object (an array, for "[]"), or to a key raw lacks,
// changes nothing. It reads raw in place: the report of many scopes is
// never copied whole.
func nullTo(in *indenter, raw []byte, paths [][]string) {
	if len(paths) == 0 || len(raw) < 2 || raw[0] != '{' {
		in.write(raw)
		return
	}
	in.byte('{')
	for i := 1; i < len(raw) && raw[i] != '}'; {
		if raw[i] == ',' {
			in.byte(',')
			i++
		}
		keyEnd := stringEnd(raw, i)
		in.write(raw[i:keyEnd])
		in.byte(':')
		valEnd := valueEnd(raw, keyEnd+1)
		val := raw[min(keyEnd+1, valEnd):valEnd]
		null, sub, each := pathsUnder(raw[i+1:max(i+1, keyEnd-1)], paths)
		switch {
		case null:
			in.write([]byte("null"))
		case len(each) > 0:
			nullEachTo(in, val, each)
		default:
			nullTo(in, val, sub)
		}
		i = valEnd
	}
	in.byte('}')
}

// nullEachTo writes the JSON array raw to in with nullTo applied with
// paths to each element; a value that is not an array is written as it is.
func nullEachTo(in *indenter, raw []byte, paths [][]string) {
	if len(raw) < 2 || raw[0] != '[' {
		in.write(raw)
		return
	}
	in.byte('[')
	for i := 1; i < len(raw) && raw[i] != ']'; {
		if raw[i] == ',' {
			in.byte(',')
			i++
		}
		end := valueEnd(raw, i)
		nullTo(in, raw[i:end], paths)
		i = max(end, i+1)
	}
	in.byte(']')
}

// pathsUnder sorts the paths that start at key (as raw JSON, between its
// quotes: encoding/json escapes no character a path's key holds, so the
// raw and the decoded key agree on every path): whether one ends there
// (null), the rest of those going on into its object (sub), and of those
// naming it an array, "key[]", the rest for each element (each).
func pathsUnder(key []byte, paths [][]string) (null bool, sub, each [][]string) {
	for _, p := range paths {
		if len(p) == 0 {
			continue // a path to the elements themselves: none is drawn so
		}
		name, many := strings.CutSuffix(p[0], "[]")
		switch {
		case name != string(key):
		case many:
			each = append(each, p[1:])
		case len(p) == 1:
			null = true
		default:
			sub = append(sub, p[1:])
		}
	}
	return null, sub, each
}

// stringEnd returns the index just past the JSON string that starts at
// raw[i] (a quote), or len(raw) when it does not end.
func stringEnd(raw []byte, i int) int {
	for j := i + 1; j < len(raw); j++ {
		switch raw[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(raw)
}

// valueEnd returns the index just past the compact JSON value that starts
// at raw[i], or len(raw) when it does not end.
func valueEnd(raw []byte, i int) int {
	depth := 0
	for j := i; j < len(raw); j++ {
		switch c := raw[j]; c {
		case '"':
			j = stringEnd(raw, j) - 1
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return j // the end of the enclosing value
			}
			depth--
		case ',':
			if depth == 0 {
				return j
			}
		}
		if depth == 0 && (raw[j] == '"' || raw[j] == '}' || raw[j] == ']') {
			return j + 1
		}
	}
	return len(raw)
}
