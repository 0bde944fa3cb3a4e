package mcptraceconnector

import (
	"os"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/mcptrace/mcptrace/collector/mcptraceconnector/internal/metadata"
)

// TestMetadataMatchesYAML keeps the hand-written internal/metadata in step
// with metadata.yaml (mdatagen would generate it).
func TestMetadataMatchesYAML(t *testing.T) {
	data, err := os.ReadFile("metadata.yaml")
	must(t, err)
	var md struct {
		Type   string `yaml:"type"`
		Status struct {
			Class     string              `yaml:"class"`
			Stability map[string][]string `yaml:"stability"`
		} `yaml:"status"`
	}
	must(t, yaml.Unmarshal(data, &md))
	if md.Type != metadata.Type.String() || md.Status.Class != "connector" {
		t.Fatalf("metadata.yaml type %q class %q, code type %q", md.Type, md.Status.Class, metadata.Type)
	}
	legs := md.Status.Stability["development"]
	if len(md.Status.Stability) != 1 || len(legs) != 3 || legs[0] != "traces_to_metrics" || legs[1] != "traces_to_logs" || legs[2] != "logs_to_metrics" {
		t.Fatalf("metadata.yaml stability %v, want development: [traces_to_metrics, traces_to_logs, logs_to_metrics]", md.Status.Stability)
	}
	if metadata.TracesToMetricsStability.String() != "Development" || metadata.TracesToLogsStability.String() != "Development" || metadata.LogsToMetricsStability.String() != "Development" {
		t.Fatal("code stabilities are not Development")
	}
}
