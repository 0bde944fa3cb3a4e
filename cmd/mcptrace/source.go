package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcptrace/mcptrace/analyze/backend"
	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// credentialEnv names the environment variable holding the backend's
// credential: a bearer token, or a whole "Name: value" header.
const credentialEnv = "MCPTRACE_BACKEND_CREDENTIAL"

// sourceFlags say where spans come from when they are not files: a
// tracing backend's query API, a window and the services in it. analyze,
// check and whatif share them.
type sourceFlags struct {
	jaeger      string
	services    []string
	since       time.Duration
	start, end  string
	operation   string
	minDuration time.Duration
	maxDuration time.Duration
	pageTraces  int
	settle      time.Duration
	timeout     time.Duration
	caFile      string
	credFile    string
}

// addSourceFlags registers the backend flags on fl.
func addSourceFlags(fl *pflag.FlagSet, f *sourceFlags) {
	fl.StringVar(&f.jaeger, "jaeger", "", "read from a Jaeger v2 query service at this URL (e.g. http://127.0.0.1:16686) instead of files; credentials from $"+credentialEnv+" or --backend-credential-file")
	fl.StringArrayVar(&f.services, "service", nil, "with --jaeger: a service whose traces to read (repeat for more; required)")
	fl.DurationVar(&f.since, "since", 0, "with --jaeger: the window is the last DURATION, e.g. 1h or 24h (ending --settle ago)")
	fl.StringVar(&f.start, "start", "", "with --jaeger: the window's start, RFC 3339 (e.g. 2026-12-03T00:00:00Z)")
	fl.StringVar(&f.end, "end", "", "with --jaeger: the window's end, RFC 3339 (default: --settle ago)")
	fl.StringVar(&f.operation, "operation", "", "with --jaeger: only traces with a span of this name in the service")
	fl.DurationVar(&f.minDuration, "min-duration", 0, "with --jaeger: only traces with a span of the service at least this long")
	fl.DurationVar(&f.maxDuration, "max-duration", 0, "with --jaeger: only traces with a span of the service at most this long")
	fl.IntVar(&f.pageTraces, "page-traces", backend.DefaultPageTraces, "with --jaeger: the most traces one request asks for (at most the backend's max_traces)")
	fl.DurationVar(&f.settle, "settle", backend.DefaultSettle, "with --jaeger: a trace whose latest span ended less than this ago is still being written: not judged")
	fl.DurationVar(&f.timeout, "backend-timeout", backend.DefaultTimeout, "with --jaeger: the bound on each request (429 and 5xx are retried with backoff)")
	fl.StringVar(&f.caFile, "backend-ca-file", "", "with --jaeger: PEM file of the CAs an https backend's certificate must chain to")
	fl.StringVar(&f.credFile, "backend-credential-file", "", "with --jaeger: file whose first line is a bearer token or a \"Name: value\" header (else $"+credentialEnv+")")
}

// backendFlags are the flags only --jaeger gives a meaning to.
var backendFlags = []string{"service", "since", "start", "end", "operation", "min-duration", "max-duration", "page-traces", "settle", "backend-timeout", "backend-ca-file", "backend-credential-file"}

// source resolves where spans come from: the paths as files, or with
// --jaeger the backend's window. Every mistake is a usage error (exit 2).
func (f sourceFlags) source(fl *pflag.FlagSet, paths []string, now time.Time) (ingest.Source, error) {
	if f.jaeger == "" {
		for _, name := range backendFlags {
			if fl.Changed(name) {
				return nil, usageErrorf("--%s reads a backend: give --jaeger URL too", name)
			}
		}
		return ingest.Files(paths), nil
	}
	if len(paths) > 0 {
		return nil, usageErrorf("--jaeger reads a backend: give no PATH (got %s)", ingest.QuoteText(paths[0]))
	}
	if len(f.services) == 0 {
		return nil, usageErrorf("--jaeger needs --service NAME (repeat it for more)")
	}
	start, end, err := f.window(now)
	if err != nil {
		return nil, err
	}
	if f.pageTraces <= 0 || f.settle < 0 || f.timeout <= 0 || f.minDuration < 0 || f.maxDuration < 0 {
		return nil, usageErrorf("--page-traces and --backend-timeout: want more than 0; --settle and the durations: want 0 or more")
	}
	cred, err := backend.ReadCredential(f.credFile, credentialEnv)
	if err != nil {
		return nil, usageErrorf("--backend-credential-file: %w", err)
	}
	c, err := backend.NewClient(backend.ClientOptions{URL: f.jaeger, Header: cred, CAFile: f.caFile, Timeout: f.timeout, UserAgent: "mcptrace"})
	if err != nil {
		return nil, usageErrorf("--jaeger: %w", err)
	}
	return &backend.Query{
		API: backend.Jaeger{}, Client: c, Services: f.services, Start: start, End: end,
		Filter:     backend.Filter{Operation: f.operation, MinDuration: f.minDuration, MaxDuration: f.maxDuration},
		PageTraces: f.pageTraces, Settle: f.settle, Now: func() time.Time { return now },
	}, nil
}

// window resolves --since, --start and --end into the window [start,
// end): its end defaults to --settle before now, so traces still being
// written stay out of it.
func (f sourceFlags) window(now time.Time) (time.Time, time.Time, error) {
	end := now.Add(-f.settle)
	if f.end != "" {
		t, err := time.Parse(time.RFC3339Nano, f.end)
		if err != nil {
			return time.Time{}, time.Time{}, usageErrorf("--end %s: want RFC 3339, e.g. 2026-12-03T00:00:00Z", ingest.QuoteText(f.end))
		}
		end = t
	}
	var start time.Time
	switch {
	case f.since > 0 && f.start != "":
		return start, end, usageErrorf("--since and --start: give one")
	case f.since > 0:
		start = end.Add(-f.since)
	case f.start != "":
		t, err := time.Parse(time.RFC3339Nano, f.start)
		if err != nil {
			return start, end, usageErrorf("--start %s: want RFC 3339, e.g. 2026-12-03T00:00:00Z", ingest.QuoteText(f.start))
		}
		start = t
	default:
		return start, end, usageErrorf("--jaeger needs a window: --since DURATION, or --start TIME (and --end TIME)")
	}
	if !start.Before(end) {
		return start, end, usageErrorf("the window %s .. %s is empty: its start must come before its end", start.Format(time.RFC3339), end.Format(time.RFC3339))
	}
	return start, end, nil
}

// backendError turns a backend's refusal into the CLI's words and exit
// code: a service the backend does not know exits 3, naming the nearest
// known one and the others; anything else is exit 2.
func backendError(err error) error {
	var ue *backend.UnknownServiceError
	if !errors.As(err, &ue) {
		return nil
	}
	msg := fmt.Sprintf("%s: no service %s", ue.URL, ingest.QuoteText(ue.Service))
	if near := rulefmt.NearestName(ue.Service, ue.Known); near != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", ingest.QuoteText(near))
	}
	switch {
	case len(ue.Known) == 0:
		msg += "; it knows none: has anything sent it spans?"
	case len(ue.Known) <= 20:
		msg += "; it knows " + quoteAll(ue.Known)
	default:
		msg += fmt.Sprintf("; it knows %d, the first 20: %s", len(ue.Known), quoteAll(ue.Known[:20]))
	}
	return &exitError{code: 3, err: errors.New(msg)}
}

// quoteAll quotes each name for a terminal, comma-separated.
func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = ingest.QuoteText(n)
	}
	return strings.Join(q, ", ")
}
