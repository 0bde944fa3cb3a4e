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
	dir          string
	provisioning bool
	force        bool
}

func newDashboardsCmd() *cobra.Command {
	var f dashboardsFlags
	cmd := &cobra.Command{
		Use:   "dashboards",
		Short: "Write the Grafana dashboards for the pool's metrics, traces and profiles and the connector's fleet metrics",
		Long: `dashboards writes mcptrace's Grafana dashboards, generated from Go code, into the
directory --dir DIR: mcp-pool.json (the "MCP pool" dashboard), mcp-pool-fleet.json (the
"MCP pool fleet" dashboard) and README.md, which describes every panel and the
query behind it.

The "MCP pool" dashboard reads the pool's Prometheus metrics (hit rate against
its ceiling, 1 − cold-start floor; misses by reason, acquire, handshake and call latency,
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
(go generate ./dashboards refreshes them).

Exit status: 0 every file written or unchanged; 2 bad usage, a file it
refused to overwrite or a failed write. --out and -o, the old names of
--dir, still work with a deprecation notice.`,
		Example: `  # Write the dashboards into ./grafana
  mcptrace dashboards --dir grafana

  # Also write provisioning files; then, in Grafana's container, mount
  # grafana/provisioning at /etc/grafana/provisioning and grafana/*.json
  # at /var/lib/grafana/dashboards/mcptrace (the provider's path)
  mcptrace dashboards --dir grafana --provisioning`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDashboards(cmd, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.dir, "dir", "", "directory `DIR` to write into (created if missing; files an earlier run wrote are replaced)")
	// --out and -o were the directory's first names; -o names a report
	// file in every other command, so they remain only as deprecated
	// aliases.
	addDeprecatedAlias(fl, &f.dir, "out", "o", "use --dir DIR (-o/--output names a report file in the other commands)")
	fl.BoolVar(&f.force, "force", false, "also replace files (or symbolic links) in DIR that mcptrace did not write")
	fl.BoolVar(&f.provisioning, "provisioning", false, "also write example Grafana provisioning files under DIR/provisioning")
	return cmd
}

func runDashboards(cmd *cobra.Command, f dashboardsFlags) error {
	if f.dir == "" {
		return usageErrorf("--dir is required: the directory to write the dashboards into")
	}
	if info, err := os.Stat(f.dir); err == nil && !info.IsDir() {
		return usageErrorf("--dir %s is a file: give the directory to write the dashboards into", f.dir)
	}
	files, err := dashboards.Generate()
	if err != nil {
		return &exitError{code: 2, err: fmt.Errorf("generate dashboards: %w", err)}
	}
	if f.provisioning {
		prov, err := dashboards.Provisioning()
		if err != nil {
			return err
		}
		files = append(files, prov...)
	}
	written, err := dashboards.Write(f.dir, files, f.force)
	for _, w := range written {
		fmt.Fprintf(cmd.OutOrStdout(), "%-9s %s\n", w.Status, w.Path)
	}
	if err != nil {
		// A refusal to overwrite (or a failed write) is about the
		// directory given: exit 2, never 1, which says a rule failed.
		return &exitError{code: 2, err: err}
	}
	return nil
}
