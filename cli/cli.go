// Package cli is outlierlab's command line: one subcommand per cmd_*.go
// (serve, run, replay, lint, lessons, plan, whatif, room, loadtest,
// healthcheck, version), dispatched by name; main.go at the root only calls
// Dispatch.
package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// command is one subcommand; each runs from its own cmd_*.go file, so main
// stays a dispatcher.
type command struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

// commands are every subcommand, by name: the one place to add one.
var commands = map[string]command{
	"challenge":   {summary: "list tuning challenges (challenges/*.md, or FILE…); -check proves each reference passes every goal on seeds 1–50 and the defaults fail one", run: runChallenge},
	"healthcheck": {summary: "ask a running server's /healthz (the container's HEALTHCHECK; distroless has no curl)", run: runHealthcheck},
	"lessons":     {summary: "list the lessons; -check runs every lesson's checks against the engine", run: runLessons},
	"loadtest":    {summary: "load-test the lab on loopback: -streams N tabs, -movers M moving, -duration D; prints RSS, heap, latencies, losses", run: runLoadtest},
	"lint":        {summary: "read an Envoy cluster's outlier_detection against its size and traffic", run: runLint},
	"plan":        {summary: "list workshop plans (plans/*.md, or FILE…); -check holds every scene's question and numbers against the engine for seeds 1–50", run: runPlan},
	"replay":      {summary: "run detector traces (shared/spec/replay.md); -check compares with their expect", run: runReplay},
	"room":        {summary: "room replay FILE: print a workshop's recording (/r/CODE/recording.json) as text", run: runRoom},
	"run":         {summary: "simulate a preset scenario and print its timeline (json, csv or text)", run: runScenario},
	"serve":       {summary: "serve the web lab (default command; -addr HOST:PORT, PORT honoured; workshops: -nats-listen, -nats-url, -nats-creds)", run: runServe},
	"version":     {summary: "print the version (git describe of the build; also -version) and the Go release it was built with", run: runVersion},
	"whatif":      {summary: "replay an access log through the detector: what outlier detection would have done", run: runWhatif},
}

// Dispatch runs the subcommand args name (serve by default) and answers
// its exit status.
func Dispatch(args []string, stdout, stderr io.Writer) int {
	name := "serve"
	// serve is the default: `outlierlab -addr 127.0.0.1:9090` serves, as
	// `outlierlab` alone does.
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") || len(args) > 0 && isHelp(args[0]) {
		name, args = args[0], args[1:]
	} else if len(args) > 0 && (args[0] == "-version" || args[0] == "--version") {
		name, args = "version", args[1:]
	}
	if isHelp(name) {
		usage(stdout)
		return 0
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "outlierlab: unknown command %q\n\n", name)
		usage(stderr)
		return 2
	}
	return c.run(args, stdout, stderr)
}

func isHelp(s string) bool { return s == "-h" || s == "-help" || s == "--help" || s == "help" }

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: outlierlab <command> [flags]")
	fmt.Fprintln(w, "\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	width := 0
	for _, n := range names {
		width = max(width, len(n))
	}
	for _, n := range names {
		fmt.Fprintf(w, "  %-*s  %s\n", width, n, commands[n].summary)
	}
}
