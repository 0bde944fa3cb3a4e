// Package backend reads traces where they live: a tracing backend's query
// API as an ingest.Source, so `mcptrace analyze`, check, diff and whatif
// judge last night's production traces without a dump made by hand.
//
// A [Query] is a window of a backend's traces (services, a start and an
// end, a filter the API supports). Its Read pages through the window from
// its start, each page decoded by ingest.ReadFrom exactly as a file is and
// handed to the engine as it arrives, so memory holds one page, not the
// window; a page that comes back full is asked again over half its range,
// and one still full at the narrowest range cuts the window, which the
// report says (a partial run). Each trace is handed over once, by the
// page that owns it, though the backend returns it to every page one of
// its spans matches; a trace still receiving spans (its latest younger
// than the settle time) is counted, not judged.
//
// A [Client] makes the requests: every answer read to a bound, retried
// with backoff on 429 and 5xx only and never past the context's
// deadline, its credential (from the environment or a file, never a flag)
// sent to the backend's origin only and never written into an error.
//
// An [API] is one backend: [Jaeger] is Jaeger v2's /api/v3, which answers
// OTLP JSON. Another backend whose API answers OTLP JSON is one more file
// implementing API.
package backend
