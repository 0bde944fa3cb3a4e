# shellcheck shell=bash
# Shared by the bench scripts: sourced, not run.

# VERDICT_AWK is the awk library that judges a figure against its goal
# (verdict.awk, beside this file), for the scripts' own awk programs.
VERDICT_AWK=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/verdict.awk

# with_verdict PROGRAM [AWK ARGS...] runs the awk PROGRAM (its text) with
# verdict.awk's functions loaded and the other arguments given (-v
# assignments, files).
with_verdict() {
	local prog=$1
	shift
	awk "$@" -f "$VERDICT_AWK" -f <(printf '%s\n' "$prog")
}

# goal_verdict FIGURE OP GOAL prints verdict.awk's verdict: "met", "NOT
# met", or "n/a (no figure)" when FIGURE is not a number.
goal_verdict() { with_verdict 'BEGIN { print verdict(x, op, goal) }' -v x="$1" -v op="$2" -v goal="$3"; }

# figure FIGURE FORMAT prints FIGURE with the printf FORMAT, or n/a when
# it is not a number (never the 0 awk reads text as).
figure() { with_verdict 'BEGIN { print figure(x, f) }' -v x="$1" -v f="$2"; }

# judged FIGURE FORMAT OP GOAL [UNIT] prints FIGURE in the printf FORMAT
# (a number's) and then UNIT, for reading beside goal_verdict FIGURE OP
# GOAL: with the digits it takes never to show a figure rounded onto its
# goal's other side (verdict.awk's judged); n/a, with no unit, when FIGURE
# is none. Judge the figure, not this print.
judged() {
	with_verdict 'BEGIN { s = judged(x, f, op, goal); print s == "n/a" ? s : s unit }' \
		-v x="$1" -v f="$2" -v op="$3" -v goal="$4" -v unit="${5:-}"
}

# write_section FILE HEADING SECTION replaces the "## HEADING" section of
# FILE (up to the next "## " heading) with the Markdown in the file SECTION,
# or appends it when FILE has none; a missing FILE is created with the
# title. Sections are separated by one blank line, and the other sections
# are left as they are: each bench script owns its own.
write_section() {
	local out=$1 heading=$2 section=$3 tmp
	[ -f "$out" ] || printf '# Benchmarks\n' >"$out"
	tmp=$(mktemp)
	awk -v section="$section" -v heading="## $heading" '
		BEGIN { while ((getline line < section) > 0) text = text line "\n"; sub(/\n+$/, "\n", text) }
		$0 == heading { printf "%s\n", text; skip = 1; done = 1; next }
		skip && /^## / { skip = 0 }
		!skip { print; last = $0 }
		END { if (!done) { if (NR > 0 && last != "") print ""; printf "%s", text } }
	' "$out" >"$tmp" && cp "$tmp" "$out"
	rm -f "$tmp"
}

# dumps_dir SPANS sets dumps, the directory a script writes its dumps of
# SPANS spans to (OTLP JSON lines and protobuf, about 460 and 200 bytes a
# span), and dumps_where, a phrase saying where they live for its
# section. It is a new directory of /dev/shm (dumps_shm, for the caller's
# trap to remove) when the memory available holds them with 4 GiB to
# spare, else $tmp, whose dumps are read once so the rounds read them from
# the page cache: this machine's host takes page cache back between runs,
# and a round that then reads part of a dump from disk shows that as
# system time and wall, not as the tool's own cost.
dumps_dir() {
	local need_kb avail_kb
	need_kb=$(($1 * 700 / 1024 + 4 * 1024 * 1024))
	avail_kb=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo)
	dumps=$tmp
	dumps_where="on disk, read once before the rounds so that every run reads them from the page cache (not enough memory for /dev/shm: ${avail_kb:-unknown} KiB available, $need_kb KiB wanted)"
	if [ -d /dev/shm ] && [ "${avail_kb:-0}" -gt "$need_kb" ] && dumps_shm=$(mktemp -d /dev/shm/mcptrace-bench.XXXXXX 2>/dev/null); then
		dumps=$dumps_shm
		dumps_where="in memory (a tmpfs directory of /dev/shm), so that no run reads them from disk"
	fi
	log "the dumps live $dumps_where"
}

