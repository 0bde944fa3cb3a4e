package rulefmt

import (
	"strings"

	"github.com/mcptrace/mcptrace/spans"
)

// IsSemconvName reports whether a span name is the MCP semantic
// conventions' for method (the semconv vocabulary's naming): "{method}" or "{method} {target}".
func IsSemconvName(name, method string) bool {
	return name == method || (strings.HasPrefix(name, method) && len(name) > len(method) && name[len(method)] == ' ')
}

// semconvMethods are the MCP methods whose span names, "{method} {target}",
// make a dump look like the conventions' even where mcp.method.name is
// missing.
var semconvMethods = []string{spans.MethodToolsCall, "tools/list", "initialize", "resources/read", "prompts/get"}

// LooksSemconv reports whether a span name reads like the MCP semantic
// conventions' for one of their common methods: what tells a user of an
// unrecognised dump that --profile semconv would read it.
func LooksSemconv(name string) bool {
	for _, m := range semconvMethods {
		if IsSemconvName(name, m) {
			return true
		}
	}
	return false
}
