package ingest

import (
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"strconv"
	"strings"
	"sync"
)

// The memory budget. Every reader and the index check it before they take
// memory, so a hostile input ends with a clear error (ErrMemoryLimit, or a
// record cut with a warning) rather than with the kernel's OOM killer.

// maxMemoryCap is the largest default budget.
const maxMemoryCap = 1 << 30

// DefaultMaxMemory is the memory budget when none is given: a quarter of
// the machine's memory (or of the cgroup limit, if lower), at most 1 GiB,
// at least 64 MiB.
func DefaultMaxMemory() int64 { return defaultBudget(machineMemory()) }

// defaultBudget is DefaultMaxMemory for a machine of total bytes (0 or
// less: unknown, the largest default).
func defaultBudget(total int64) int64 {
	if total <= 0 {
		return maxMemoryCap
	}
	return max(min(total/4, maxMemoryCap), 64<<20)
}

// machineMemory returns the memory this process may use: the cgroup v2
// limit when set, else MemTotal; 0 when unknown.
func machineMemory() int64 {
	var total int64
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				f := strings.Fields(rest)
				if len(f) >= 1 {
					if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil {
						total = kb << 10
					}
				}
			}
		}
	}
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if lim, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && lim > 0 && (total == 0 || lim < total) {
			total = lim
		}
	}
	return total
}

// budget is the memory budget of one read.
type budget int64

func (o ReadOptions) budget() budget {
	if o.MaxMemory > 0 {
		return budget(o.MaxMemory)
	}
	return budget(DefaultMaxMemory())
}

// recordCap is the longest single record (a JSON line, a document's array
// element, a value skipped in a document) a reader buffers: decoding one
// takes several times its size, and every worker may hold one.
func (b budget) recordCap() int64 {
	return max(min(int64(b)/16, maxLineBytes), 1<<20)
}

// zstdWindow is the largest history a zstd stream may make the decoder
// keep: an eighth of the budget, but at least 8 MiB (what zstd's own levels
// ask for by default) and at most maxZstdWindow. A stream written with a
// larger window (zstd --long) needs a larger budget.
func (b budget) zstdWindow() int64 {
	return min(max(int64(b)/8, 8<<20), maxZstdWindow)
}

// inflightShare is the share of the budget the records in flight may hold
// between the read and the sink (inflight): a quarter, and at least what
// one record's decompression may hold (unsizedCharge at the record cap).
func (b budget) inflightShare() int64 {
	return max(int64(b)/4, unsizedCharge(b.recordCap()))
}

// inflight is the share of the memory budget that records hold while they
// are in flight: what a worker decompresses (charged before it starts,
// by what the buffer may grow to) and what the decoded record holds until
// the sink has taken it (charged by what it actually holds). A worker
// waits for its share, except for the job the sink waits on (serving),
// which always goes on: it is the only job the sink's progress, and so
// every release, depends on, so waiting never deadlocks, and the share is
// passed by at most that one job. Jobs reach the workers in order, so the
// job served is always with a worker, done, or parked for the sink's
// goroutine to finish. The projection decoders' batches hold the share
// tighter (reserve's rules, jobCharge): their job is parked rather than
// pass the share, and the job served finished a record at a time.
type inflight struct {
	mu      sync.Mutex
	size    int64
	used    int64
	serving uint64        // the job the sink waits on; it and earlier jobs take without waiting
	changed chan struct{} // closed when used or serving changes; made by the first to wait on it
	stop    <-chan struct{}
	// decoders is set, before the read starts, when the decoders charge
	// what a record grows to as they decode it (zstd records), and so may
	// wait for room: the room the sink gives back as it consumes. The
	// goroutine that feeds the sink must then never decode (the
	// pipeline's await), or it would wait for itself.
	decoders bool
	// peak is the most used has been, for tests of the share's bound.
	peak int64
	// full, when set (tests only), is called each time a charge finds no
	// room, before it waits or fails with errNoRoom, outside the lock.
	full func()
}