# warm_dumps FILE...: reads each FILE once when the dumps are on disk, so
# that the rounds read them from the page cache.
warm_dumps() {
	[ "$dumps" = "$tmp" ] || return 0
	log "reading the dumps once so that every round reads them from the page cache"
	local f
	for f in "$@"; do
		[ ! -f "$f" ] || cat "$f" >/dev/null
	done
}

# pgo_of BIN: a phrase saying whether the go binary BIN was built with a
# profile for profile-guided optimisation, and which (`go version -m`
# records the build's -pgo flag), for a section's header: the profile's
# path relative to the working directory when under it (the scripts run
# from the repository's root).
pgo_of() {
	local info f
	if ! info=$(go version -m "$1" 2>/dev/null); then
		printf 'of a build go version -m cannot read'
		return
	fi
	f=$(printf '%s\n' "$info" | awk '$1 == "build" && $2 ~ /^-pgo=/ { sub(/^-pgo=/, "", $2); print $2 }')
	if [ -z "$f" ]; then # -pgo=off and no default.pgo record no flag
		printf 'built without profile-guided optimisation'
	else
		printf 'built with profile-guided optimisation from %s' "${f#"$PWD"/}"
	fi
}

# median: the median of the numbers on standard input, one a line, or n/a
# when there are none.
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) { print "n/a"; exit } m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%s", m }'; }

# check_procs: passes `go test -bench` output from standard input to
# standard output when every benchmark figure in it ran at the GOMAXPROCS
# its name says (the -N suffix, none for 1), as its procs metric reports,
# and fails saying which did not otherwise. Given a -cpu list, the testing
# package runs a sub-benchmark's first figure at the GOMAXPROCS the
# previous one left, not at the one its name says: the scripts run one
# -cpu value per process, and check here that no figure is filed under
# the wrong core count.
check_procs() {
	awk '
		/^Benchmark/ && NF > 2 {
			want = 1
			if (match($1, /-[0-9]+$/)) want = substr($1, RSTART + 1)
			procs = ""
			for (i = 2; i < NF; i++) if ($(i+1) == "procs") procs = $i
			if (procs == "") { bad = bad sprintf("\n  %s reports no procs metric", $1) }
			else if (procs + 0 != want + 0) { bad = bad sprintf("\n  %s ran at GOMAXPROCS %d", $1, procs) }
		}
		{ print }
		END { if (bad != "") { printf "check_procs: a figure did not run at the GOMAXPROCS its name says:%s\n", bad > "/dev/stderr"; exit 1 } }'
}

# ensure_jq installs jq with apt-get when it is missing (the caller's log
# says so).
ensure_jq() {
	command -v jq >/dev/null 2>&1 && return
	log "installing jq"
	apt-get install -y jq >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y jq >/dev/null; }
}

# pool_vocab sets SPAN_ACQUIRE and ATTR_CACHE_HIT from spans/vocab.go,
# where the vocabulary is spelled once, or fails saying why.
pool_vocab() {
	local v='s/^[[:space:]]*%s[[:space:]]*= "\(.*\)".*/\\1/p'
	# shellcheck disable=SC2059
	SPAN_ACQUIRE=$(sed -n "$(printf "$v" SpanAcquire)" spans/vocab.go)
	# shellcheck disable=SC2059
	ATTR_CACHE_HIT=$(sed -n "$(printf "$v" AttrCacheHit)" spans/vocab.go)
	if [ -z "$SPAN_ACQUIRE" ] || [ -z "$ATTR_CACHE_HIT" ]; then
		printf 'cannot read the vocabulary from spans/vocab.go\n' >&2
		return 1
	fi
}

# JQ_HIT_RATE is the jq program that computes the pool's acquires, hits
# and hit rate from OTLP JSON lines, given --arg acq and --arg hit (the
# span name and attribute of pool_vocab): what a user without mcptrace
# would write, the bench scripts' jq baseline.
# shellcheck disable=SC2016
JQ_HIT_RATE='reduce (inputs | .resourceSpans[]?.scopeSpans[]?.spans[]?
	| select(.name == $acq)
	| ([.attributes[]? | select(.key == $hit) | .value.boolValue][0])) as $h
	({acquires: 0, hits: 0}; .acquires += 1 | .hits += (if $h == true then 1 else 0 end))
	| .hit_rate = (if .acquires > 0 then .hits / .acquires else null end)'

# jq_hit_rate FILE runs JQ_HIT_RATE over FILE (pool_vocab first).
jq_hit_rate() { jq -n -c --arg acq "$SPAN_ACQUIRE" --arg hit "$ATTR_CACHE_HIT" "$JQ_HIT_RATE" "$1"; }

