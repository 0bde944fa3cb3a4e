# verdict.awk: the bench scripts' one judge of a figure against its goal,
# loaded with `awk -f scripts/lib/verdict.awk -f PROGRAM` (or through
# goal_verdict and figure in scripts/lib/benchmarks.sh). A figure that is
# missing (empty, "n/a", any text but a number) is never met and never
# missed: its verdict says it is not known, and it prints as n/a, never as
# the 0 awk would read it as.

# isfigure reports whether x is a number: a measured figure.
function isfigure(x) {
	return x ~ /^[-+]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][-+]?[0-9]+)?$/
}

# verdict judges figure x against goal by op (">=", ">", "<=", "<" or
# "=="): "met", "NOT met", or "n/a (no figure)" when x is none.
function verdict(x, op, goal,    ok) {
	if (!isfigure(x)) return "n/a (no figure)"
	x += 0
	goal += 0
	if (op == ">=") ok = x >= goal
	else if (op == ">") ok = x > goal
	else if (op == "<=") ok = x <= goal
	else if (op == "<") ok = x < goal
	else if (op == "==") ok = x == goal
	else {
		printf "verdict: unknown operator \"%s\"\n", op > "/dev/stderr"
		exit 2
	}
	return ok ? "met" : "NOT met"
}

# figure prints x with the printf format f, or n/a when x is no figure.
function figure(x, f) {
	return isfigure(x) ? sprintf(f, x) : "n/a"
}
