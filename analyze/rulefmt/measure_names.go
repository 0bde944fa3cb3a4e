package rulefmt

// The dump-level measures a rule can compare, by the names rules use. The
// measure table (analyze/report) says how each is read from a report, drawn
// and compared against a baseline; this is the rule language's side of it,
// the names a rules file is checked against when it is parsed, so parsing
// needs no report. A report test pins that the table's rule measures are
// exactly these, in this order.

// poolMeasureNames are the pool and execution figures a rule may name, in
// the measure table's order.
var poolMeasureNames = []string{
	"hit_rate", "cold_start_floor", "excess_misses", "unexplained_misses",
	"acquires", "hits", "misses", "handshakes",
	"multi_session_executions", "max_sessions_per_execution",
}

// latencySeriesNames and latencyQuantileNames make the latency measures a
// rule may name, SERIES.QUANTILE in milliseconds, in the table's order.
var (
	latencySeriesNames   = []string{"acquire_hit", "acquire_miss", "handshake", "call"}
	latencyQuantileNames = []string{"p50", "p95", "p99"}
)

// readsFieldNames are the fields of a reads-per-request measure a rule may
// name as measures.NAME.FIELD, in the reads table's order.
var readsFieldNames = []string{"unexpected", "incomplete", "complete", "requests"}

// ReadsPrefix starts the rule name of a reads-per-request field:
// measures.NAME.FIELD.
const ReadsPrefix = "measures."

// MeasureNames lists the dump-level measures a rule can compare: the pool
// and execution figures, the latency percentiles (milliseconds), and
// measures.NAME.FIELD for each field of each reads-per-request measure of
// the configuration; in the measure table's order.
func MeasureNames(readMeasures []ReadMeasure) []string {
	out := append([]string(nil), poolMeasureNames...)
	for _, s := range latencySeriesNames {
		for _, q := range latencyQuantileNames {
			out = append(out, s+"."+q)
		}
	}
	for _, rm := range readMeasures {
		for _, f := range readsFieldNames {
			out = append(out, ReadsPrefix+rm.Name+"."+f)
		}
	}
	return out
}

// ReadsFieldNames lists the fields of a reads-per-request measure a rule may
// name (measures.NAME.FIELD), in the reads table's order. The caller owns
// the slice.
func ReadsFieldNames() []string { return append([]string(nil), readsFieldNames...) }
