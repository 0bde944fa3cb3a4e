package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/dashboards"
)

// TestDashboardsHelpNamesWhereToMountTheFiles pins that --help says where
// Grafana must see what --provisioning writes: the provisioning directory
// at Grafana's default, and the dashboards at the path the written
// provider file itself loads them from.
func TestDashboardsHelpNamesWhereToMountTheFiles(t *testing.T) {
	files, err := dashboards.Provisioning()
	if err != nil {
		t.Fatal(err)
	}
	var providerPath string
	for _, f := range files {
		if m := regexp.MustCompile(`(?m)^\s*path:\s*(\S+)`).FindSubmatch(f.Data); m != nil {
			providerPath = string(m[1])
		}
	}
	if providerPath == "" {
		t.Fatal("no provider path in the provisioning files")
	}
	_, out, _ := runCLI(t, "", "dashboards", "--help")
	for _, want := range []string{providerPath, "/etc/grafana/provisioning"} {
		if !strings.Contains(out, want) {
			t.Errorf("dashboards --help does not name %s:\n%s", want, out)
		}
	}
}
