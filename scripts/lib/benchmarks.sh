# Shared by the bench scripts: sourced, not run.

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
