// Command outlierlab is an interactive lab for Envoy's passive outlier
// detection: `serve` runs the web lab, `replay` checks the detector against
// trace files, `run` prints a scenario's timeline, `lessons` checks the
// lessons against the engine. The subcommands live in package cli.
package main

import (
	"os"

	"outlierlab/cli"
)

func main() {
	os.Exit(cli.Dispatch(os.Args[1:], os.Stdout, os.Stderr))
}
