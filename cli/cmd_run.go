package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"outlierlab/engine/scenario"
	"outlierlab/engine/settings"
)

// setFlags collects repeated -set name=value flags.
type setFlags []string

func (s *setFlags) String() string     { return strings.Join(*s, " ") }
func (s *setFlags) Set(v string) error { *s = append(*s, v); return nil }

// runScenario is `outlierlab run -scenario NAME [-set field=value ...]
// [-seed N] [-format json|csv|text]`. -set takes any setting of the
// catalog (engine/settings): an outlier_detection field by its Envoy name
// (checked as a config file would be, by envoyconf) or a scenario knob.
// -compare 'k=v,...' runs it twice (A: the -set settings, B: those laid
// over them) and prints the difference; -sweep name=from:to:step runs it
// once per value and per -seeds. Bad input exits 2 with a message naming
// the setting and what it accepts.
func runScenario(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	name := fs.String("scenario", "", "preset scenario to run, or \"list\" to list them")
	var sets setFlags
	fs.Var(&sets, "set", "`field=value`: an outlier_detection field (Envoy name, durations as 30s) or a scenario knob; repeatable")
	seed := fs.Uint64("seed", 1, "random seed: the same seed gives the same run")
	format := fs.String("format", "json", "output: json (one object per interval, then a summary), csv (one row per host per interval) or text")
	compare := fs.String("compare", "", "`k=v,...`: run again with these settings laid over -set (B) and print how B differs from A")
	sweepSpec := fs.String("sweep", "", "`name=from:to:step` (or name=v1,v2,...): one run per value; -format csv, json or text")
	seeds := fs.String("seeds", "", "with -sweep: the seeds, as 1-5 or 1,3,7 (default: -seed)")
	fs.Usage = func() { runUsage(fs, stderr) }
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "outlierlab run: "+format+"\n", a...)
		return 2
	}
	if fs.NArg() > 0 {
		return fail("unexpected argument %q", fs.Arg(0))
	}
	switch *name {
	case "":
		return fail("-scenario is required (-scenario list shows them)")
	case "list":
		for _, p := range scenario.Presets() {
			fmt.Fprintf(stdout, "%-18s %s\n", p.Name, p.Description)
		}
		return 0
	}
	p, ok := scenario.Lookup(*name)
	if !ok {
		return fail("unknown scenario %q (scenarios: %s)", *name, strings.Join(presetNames(), ", "))
	}
	layer, err := sets.layer()
	if err != nil {
		return fail("%v", err)
	}
	o := runOutput{stdout: stdout, stderr: stderr, format: *format}
	switch {
	case *compare != "" && *sweepSpec != "":
		return fail("-compare and -sweep do not go together")
	case *compare != "":
		return o.compare(p, layer, *compare, *seed)
	case *sweepSpec != "":
		list := []uint64{*seed}
		if *seeds != "" {
			if list, err = parseSeeds(*seeds); err != nil {
				return fail("-seeds: %v", err)
			}
		}
		return o.sweep(p, layer, *sweepSpec, list)
	case *seeds != "":
		return fail("-seeds goes with -sweep (a single run takes -seed)")
	}
	return o.single(p, layer, *seed)
}

// runOutput is where a run's output goes, and in which format.
type runOutput struct {
	stdout, stderr io.Writer
	format         string
}

func (o runOutput) fail(format string, a ...any) int {
	fmt.Fprintf(o.stderr, "outlierlab run: "+format+"\n", a...)
	return 2
}

func (o runOutput) single(p scenario.Preset, layer map[string]string, seed uint64) int {
	write, ok := writers[o.format]
	if !ok {
		return o.fail("-format %q is not one of json, csv, text", o.format)
	}
	sc, cfg, err := settings.Apply(p, layer)
	if err != nil {
		return o.fail("%v", err)
	}
	// Streamed: a frame is written as it is made and not kept, so the
	// longest, busiest run the settings allow stays in a few MB (issue 26).
	// A bad config fails in sim.New, before the first byte.
	if _, err := scenario.Stream(sc, cfg, seed, write(o.stdout)); err != nil {
		if _, wrote := errors.AsType[*scenario.WriteError](err); wrote {
			fmt.Fprintf(o.stderr, "outlierlab run: %v\n", err)
			return 1
		}
		return o.fail("%v", err)
	}
	return 0
}

// layer reads the -set flags as one layer of settings; a name given twice
// keeps its last value.
func (s setFlags) layer() (map[string]string, error) {
	out := map[string]string{}
	for _, kv := range s {
		k, v, found := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !found || k == "" {
			return nil, fmt.Errorf("-set %q: want field=value", kv)
		}
		out[k] = v
	}
	return out, nil
}

// runUsage lists the flags, then every setting -set takes.
func runUsage(fs *flag.FlagSet, w io.Writer) {
	fmt.Fprintln(w, "usage: outlierlab run -scenario NAME [-set field=value ...] [-seed N] [-format json|csv|text]")
	fmt.Fprintln(w, "       outlierlab run -scenario NAME [-set ...] -compare 'field=value,...' [-seed N] [-format text|json|csv]")
	fmt.Fprintln(w, "       outlierlab run -scenario NAME [-set ...] -sweep field=from:to:step [-seeds 1-5] [-format csv|json|text]")
	fs.PrintDefaults()
	fmt.Fprintln(w, "\nscenario knobs:")
	for _, s := range settings.All() {
		if s.Target == settings.Knob {
			fmt.Fprintf(w, "  %-24s %s (%s)\n", s.Name, s.Help, s.Allowed())
		}
	}
	fmt.Fprintln(w, "\noutlier_detection fields:", strings.Join(settings.Names(settings.OutlierField), ", "))
}

var writers = map[string]func(io.Writer) scenario.FrameWriter{
	"json": scenario.NewJSONLinesWriter,
	"csv":  scenario.NewCSVWriter,
	"text": scenario.NewTextWriter,
}

func presetNames() []string {
	var out []string
	for _, p := range scenario.Presets() {
		out = append(out, p.Name)
	}
	return out
}
