package main

import (
	"fmt"
	"strings"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/spf13/cobra"
)

// enumFlag is a flag that takes one of a fixed list of values. The same
// list validates the value (checkEnum) and completes it in the shell
// (registerEnum), so the two cannot drift apart: one list per enum.
type enumFlag struct {
	name   string   // the flag's name, without dashes
	values []string // the accepted values, in the order help and completion show them
}

// check accepts *v when it is one of the values in any case, and spells it
// as the list does (--format JSON is json); otherwise it returns a usage
// error (exit 2) naming the flag, the value, the nearest value when one is
// near and every accepted value.
func (e enumFlag) check(v *string) error {
	for _, want := range e.values {
		if strings.EqualFold(*v, want) {
			*v = want
			return nil
		}
	}
	hint := ""
	if best := rulefmt.NearestName(strings.ToLower(*v), e.values); best != "" {
		hint = fmt.Sprintf(" (did you mean %s?)", best)
	}
	return usageErrorf("--%s %q%s: want %s", e.name, clipQuoted(*v), hint, e.list())
}

// list spells the accepted values as "a, b or c".
func (e enumFlag) list() string {
	if len(e.values) == 1 {
		return e.values[0]
	}
	return strings.Join(e.values[:len(e.values)-1], ", ") + " or " + e.values[len(e.values)-1]
}

// register makes the shell complete the flag with the accepted values that
// start with what was typed.
func (e enumFlag) register(cmd *cobra.Command) {
	values := e.values
	err := cmd.RegisterFlagCompletionFunc(e.name, func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		var out []string
		for _, v := range values {
			if strings.HasPrefix(v, toComplete) {
				out = append(out, v)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	})
	if err != nil {
		// Only a flag that does not exist or is registered twice gets
		// here: a programming error caught by TestEveryEnumFlagCompletes.
		panic(err)
	}
}

// registerEnums registers completion for every enum on cmd.
func registerEnums(cmd *cobra.Command, enums ...enumFlag) {
	for _, e := range enums {
		e.register(cmd)
	}
}

// The enums the analysis commands share. Their values come from the
// packages that parse them (ingest.ParseFormat, rulefmt.ParseProfile), so
// completion offers exactly what validation accepts.
var (
	inputFormatEnum = enumFlag{"input-format", ingest.FormatNames()}
	profileEnum     = enumFlag{"profile", profileNames()}
)

// profileNames lists rulefmt.Profiles as flag values.
func profileNames() []string {
	names := make([]string, len(rulefmt.Profiles))
	for i, p := range rulefmt.Profiles {
		names[i] = string(p)
	}
	return names
}
