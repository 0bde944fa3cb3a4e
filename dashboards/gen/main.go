// Command gen writes the generated Grafana dashboards into a directory; `go
// generate ./dashboards` runs it to refresh the committed JSON.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/mcptrace/mcptrace/dashboards"
)

func main() {
	out := flag.String("out", ".", "directory to write the dashboard JSON into")
	flag.Parse()
	files, err := dashboards.Generate()
	if err == nil {
		var written []dashboards.Written
		// The committed files are the generator's own: replace them.
		written, err = dashboards.Write(*out, files, true)
		for _, w := range written {
			fmt.Println(w.Status, w.Path)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
