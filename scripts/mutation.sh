#!/usr/bin/env bash
# mutation.sh measures how well each package's own tests pin its behaviour:
# internal/mutate makes small semantic changes (mutants) to a package's
# source one at a time and runs the package's tests against each. Its
# operators: conditional boundary (< <= > >=, t.After/t.Before), negated
# == !=, dropped && / || operand, removed ++/--, removed min/max clamp;
# and, read from the package's types, the bodies of two switch cases or
# if/else-if branches swapped, a sibling field of the same type read, a
# call f(x) of x's type replaced by x, a ctx.Err()/ctx.Done() check
# dropped, a field's reset to a zero value dropped, a parsed boolean
# (strconv.ParseBool, a json/yaml-tagged bool field) inverted. A mutant the
# tests still pass on is a survivor. The tree is never modified (go test
# -overlay); a mutant that does not type-check is skipped, not counted;
# only mutants on lines the package's tests cover are tried, a
# deterministic sample of BUDGET per package drawn by operator in turn;
# each runs with -test.failfast and a timeout.
#
# Usage:
#   scripts/mutation.sh [BUDGET] [PACKAGE_DIR...]
#     BUDGET       mutants per package (default 30; 0 tries every covered one)
#     PACKAGE_DIR  default: pool, every package under analyze/ with tests,
#                  and collector/mcptraceconnector (its own module)
# Environment: MUTATION_SEED (default 1), MUTATION_JOBS (default 2),
# MUTATION_TIMEOUT (a mutant's test run longer than this counts as killed,
# a hang; default 3m: raise it on a loaded machine, where a survivor's whole
# run of analyze's tests can take longer and would be miscounted),
# MUTATION_FILES (a regexp on file base names to mutate), MUTATION_EXCLUDE
# (a regexp on file base names never mutated), MUTATION_TESTS (a package
# directory whose tests run against every mutant instead of each mutated
# package's own; without it the analyzer's stages, vocab, measure, ruleobs,
# record, selector and poll, are run against analyze/internal/engine's
# tests, which pin them end to end), MUTATION_OUT (default
# ${TMPDIR:-/tmp}/mcptrace-mutation.json; the path is printed at the end).
#
# It writes MUTATION_OUT (killed, survived and total per package and per
# operator, survivors as file:line operator) and prints the same as
# tables. It exits 1 on a tool error (a package's
# unmutated tests failing included), never on a low score. TESTING.md
# records the last scores and the known equivalent mutants. Run it niced
# on a shared machine: nice -n 10 scripts/mutation.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
budget=${1:-30}
shift || true
pkgs=("$@")
if [ ${#pkgs[@]} -eq 0 ]; then
	pkgs=(pool)
	while IFS= read -r d; do
		pkgs+=("${d#"$root"/}")
	done < <(go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.Dir}}{{end}}' ./analyze/...)
	pkgs+=(collector/mcptraceconnector)
fi
out=${MUTATION_OUT:-${TMPDIR:-/tmp}/mcptrace-mutation.json}
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/mutate" ./internal/mutate
args=(-budget "$budget" -seed "${MUTATION_SEED:-1}" -jobs "${MUTATION_JOBS:-2}" -out "$out")
if [ -n "${MUTATION_FILES:-}" ]; then
	args+=(-files "$MUTATION_FILES")
fi
if [ -n "${MUTATION_TIMEOUT:-}" ]; then
	args+=(-timeout "$MUTATION_TIMEOUT")
fi
if [ -n "${MUTATION_TESTS:-}" ]; then
	args+=(-tests "$MUTATION_TESTS")
fi
# The analyzer's stages are pinned end to end by the engine's tests, over
# dumps; their own tests pin only a few pure helpers.
engine=analyze/internal/engine
args+=(-tests-for "analyze/internal/vocab=$engine,analyze/internal/measure=$engine,analyze/internal/ruleobs=$engine,analyze/internal/record=$engine,analyze/internal/selector=$engine,analyze/internal/poll=$engine")
if [ -n "${MUTATION_EXCLUDE:-}" ]; then
	args+=(-exclude "$MUTATION_EXCLUDE")
fi
"$bin/mutate" "${args[@]}" "${pkgs[@]}"
echo "result: $out"
