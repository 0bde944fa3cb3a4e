package gate

import (
	"encoding/json"
	"fmt"
	"io"
)

// renderJSON writes the mcptrace.check/v1 JSON, indented.
func (c *CheckReport) renderJSON(w io.Writer) error {
	if w == nil {
		return errNoWriter
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(c); err != nil {
		return fmt.Errorf("render check json: %w", err)
	}
	return nil
}