// chargedByDecoders marks g as charged by the decoders themselves (see
// inflight.decoders) and returns it, for the decoder to keep.
func (g *inflight) chargedByDecoders() *inflight {
	if g != nil {
		g.decoders = true
	}
	return g
}

// decodersWait reports whether a decoder may wait on g for room.
func (g *inflight) decodersWait() bool { return g != nil && g.decoders }

// chargePdata charges n bytes for a record of job seq that pdata is about
// to decode, and returns what it charged, for give: a worker waits for
// room as take does; the goroutine that feeds the sink (consumer), which
// gives the room back, never waits: it charges where the share has room,
// or for the job served, and otherwise fails with errNoRoom, which parks
// the job (pipeline.decodeRecs) for the consumer to finish once it is
// served, as a projection decoder's batch does. So the consumer helps
// decode while the share has room, and what it charges past the share is
// the job served's alone.
func (g *inflight) chargePdata(seq uint64, n int64, consumer bool) (int64, error) {
	if !consumer {
		return g.take(seq, n)
	}
	return g.reserve(seq, n, n, neverWaits)
}

// errReadStopped is what a worker waiting for its share gets once the
// read stops: the record is not decoded, and nobody is left to see it.
var errReadStopped = errors.New("the read stopped")

// newInflight returns a share of size bytes. A nil share never waits.
func newInflight(size int64) *inflight {
	return &inflight{size: size}
}

// take charges n bytes for a record of job seq, waiting while the share
// is used up and the job is not the one served, and returns what it
// charged, for give: n cut to the share's size, so a record never waits
// for more than the share holds.
func (g *inflight) take(seq uint64, n int64) (int64, error) {
	return g.reserve(seq, n, n, takeWaits)
}

// errNoRoom is what a charge that may not wait gets when the share has
// no room for it (reserve).
var errNoRoom = errors.New("no room in the share of the memory budget in flight")

// waitRule is what a charge does when the share has no room for it.
type waitRule uint8

const (
	// takeWaits waits for room, except for the job served (and earlier
	// ones), which charges at once: take's rule.
	takeWaits waitRule = iota
	// workerWaits waits for room, and fails with errNoRoom once its job
	// is the one served: a batch's charge on a worker, whose job is then
	// parked for the consumer to finish a record at a time.
	workerWaits
	// neverWaits fails with errNoRoom, except for the job served, which
	// charges at once: a batch's charge on the consumer.
	neverWaits
)

// reserve charges the bytes a record of job seq needs, or want (at least
// need) when the room left holds that much, and returns what it charged,
// for give; both are cut to the share's size, as take cuts n. When the
// share has no room for need, rule says what it does.
func (g *inflight) reserve(seq uint64, need, want int64, rule waitRule) (int64, error) {
	if g == nil {
		return 0, nil
	}
	need, want = min(need, g.size), min(max(want, need), g.size)
	for {
		g.mu.Lock()
		n := want
		if g.used+want > g.size {
			n = need
		}
		served := seq <= g.serving
		if g.used+n <= g.size || served && rule != workerWaits {
			g.add(n)
			g.mu.Unlock()
			return n, nil
		}
		fail := served || rule == neverWaits
		if !fail && g.changed == nil {
			g.changed = make(chan struct{})
		}
		changed := g.changed
		g.mu.Unlock()
		if g.full != nil {
			g.full()
		}
		if fail {
			return 0, errNoRoom
		}
		select {
		case <-changed:
		case <-g.stop:
			return 0, errReadStopped
		}
	}
}

// add charges n bytes; g.mu is held.
func (g *inflight) add(n int64) {
	g.used += n
	g.peak = max(g.peak, g.used)
}

// give returns n bytes taken.
func (g *inflight) give(n int64) {
	if g == nil || n == 0 {
		return
	}
	g.mu.Lock()
	g.used -= n
	g.wake()
	g.mu.Unlock()
}

