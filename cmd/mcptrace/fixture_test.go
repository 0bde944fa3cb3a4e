package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/mcptrace/mcptrace/fixtures"
)

// fixtureServe runs `mcptrace fixture serve args...` in-process and returns
// the URL it printed first, and a stop function that cancels the command's
// context and returns its error.
func fixtureServe(t *testing.T, args ...string) (url string, stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	root := newRootCmd()
	root.SetArgs(append([]string{"fixture", "serve"}, args...))
	root.SetOut(pw)
	root.SetErr(io.Discard)
	errc := make(chan error, 1)
	go func() {
		err := root.ExecuteContext(ctx)
		pw.Close()
		errc <- err
	}()
	lines := make(chan string, 1)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default: // only the first line matters; keep draining
			}
		}
	}()

	timeout := time.NewTimer(30 * time.Second)
	defer timeout.Stop()
	var stopped bool
	stop = func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		for range lines { // wait for the scanner goroutine
		}
		return <-errc
	}
	select {
	case line, ok := <-lines:
		if !ok {
			err := stop()
			t.Fatalf("fixture serve %q printed nothing and ended: %v", args, err)
		}
		t.Cleanup(func() { _ = stop() })
		return line, stop
	case err := <-errc:
		cancel()
		t.Fatalf("fixture serve %q ended before printing a URL: %v", args, err)
	case <-timeout.C:
		cancel()
		t.Fatalf("fixture serve %q printed no URL", args)
	}
	return "", nil
}

// rawFixturePost posts one JSON-RPC body to url with an Mcp-Session-Id and
// returns the status and the response's session header.
func rawFixturePost(t *testing.T, hc *http.Client, url, sessionID, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if sessionID != "" {
		req.Header.Set("Mcp-Session-Id", sessionID)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id")
}

func TestFixtureServe_PrintsURLServesScenarioAndStopsOnCancel(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const call = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`
	tests := []struct {
		args              []string
		wantUnknownStatus int  // answer to a call on a never-issued session id
		wantSessionHeader bool // initialize answer carries Mcp-Session-Id
	}{
		{nil, http.StatusNotFound, true},
		{[]string{"--scenario", "stateful"}, http.StatusNotFound, true},
		{[]string{"--scenario", "sessionless"}, http.StatusOK, false},
		{[]string{"--scenario", "bad-request"}, http.StatusBadRequest, true},
		{[]string{"--scenario", "slow-network", "--addr", "localhost:0"}, http.StatusNotFound, true},
	}
	for _, tc := range tests {
		t.Run(strings.Join(append([]string{"serve"}, tc.args...), " "), func(t *testing.T) {
			url, stop := fixtureServe(t, tc.args...)
			if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, fixtures.MCPPath) {
				t.Fatalf("first line %q, want an http://127.0.0.1:PORT/mcp URL", url)
			}
			transport := &http.Transport{}
			defer transport.CloseIdleConnections()
			hc := &http.Client{Transport: transport}

			cs, err := mcp.NewClient(&mcp.Implementation{Name: "fixture-cmd-test", Version: "v0"}, nil).Connect(t.Context(),
				&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, DisableStandaloneSSE: true},
				&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				t.Fatalf("connect %s: %v", url, err)
			}
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: fixtures.ToolEcho, Arguments: map[string]any{"text": "hi"}})
			if err != nil || res.IsError || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "hi" {
				t.Errorf("echo: %+v, %v; want hi", res, err)
			}
			cs.Close()

			if status, _ := rawFixturePost(t, hc, url, "never-issued", call); status != tc.wantUnknownStatus {
				t.Errorf("call on an unknown session: status %d, want %d", status, tc.wantUnknownStatus)
			}
			if _, sid := rawFixturePost(t, hc, url, "", initialize); (sid != "") != tc.wantSessionHeader {
				t.Errorf("initialize answered with session id %q, want one: %v", sid, tc.wantSessionHeader)
			}

			// The control API is on.
			resp, err := hc.Get(strings.TrimSuffix(url, fixtures.MCPPath) + "/_fixture/stats")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(`"initializes":2`)) {
				t.Errorf("stats: %d %s, want 200 with two initializes", resp.StatusCode, body)
			}

			if err := stop(); err != nil {
				t.Errorf("serve returned %v after cancel, want nil", err)
			}
			transport.CloseIdleConnections()
			if _, err := hc.Get(url); err == nil {
				t.Error("the fixture still answers after the command returned")
			}
		})
	}
}

func TestFixtureServe_LatencyFlagOverridesScenario(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const latency = 60 * time.Millisecond
	url, stop := fixtureServe(t, "--latency", latency.String())
	transport := &http.Transport{}
	defer transport.CloseIdleConnections()
	hc := &http.Client{Transport: transport}
	start := time.Now()
	rawFixturePost(t, hc, url, "never-issued", `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	if elapsed := time.Since(start); elapsed < latency { // a lower bound only
		t.Errorf("request took %v, want at least the --latency %v", elapsed, latency)
	}
	if err := stop(); err != nil {
		t.Errorf("serve: %v", err)
	}
}

func TestFixtureServe_BadInputIsAUsageError(t *testing.T) {
	tests := []struct {
		args     []string
		wantText []string
	}{
		{[]string{"serve", "--scenario", "nope"}, append([]string{`"nope"`}, fixtures.ScenarioNames()...)},
		{[]string{"serve", "--addr", "0.0.0.0:0"}, []string{"--addr", "loopback"}},
		{[]string{"serve", "--addr", "127.0.0.1"}, []string{"--addr", "host:port"}},
		{[]string{"serve", "--addr", "127.0.0.1:99999"}, []string{"--addr", "port \"99999\"", "0 to 65535"}},
		{[]string{"serve", "--addr", "example.com:80"}, []string{"--addr", "loopback"}},
		{[]string{"serve", "--url-file", "/nonexistent-dir/url"}, []string{"--url-file"}},
		{[]string{"serve", "--bogus"}, []string{"unknown flag: --bogus", "see `mcptrace fixture serve --help`"}},
		{[]string{"serve", "--latency", "-1s"}, []string{"--latency", ">= 0"}},
		{[]string{"serve", "extra"}, []string{"extra"}},
		{[]string{"bogus"}, []string{"bogus", "serve or list"}},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			root := newRootCmd()
			root.SetArgs(append([]string{"fixture"}, tc.args...))
			var out bytes.Buffer
			root.SetOut(&out)
			root.SetErr(&out)
			err := root.ExecuteContext(t.Context())
			if err == nil {
				t.Fatalf("fixture %q succeeded, want an error", tc.args)
			}
			var ee *exitError
			if errors.As(err, &ee) && ee.code != 2 {
				t.Errorf("exit code %d, want 2", ee.code)
			}
			for _, want := range tc.wantText {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
			if out.Len() != 0 && strings.HasPrefix(out.String(), "http://") {
				t.Errorf("printed a URL %q on a usage error", out.String())
			}
		})
	}
}

