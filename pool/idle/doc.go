// Package idle is the pool's idle policy, and nothing else: which idle
// session an acquire takes, why an acquire that finds none misses, which
// idle sessions are closed and why, and the counts that follow. It is
// pure, in the shape of puddle under pgxpool: the clock is passed in as
// nanoseconds, there is no I/O, no goroutine and no lock of its own. The
// caller serialises calls (the pool under its mutex, a replay by running
// alone) and does every dial, close and HTTP request itself, outside.
//
// Three callers share it, so that they cannot disagree:
//   - package pool decides its hits and misses with it, live;
//   - the analyzer replays a dump's acquires through it with the settings
//     each pool scope recorded, to name the cause of each recorded miss;
//   - package whatif replays the same acquires under other settings.
//
// The rules, all here:
//   - an idle session expires when idle strictly longer than the TTL;
//   - a key keeps at most max(MaxIdlePerKey, its in-use peak within the
//     TTL) idle sessions (the peak only when not FixedPerKey), the oldest
//     closed first; MaxIdle bounds the idle sessions of all keys, the
//     least recently released closed first;
//   - a key with nothing open and no activity for more than twice the TTL
//     plus one sweep interval is forgotten: its next miss is cold again,
//     whenever a sweep ran;
//   - a miss's cause is redial (a second attempt), cold (a key the core
//     does not know), concurrent (another lease or dial of the key is
//     out), else what removed the key's last session (ttl, evicted,
//     after_failure, health_check), else unexplained.
//
// Time arithmetic saturates: a TTL of 2562047h or a clock near the ends
// of int64 never wraps.
package idle
