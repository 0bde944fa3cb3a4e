package tracegen

import (
	"bytes"
	"fmt"
)

// File is one generated dump: its name under testdata/traces and its bytes.
type File struct {
	Name string
	Data []byte
}

// Files encodes every scenario in every encoding, in a fixed order:
// "<scenario>.<ext>" for each of [Scenarios] and [Encodings]. It is what
// go generate writes to testdata/traces and what the drift test compares
// the committed dumps with.
func Files() ([]File, error) {
	var files []File
	for _, sc := range Scenarios() {
		td := sc.Build()
		for _, enc := range Encodings() {
			var buf bytes.Buffer
			if err := enc.Write(&buf, td); err != nil {
				return nil, fmt.Errorf("encode %s as %s: %w", sc.Name, enc.Name, err)
			}
			files = append(files, File{Name: sc.Name + "." + enc.Ext, Data: buf.Bytes()})
		}
	}
	return files, nil
}