func TestFixtureList_PrintsEveryScenarioWithADescription(t *testing.T) {
	root := newRootCmd()
	root.SetArgs([]string{"fixture", "list"})
	var out bytes.Buffer
	root.SetOut(&out)
	if err := root.ExecuteContext(t.Context()); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	scenarios := fixtures.Scenarios()
	if len(lines) != len(scenarios)+1 {
		t.Fatalf("list printed %d lines, want a header and %d scenarios:\n%s", len(lines), len(scenarios), out.String())
	}
	for i, sc := range scenarios {
		line := lines[i+1]
		if !strings.HasPrefix(line, sc.Name+" ") || !strings.Contains(line, sc.Description) {
			t.Errorf("line %q, want scenario %q with %q", line, sc.Name, sc.Description)
		}
	}
	if !strings.Contains(lines[1], "(default)") {
		t.Errorf("first scenario line %q does not mark the default", lines[1])
	}
}

// The --url-file serve writes is removed when it stops, but only the
// regular file it wrote: a stream it wrote through (a link to /dev/null
// standing in for /dev/stdout, which serve removed once) stays.
func TestFixtureServeRemovesOnlyTheURLFileItWrote(t *testing.T) {
	for _, tc := range []struct {
		name      string
		setup     func(t *testing.T, dir string) string // returns the --url-file path
		wantAfter bool                                  // the path still exists once serve stopped
	}{
		{"a new file", func(t *testing.T, dir string) string { return filepath.Join(dir, "url") }, false},
		{"a link to the null device", func(t *testing.T, dir string) string {
			return link(t, os.DevNull, filepath.Join(dir, "url"))
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.setup(t, t.TempDir())
			_, stop := fixtureServe(t, "--url-file", path)
			if err := stop(); err != nil {
				t.Fatalf("serve: %v", err)
			}
			if _, err := os.Lstat(path); (err == nil) != tc.wantAfter {
				t.Errorf("after serve stopped, Lstat: %v; want it there: %v", err, tc.wantAfter)
			}
		})
	}
}
