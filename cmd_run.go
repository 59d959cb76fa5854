package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"outlierlab/engine/envoyconf"
	"outlierlab/engine/scenario"
)

// setFlags collects repeated -set name=value flags.
type setFlags []string

func (s *setFlags) String() string     { return strings.Join(*s, " ") }
func (s *setFlags) Set(v string) error { *s = append(*s, v); return nil }

// runScenario is `outlierlab run -scenario NAME [-set field=value ...]
// [-seed N] [-format json|csv|text]`. -set takes any outlier_detection
// field by its Envoy name (applied through envoyconf, so values are checked
// exactly as a config file would be) and any scenario knob. Bad input
// exits 2 with a message naming the field and what it accepts.
func runScenario(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	name := fs.String("scenario", "", "preset scenario to run, or \"list\" to list them")
	var sets setFlags
	fs.Var(&sets, "set", "`field=value`: an outlier_detection field (Envoy name, durations as 30s) or a scenario knob; repeatable")
	seed := fs.Uint64("seed", 1, "random seed: the same seed gives the same run")
	format := fs.String("format", "json", "output: json (one object per interval, then a summary), csv (one row per host per interval) or text")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: outlierlab run -scenario NAME [-set field=value ...] [-seed N] [-format json|csv|text]")
		fs.PrintDefaults()
		fmt.Fprintln(stderr, "\nscenario knobs:")
		for _, k := range scenario.Knobs() {
			fmt.Fprintf(stderr, "  %-24s %s (%s)\n", k.Name, k.Help, k.Allowed())
		}
		fmt.Fprintln(stderr, "\noutlier_detection fields:", strings.Join(envoyconf.FieldNames(), ", "))
	}
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
	write, ok := writers[*format]
	if !ok {
		return fail("-format %q is not one of json, csv, text", *format)
	}

	fields, knobs := map[string]string{}, map[string]string{}
	odNames := envoyconf.FieldNames()
	for _, s := range sets {
		k, v, found := strings.Cut(s, "=")
		k = strings.TrimSpace(k)
		switch {
		case !found || k == "":
			return fail("-set %q: want field=value", s)
		case slices.Contains(odNames, k):
			fields[k] = v
		case scenario.IsKnob(k):
			knobs[k] = v
		default:
			return fail("-set %s: unknown outlier_detection field or scenario knob (fields: %s; knobs: %s)",
				k, strings.Join(odNames, ", "), strings.Join(knobNames(), ", "))
		}
	}
	cfg, err := envoyconf.ApplyFields(p.Outlier, fields)
	if err != nil {
		return fail("%v", err)
	}
	sc, err := scenario.ApplyKnobs(p.Scenario(), knobs)
	if err != nil {
		return fail("%v", err)
	}
	res, err := scenario.Run(sc, cfg, *seed)
	if err != nil {
		return fail("%v", err)
	}
	if err := write(stdout, res); err != nil {
		fmt.Fprintf(stderr, "outlierlab run: %v\n", err)
		return 1
	}
	return 0
}

var writers = map[string]func(io.Writer, scenario.Result) error{
	"json": scenario.WriteJSONLines,
	"csv":  scenario.WriteCSV,
	"text": scenario.WriteText,
}

func presetNames() []string {
	var out []string
	for _, p := range scenario.Presets() {
		out = append(out, p.Name)
	}
	return out
}

func knobNames() []string {
	var out []string
	for _, k := range scenario.Knobs() {
		out = append(out, k.Name)
	}
	return out
}
