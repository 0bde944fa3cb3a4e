package mcptraceconnector

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"

	"github.com/mcptrace/mcptrace/analyze"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/collector/mcptraceconnector/internal/metadata"
)

// NewFactory returns the factory of the mcptrace connector: type mcptrace,
// traces → metrics, traces → logs and (the pair tier of attribution:
// forward) logs → metrics, stability development.
func NewFactory() connector.Factory {
	return connector.NewFactory(
		metadata.Type,
		createDefaultConfig,
		connector.WithTracesToMetrics(createTracesToMetrics, metadata.TracesToMetricsStability),
		connector.WithTracesToLogs(createTracesToLogs, metadata.TracesToLogsStability),
		connector.WithLogsToMetrics(createLogsToMetrics, metadata.LogsToMetricsStability),
	)
}

// createDefaultConfig returns the defaults: wait 30s, 100000 open traces,
// profile auto (detected per resource), the built-in rules, local attribution and a pair
// wait of 45s.
func createDefaultConfig() component.Config {
	return &Config{
		Wait:          DefaultWait,
		MaxOpenTraces: DefaultMaxOpenTraces,
		Profile:       string(rulefmt.ProfileAuto),
		Attribution:   AttributionLocal,
		PairWait:      DefaultPairWait,
	}
}

// createTracesToMetrics builds the traces → metrics leg: the counters.
func createTracesToMetrics(_ context.Context, set connector.Settings, cfg component.Config, next consumer.Metrics) (connector.Traces, error) {
	s, err := cfg.(*Config).settings()
	if err != nil {
		return nil, err
	}
	a, err := newAnalyzer(set.Logger, s, false)
	if err != nil {
		return nil, err
	}
	c := newConnector(set.Logger, s, a)
	c.metrics = next
	return c, nil
}

// createTracesToLogs builds the traces → logs leg: one record per rule
// violation.
func createTracesToLogs(_ context.Context, set connector.Settings, cfg component.Config, next consumer.Logs) (connector.Traces, error) {
	s, err := cfg.(*Config).settings()
	if err != nil {
		return nil, err
	}
	a, err := newAnalyzer(set.Logger, s, true)
	if err != nil {
		return nil, err
	}
	c := newConnector(set.Logger, s, a)
	c.logs = next
	return c, nil
}

// createLogsToMetrics builds the logs → metrics leg: it attributes the
// acquires forwarded by traces legs (attribution: forward) and counts them.
func createLogsToMetrics(_ context.Context, set connector.Settings, cfg component.Config, next consumer.Metrics) (connector.Logs, error) {
	s, err := cfg.(*Config).settings()
	if err != nil {
		return nil, err
	}
	ps, err := analyze.NewPairStream(s.analyze)
	if err != nil {
		return nil, fmt.Errorf("mcptrace: %w", err)
	}
	return newPairsLeg(set.Logger, s, ps, next), nil
}
