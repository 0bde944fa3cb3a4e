// Command duckhit computes the pool's hit rate from an OTLP JSON lines dump
// with DuckDB, as a user who picked DuckDB instead of mcptrace would:
// read_json with DuckDB's defaults, unnest down to the spans, count the
// acquire spans and those whose hit attribute is true. scripts/bench-versus.sh
// times it against `mcptrace analyze`.
//
// It is its own module (this directory's go.mod) so that the main module
// neither requires DuckDB nor builds its cgo library in `go test ./...` or
// `go vet ./...`.
//
// Usage:
//
//	duckhit FILE SPAN_NAME ATTR_KEY
//
// It prints {"acquires":N,"hits":M,"duckdb":"VERSION"}.
package main

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	_ "github.com/duckdb/duckdb-go/v2" // registers the "duckdb" driver
)

// main reports a failure on stderr with a non-zero status, so the bench
// script stops instead of comparing a missing answer.
func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "duckhit:", err)
		os.Exit(1)
	}
}

// run opens an in-memory DuckDB with its defaults (threads, memory limit),
// runs the one query and prints the two counts as JSON, the shape the bench
// script compares with every other tool's, with DuckDB's version for the
// section to name.
func run(args []string) error {
	if len(args) != 3 {
		return errors.New("usage: duckhit FILE SPAN_NAME ATTR_KEY")
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return fmt.Errorf("open duckdb: %w", err)
	}
	defer db.Close()
	var version string
	if err := db.QueryRow(`SELECT version()`).Scan(&version); err != nil {
		return fmt.Errorf("duckdb version: %w", err)
	}
	var acquires, hits int64
	if err := db.QueryRow(query(args[0], args[1], args[2])).Scan(&acquires, &hits); err != nil {
		return fmt.Errorf("query %s: %w", args[0], err)
	}
	return json.NewEncoder(os.Stdout).Encode(struct {
		Acquires int64  `json:"acquires"`
		Hits     int64  `json:"hits"`
		DuckDB   string `json:"duckdb"`
	}{acquires, hits, version})
}

// query is the SQL a DuckDB user would write: read_json (schema detected,
// defaults otherwise) of the OTLP JSON lines, one unnest per level of
// resourceSpans → scopeSpans → spans, then the acquires and, among them,
// those carrying the hit attribute with boolValue true. The file, name and
// key are literals (table functions and lambdas take no bound parameters),
// quoted by lit.
func query(file, span, attr string) string {
	return `WITH rs AS (SELECT unnest(resourceSpans) AS r FROM read_json(` + lit(file) + `)),
ss AS (SELECT unnest(r.scopeSpans) AS s FROM rs),
sp AS (SELECT unnest(s.spans) AS p FROM ss)
SELECT count(*) AS acquires,
	count(*) FILTER (WHERE len(list_filter(p.attributes, a -> a.key = ` + lit(attr) + ` AND a.value.boolValue)) > 0) AS hits
FROM sp WHERE p.name = ` + lit(span)
}

// lit quotes s as an SQL string literal, doubling its single quotes, so a
// path or name with a quote cannot end the literal early.
func lit(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
