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

# judged prints figure x with the printf format f (a number's, no unit),
# for a reader who reads it beside its verdict against goal by op: with
# more significant digits where f would round it onto the goal's other
# side, as many as it takes for what is printed to get x's own verdict
# (0.1248 against >= 0.125 prints as 0.1248, never as 0.125 beside "NOT
# met"); n/a when x is no figure. Judge the figure itself, never a
# rounded print of it: a print is for reading.
function judged(x, f, op, goal,    s, want, d) {
	if (!isfigure(x)) return "n/a"
	want = verdict(x, op, goal)
	s = sprintf(f, x)
	for (d = digits(s) + 1; verdict(s, op, goal) != want && d <= 17; d++)
		s = sprintf("%." d "g", x)
	return s
}

# digits returns how many significant digits the printed number s shows
# (leading zeros are none; trailing ones count).
function digits(s) {
	sub(/[eE].*/, "", s)
	gsub(/[^0-9]/, "", s)
	sub(/^0+/, "", s)
	return length(s)
}