# cpu_list LIST: the CPUs of a kernel CPU list ("0-3,8,10-11"), one a line.
cpu_list() {
	awk -v list="$1" 'BEGIN {
		n = split(list, part, ",")
		for (i = 1; i <= n; i++) {
			if (split(part[i], r, "-") == 2) { for (c = r[1] + 0; c <= r[2] + 0; c++) print c }
			else if (part[i] != "") print part[i] + 0
		}
	}'
}

# allowed_cpus: the CPUs this shell may run on, one a line
# (Cpus_allowed_list of /proc/self/status).
allowed_cpus() { cpu_list "$(awk -F'\t' '$1 == "Cpus_allowed_list:" { print $2 }' /proc/self/status)"; }

# core_costs RUNS CMD...: a Markdown paragraph saying what CMD costs on
# each CPU alone and on all of them: RUNS rounds, each running CMD once
# pinned to every CPU in turn (taskset, GOMAXPROCS=1) and once on every
# CPU (GOMAXPROCS unset), then core_costs_text of the CPU-s each took. A
# virtual machine's CPUs need not be alike (the host may run another
# guest beside one of them), and a run whose goroutines hand data to each
# other pays for every cache line that crosses between the CPUs, which on
# some hosts costs more than the work itself: the paragraph tells a slow
# CPU from that. It says why when it cannot measure (no taskset, one
# CPU, a failed run).
core_costs() {
	local runs=$1 cpu r out cpus
	shift
	cpus=$(allowed_cpus)
	if ! command -v taskset >/dev/null 2>&1; then
		printf 'Each CPU alone: not measured (taskset, of util-linux, is missing).\n'
		return
	fi
	if [ "$(wc -l <<<"$cpus")" -lt 2 ]; then
		printf 'Each CPU alone: not measured (one CPU).\n'
		return
	fi
	out=$(mktemp)
	for r in $(seq "$runs"); do
		for cpu in $cpus all; do
			local pin=(taskset -c "$cpu") procs=1
			[ "$cpu" != all ] || pin=() procs=""
			if ! GOMAXPROCS=$procs /usr/bin/time -f "$cpu %U %S" -a -o "$out" "${pin[@]}" "$@" >/dev/null 2>&1; then
				rm -f "$out"
				printf 'Each CPU alone: not measured (a run failed: %s).\n' "$*"
				return
			fi
		done
	done
	core_costs_text "$runs" <"$out"
	rm -f "$out"
}

# core_costs_text RUNS: core_costs's paragraph from its timings on
# standard input, a line a run: the CPU it was pinned to (or "all"), its
# user and its system CPU-s. Each CPU's figure is the median (median) of
# its runs' user + sys; the slowest over the fastest, and the run on all
# of them over the fastest alone, are n/a when the fastest took no
# measurable CPU (/usr/bin/time counts 10 ms ticks).
core_costs_text() {
	local runs=$1 in k medians=""
	in=$(cat)
	for k in $(awk '!seen[$1]++ { print $1 }' <<<"$in"); do
		medians+="$k $(awk -v k="$k" '$1 == k { print $2 + $3 }' <<<"$in" | median)"$'\n'
	done
	printf '%s' "$medians" | with_verdict '
		$1 == "all" { all = $2; next }
		{
			alone = alone sprintf("%s CPU %s %s s", (cpus++ ? "," : ""), $1, figure($2, "%.2f"))
			if (cpus == 1 || $2 + 0 < lo) lo = $2 + 0
			if (cpus == 1 || $2 + 0 > hi) hi = $2 + 0
		}
		END {
			printf "Each CPU alone (`GOMAXPROCS=1 taskset -c N`, %d round%s, median CPU-s):%s", runs, (runs == 1 ? "" : "s"), alone
			if (lo > 0) printf ", the slowest %sx the fastest", figure(hi / lo, "%.2f")
			if (all != "") {
				printf "; on every CPU at once (GOMAXPROCS unset): %s s", figure(all, "%.2f")
				if (lo > 0) printf ", %sx the fastest CPU alone", figure(all / lo, "%.2f")
			}
			if (lo <= 0) printf "; the ratios n/a (the fastest CPU took no measurable CPU time)"
			print "."
		}' -v runs="$runs"
}
