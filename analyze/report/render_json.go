package report

import (
	"encoding/json"
	"fmt"
	"io"
)

// renderJSON writes the report as indented JSON: the mcptrace.analysis/v1
// contract documented in docs/analysis-schema.md.
func (r *Report) renderJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("render json: %w", err)
	}
	return nil
}
