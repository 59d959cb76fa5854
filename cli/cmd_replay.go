package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"outlierlab/engine/replay"
)

// runReplay exits 0 when every trace ran (and, with -check, matched), 1 when
// a -check found a difference, 2 when a trace or its config is malformed.
func runReplay(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	check := fs.Bool("check", false, "compare each trace's result with its \"expect\" and print a readable diff")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: outlierlab replay [-check] TRACE.json [TRACE.json ...]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	code := 0
	enc := json.NewEncoder(stdout)
	for _, file := range fs.Args() {
		out, t, err := replayFile(file)
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", file, err)
			code = 2
			continue
		}
		if !*check {
			if err := enc.Encode(out); err != nil {
				fmt.Fprintf(stderr, "%s: %v\n", file, err)
				return 2
			}
			continue
		}
		if t.Expect == nil {
			fmt.Fprintf(stdout, "FAIL %s: %s\n    the trace has no \"expect\" to check against\n", file, traceName(t))
			code = max(code, 1)
			continue
		}
		diffs := replay.Diff(t.Expect, out)
		if len(diffs) == 0 {
			fmt.Fprintf(stdout, "ok   %s: %s\n", file, traceName(t))
		} else {
			fmt.Fprintf(stdout, "FAIL %s: %s\n", file, traceName(t))
			code = max(code, 1)
		}
		for _, d := range diffs {
			fmt.Fprintf(stdout, "    %s\n", d)
		}
		// A grpc trace's notes: what Envoy would refuse in its config and
		// what grpc-go does instead (envoyconf.GRPCNotes).
		for _, n := range out.Notes {
			fmt.Fprintf(stdout, "    note: %s\n", n)
		}
	}
	return code
}

// maxTraceBytes keeps a runaway file from exhausting memory.
const maxTraceBytes = 64 << 20

func replayFile(file string) (*replay.Output, *replay.Trace, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	t, err := replay.Parse(io.LimitReader(f, maxTraceBytes))
	if err != nil {
		return nil, nil, err
	}
	out, err := replay.Run(t)
	if err != nil {
		return nil, nil, err
	}
	if err := t.CheckNotEmpty(); err != nil {
		return nil, nil, err
	}
	return out, t, nil
}

// traceName is how -check names a trace: its "name", or a mark that it has
// none rather than an empty string after the colon.
func traceName(t *replay.Trace) string {
	if t.Name == "" {
		return "(the trace has no \"name\")"
	}
	return t.Name
}
