package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/mcptrace/mcptrace/dashboards"
)

func init() { subcommands = append(subcommands, newDashboardsCmd) }

// dashboardsFlags are the flags of `mcptrace dashboards`.
type dashboardsFlags struct {
	out          string
	provisioning bool
	force        bool
}

func newDashboardsCmd() *cobra.Command {
	var f dashboardsFlags
	cmd := &cobra.Command{
		Use:   "dashboards",
		Short: "Write the Grafana dashboards for the pool's metrics, traces and profiles and the connector's fleet metrics",
		Long: `dashboards writes mcptrace's Grafana dashboards, generated from Go code, into a
directory: mcp-pool.json (the "MCP pool" dashboard), mcp-pool-fleet.json (the
"MCP pool fleet" dashboard) and README.md, which describes every panel and the
query behind it.

The "MCP pool" dashboard reads the pool's Prometheus metrics (hit rate against
the cold-start ceiling, misses by reason, acquire, handshake and call latency,
sessions, evictions, redials and failures, per pool and key), Tempo traces
(unexplained misses, executions that used more than one session) and
Pyroscope profiles (CPU split into handshake and call). The "MCP pool fleet"
dashboard reads the metrics of the mcptrace Collector connector, summed across
every collector of a fleet: hit rate against the cold-start floor per pool,
misses by cause, unexplained misses, executions on more than one session, rule
violations by rule, and finalized, cut and late traces. Panels reach their
datasources only through datasource variables, so the JSON imports into any
Grafana.

With --provisioning it also writes example Grafana provisioning files under
DIR/provisioning: datasources for Prometheus, Tempo and Pyroscope, and a
dashboard provider that loads /var/lib/grafana/dashboards/mcptrace.

It never overwrites a file it did not write (one without the generator's
marker, a symbolic link or a directory) unless --force is given, and never
writes through a symbolic link out of DIR. Each file is listed with what
happened to it: created, replaced or unchanged.

The same files are committed in the repository's dashboards/ directory
(go generate ./dashboards refreshes them).`,
		Example: `  # Write the dashboards into ./grafana
  mcptrace dashboards --out grafana

  # Also write provisioning files, then mount grafana/ into Grafana
  mcptrace dashboards --out grafana --provisioning`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDashboards(cmd, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.out, "out", "o", "", "directory to write into (created if missing; files an earlier run wrote are replaced)")
	fl.BoolVar(&f.force, "force", false, "also replace files (or symbolic links) in DIR that mcptrace did not write")
	fl.BoolVar(&f.provisioning, "provisioning", false, "also write example Grafana provisioning files under DIR/provisioning")
	return cmd
}

func runDashboards(cmd *cobra.Command, f dashboardsFlags) error {
	if f.out == "" {
		return usageErrorf("--out is required: the directory to write the dashboards into")
	}
	if info, err := os.Stat(f.out); err == nil && !info.IsDir() {
		return usageErrorf("--out %s is a file: give the directory to write the dashboards into", f.out)
	}
	files, err := dashboards.Generate()
	if err != nil {
		return fmt.Errorf("generate dashboards: %w", err)
	}
	if f.provisioning {
		prov, err := dashboards.Provisioning()
		if err != nil {
			return err
		}
		files = append(files, prov...)
	}
	written, err := dashboards.Write(f.out, files, f.force)
	for _, w := range written {
		fmt.Fprintf(cmd.OutOrStdout(), "%-9s %s\n", w.Status, w.Path)
	}
	if err != nil {
		return &exitError{code: 1, err: err}
	}
	return nil
}
