package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"outlierlab/engine/envoyconf"
	"outlierlab/engine/whatif"
)

// maxConfigBytes bounds a config file, as lint does.
const maxConfigBytes = 1 << 20

// runWhatif is `outlierlab whatif -log FILE [-config CLUSTER.yaml]
// [-cluster NAME] [-seed N] [-format json|text]`: what the detector would
// have done on the traffic of an access log, with the given config. Exit 0
// when it ran (lines that do not parse are counted and shown, and the run
// goes on), 2 on bad input: a config error names the file and the field,
// a log error the file and the line.
func runWhatif(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("whatif", flag.ContinueOnError)
	fs.SetOutput(stderr)
	logFile := fs.String("log", "", "the access log: Envoy's default format, Istio's, or JSON lines; - reads stdin (required)")
	configFile := fs.String("config", "", "an Envoy cluster, its outlier_detection block, an Istio DestinationRule (YAML or JSON), or Envoy's /config_dump (with -cluster when it has several) (default: Envoy's defaults)")
	cluster := fs.String("cluster", "", "replay only this upstream cluster (needed when the log has several)")
	seed := fs.Uint64("seed", 1, "seed of the enforcing_* draws and the ejection jitter")
	format := fs.String("format", "text", "output: text, or json (events in the replay format, a summary, frames for charts)")
	clustersFile := fs.String("clusters", "", "Envoy's /clusters?format=json: the cluster's hosts join the replay (max_ejection_percent counts hosts that served nothing too), and which were ejected is noted")
	eventsFile := fs.String("events", "", "Envoy's outlier event log (event_log_path, JSON lines of OutlierDetectionEvent): match its events with the replay's")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: outlierlab whatif -log FILE [-events EVENTS.jsonl] [-clusters CLUSTERS.json] [-config CLUSTER.yaml] [-cluster NAME] [-seed N] [-format text|json]")
		fmt.Fprintln(stderr, "Replays an access log through the detector: what outlier detection would have done on that traffic.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "outlierlab whatif: "+format+"\n", a...)
		return 2
	}
	switch {
	case fs.NArg() > 0:
		return fail("unexpected argument %q", fs.Arg(0))
	case *logFile == "":
		return fail("-log is required (an access-log file, or - for stdin)")
	case *format != "text" && *format != "json":
		return fail("-format %q is not one of text, json", *format)
	}
	c, err := readConfig(*configFile, *cluster)
	if err != nil {
		return fail("%v", err)
	}
	log, err := readLog(*logFile)
	if err != nil {
		return fail("%s: %v", *logFile, err)
	}
	opts := whatif.Options{Config: c.Outlier, PanicThreshold: c.PanicThreshold, Cluster: logCluster(log, *cluster), Seed: *seed}
	if opts.Hosts, err = adminHosts(*clustersFile, *cluster, &c); err != nil {
		return fail("%v", err)
	}
	if *eventsFile != "" {
		return whatifEvents(stdout, stderr, *eventsFile, *format, *configFile, *cluster, c, log, opts)
	}
	res, err := whatif.Run(log, opts)
	if err != nil {
		return fail("%s: %v", *logFile, err)
	}
	if err := writeWhatif(stdout, *format, *configFile, c, res); err != nil {
		fmt.Fprintf(stderr, "outlierlab whatif: %v\n", err)
		return 1
	}
	return 0
}

// readConfig reads the cluster to replay with; no file is Envoy's
// defaults. A /config_dump is searched for the cluster named cluster.
func readConfig(file, cluster string) (envoyconf.Cluster, error) {
	if file == "" {
		return envoyconf.ParseCluster(nil)
	}
	data, err := readSmall(file)
	if err != nil {
		return envoyconf.Cluster{}, err
	}
	c, err := parseConfigFile(data, cluster)
	if err != nil {
		return envoyconf.Cluster{}, fmt.Errorf("%s: %v", file, err)
	}
	return c, nil
}

func readLog(file string) (*whatif.Log, error) {
	if file == "-" {
		return whatif.ParseLog(os.Stdin)
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return whatif.ParseLog(f)
}

// writeWhatif writes the replay; the config's source and notes come first.
func writeWhatif(w io.Writer, format, file string, c envoyconf.Cluster, res *whatif.Result) error {
	if file == "" {
		file = "Envoy's defaults"
	}
	if format == "json" {
		type config struct {
			File   string           `json:"file"`
			Source envoyconf.Source `json:"source"`
			Notes  []string         `json:"notes"`
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Config config `json:"config"`
			*whatif.Result
		}{config{file, c.Source, append([]string{}, c.Notes...)}, res})
	}
	fmt.Fprintf(w, "config: %s (%s)\n", file, c.Source)
	for _, n := range c.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	return whatif.WriteText(w, res, c.Outlier)
}
