package peers

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// readyPrefix starts the line a peer prints on stdout once it listens,
// followed by a JSON object with its "url" (and, for the scripts, its
// "control" base URL).
const readyPrefix = "MCPTRACE_PEER_READY "

// ready is the JSON object of the ready line.
type ready struct {
	Name    string `json:"name"`
	URL     string `json:"url"`
	Control string `json:"control"`
}

// process is one running node: its ready line, its output (bounded, for
// error messages) and its end.
type process struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *tail
	readyC chan ready
	read   chan struct{} // closed when stdout is read to its end
	exited chan struct{} // closed when Wait returned
	waitMu sync.Mutex
	err    error // Wait's; read after exited
}

// startProcess starts cmd and waits, at most bound, for its ready line.
func startProcess(cmd *exec.Cmd, bound time.Duration) (*process, ready, error) {
	p := &process{cmd: cmd, out: &tail{max: 64 << 10}, readyC: make(chan ready, 1), read: make(chan struct{}), exited: make(chan struct{})}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, ready{}, fmt.Errorf("peers: stdin pipe: %w", err)
	}
	p.stdin = stdin
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, ready{}, fmt.Errorf("peers: stdout pipe: %w", err)
	}
	cmd.Stderr = p.out
	// A grandchild holding the pipes open must not hang Wait.
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, ready{}, fmt.Errorf("peers: start %s: %w", strings.Join(cmd.Args, " "), err)
	}
	go p.scan(stdout)
	go func() {
		<-p.read
		err := cmd.Wait()
		p.waitMu.Lock()
		p.err = err
		p.waitMu.Unlock()
		close(p.exited)
	}()
	timer := time.NewTimer(bound)
	defer timer.Stop()
	select {
	case r := <-p.readyC:
		return p, r, nil
	case <-p.exited:
		return nil, ready{}, fmt.Errorf("peers: %s exited before its ready line (%v); output:\n%s", strings.Join(cmd.Args, " "), p.waitErr(), p.out)
	case <-timer.C:
		_ = p.stop()
		return nil, ready{}, fmt.Errorf("peers: %s printed no ready line within %s; output:\n%s", strings.Join(cmd.Args, " "), bound, p.out)
	}
}

// scan reads stdout to its end: the first ready line goes to readyC, every
// line to the tail. Draining matters: a peer that logs each request (as
// server-everything does) would block on a full pipe.
func (p *process) scan(stdout io.Reader) {
	defer close(p.read)
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	sent := false
	for sc.Scan() {
		line := sc.Text()
		if !sent && strings.HasPrefix(line, readyPrefix) {
			var r ready
			if err := json.Unmarshal([]byte(line[len(readyPrefix):]), &r); err == nil && r.URL != "" {
				p.readyC <- r
				sent = true
				continue
			}
		}
		_, _ = p.out.Write([]byte(line + "\n"))
	}
	_, _ = io.Copy(io.Discard, stdout)
}

func (p *process) waitErr() error {
	p.waitMu.Lock()
	defer p.waitMu.Unlock()
	return p.err
}

// stop ends the process: its stdin closes (the peers exit on that), then
// after a grace period it is killed. It returns once Wait has returned.
func (p *process) stop() error {
	_ = p.stdin.Close()
	grace := time.NewTimer(5 * time.Second)
	defer grace.Stop()
	select {
	case <-p.exited:
	case <-grace.C:
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
	var ee *exec.ExitError
	if err := p.waitErr(); err != nil && !errors.As(err, &ee) {
		return fmt.Errorf("peers: wait for %s: %w", p.cmd.Path, err)
	}
	return nil
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, b...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(b), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
