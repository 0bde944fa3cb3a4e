// Package metadata holds the component's type, scope name and stabilities,
// in the shape mdatagen generates from metadata.yaml (written by hand here;
// TestMetadataMatchesYAML keeps the two in step).
package metadata

import (
	"go.opentelemetry.io/collector/component"
)

var (
	// Type is the connector's type as it appears in a Collector config.
	Type = component.MustNewType("mcptrace")
	// ScopeName is the instrumentation scope of the metrics and logs the
	// connector emits.
	ScopeName = "github.com/mcptrace/mcptrace/collector/mcptraceconnector"
)

const (
	// TracesToMetricsStability is the stability of the traces → metrics leg.
	TracesToMetricsStability = component.StabilityLevelDevelopment
	// TracesToLogsStability is the stability of the traces → logs leg.
	TracesToLogsStability = component.StabilityLevelDevelopment
	// LogsToMetricsStability is the stability of the logs → metrics leg
	// (the pair tier of attribution: forward).
	LogsToMetricsStability = component.StabilityLevelDevelopment
)