// serve says the sink now waits on job seq.
func (g *inflight) serve(seq uint64) {
	if g == nil {
		return
	}
	g.mu.Lock()
	g.serving = seq
	g.wake()
	g.mu.Unlock()
}

// wake tells the waiting workers, if any, the share changed; g.mu is
// held.
func (g *inflight) wake() {
	if g.changed != nil {
		close(g.changed)
		g.changed = nil
	}
}

// MemoryBudget is the memory budget in bytes these options give: MaxMemory,
// or DefaultMaxMemory when it is 0. The readers cut records at a sixteenth
// of it; a sink that holds what it reads (analyze's index) checks itself
// against its share of it.
func (o ReadOptions) MemoryBudget() int64 {
	return int64(o.budget())
}

// errRecordCap is the cause of a record cut at the cap.
func errRecordCap(what string, limit int64) error {
	return fmt.Errorf("%w: %s longer than %d MiB, a sixteenth of the memory budget (raise --max-memory to read it)",
		ErrRecordTooLarge, what, limit>>20)
}

// capReader feeds a JSON decoder at most limit bytes past the decoder's
// current position: the decoder buffers a whole value (an array element it
// decodes, a string it skips), so bounding what it can read bounds its
// buffer.
type capReader struct {
	r     io.Reader
	read  int64 // bytes handed to the decoder
	limit int64 // read may not pass this; <0 none
	hit   bool
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.limit >= 0 {
		left := c.limit - c.read
		if left <= 0 {
			c.hit = true
			return 0, errCapReached
		}
		if int64(len(p)) > left {
			p = p[:left]
		}
	}
	n, err := c.r.Read(p)
	c.read += int64(n)
	return n, err
}

// errCapReached is what capReader returns at its limit.
var errCapReached = fmt.Errorf("%w: value longer than the record cap", ErrRecordTooLarge)

// ParseByteSize parses a memory size as given to --max-memory: a number of
// bytes, or a number with a unit KiB, MiB, GiB (or KB, MB, GB, read as the
// same powers of 1024; case does not matter). The number is plain decimal
// digits with an optional fraction (1.5GiB); the size it gives must be a
// whole number of bytes, at least one and at most 2^62. Everything else is
// refused: zero, signs, exponents (1e400), NaN, Inf, hex, a fraction of a
// byte (0.5), junk. The error says what a size looks like.
func ParseByteSize(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30}, {"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"b", 1}} {
		if rest, ok := strings.CutSuffix(t, u.suffix); ok {
			t, mult = strings.TrimSpace(rest), u.mult
			break
		}
	}
	bad := func(why string) (int64, error) {
		return 0, fmt.Errorf("size %s: %s; want a positive whole number of bytes, or a number with KiB, MiB or GiB (512MiB, 2GiB)", QuoteText(s), why)
	}
	if !isPlainDecimal(t) {
		return bad("not a plain decimal number")
	}
	n, ok := new(big.Rat).SetString(t)
	if !ok {
		return bad("not a plain decimal number")
	}
	n.Mul(n, new(big.Rat).SetInt64(mult))
	switch {
	case n.Sign() <= 0:
		return bad("zero")
	case !n.IsInt():
		return bad("not a whole number of bytes")
	case n.Num().Cmp(big.NewInt(1<<62)) > 0:
		return bad("more than 2^62 bytes")
	}
	return n.Num().Int64(), nil
}

// isPlainDecimal reports whether t is digits with an optional fraction:
// no sign, exponent or other spelling big.Rat and ParseFloat would take.
func isPlainDecimal(t string) bool {
	intPart, frac, hasDot := strings.Cut(t, ".")
	digits := func(x string) bool {
		for i := 0; i < len(x); i++ {
			if x[i] < '0' || x[i] > '9' {
				return false
			}
		}
		return x != ""
	}
	return digits(intPart) && (!hasDot || digits(frac))
}
