package cli

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"

	"sigs.k8s.io/yaml"

	"outlierlab/engine/envoyconf"
	"outlierlab/engine/lint"
)

// runLint exits 0 when the config can do its job on the cluster, 1 when a
// finding is a problem (e.g. a cap that refuses every ejection), 2 on bad
// input.
func runLint(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("lint", flag.ContinueOnError)
	fs.SetOutput(stderr)
	hosts := fs.Int("hosts", 0, "number of hosts in the cluster (1–10000, required)")
	rps := fs.Float64("rps", 0, "the cluster's requests per second (0: unknown)")
	panicPct := fs.Float64("panic-threshold", -1, "healthy_panic_threshold in percent, 0–100 (default: the YAML's, else 50)")
	clients := fs.Int("clients", 1, "client proxies (a mesh's pods) sharing -rps, each with its own detector (1–100000)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: outlierlab lint -hosts N [-rps R] [-clients C] [-panic-threshold P] FILE.yaml|-")
		fmt.Fprintln(stderr, "FILE is an Envoy cluster (or just its outlier_detection block) or an Istio DestinationRule")
		fmt.Fprintln(stderr, "(translated as istiod translates it), YAML or JSON; - reads stdin.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	if *hosts < 1 || *hosts > 10000 {
		fmt.Fprintf(stderr, "outlierlab lint: -hosts: %d is out of range (allowed 1–10000)\n", *hosts)
		return 2
	}
	// Written so that NaN, which fails every comparison, is refused too.
	if !(*rps >= 0 && *rps <= 1e9) {
		fmt.Fprintf(stderr, "outlierlab lint: -rps: %g is out of range (allowed 0–1e9)\n", *rps)
		return 2
	}
	if *clients < 1 || *clients > 100000 {
		fmt.Fprintf(stderr, "outlierlab lint: -clients: %d is out of range (allowed 1–100000)\n", *clients)
		return 2
	}
	if *panicPct != -1 && !(*panicPct >= 0 && *panicPct <= 100) {
		fmt.Fprintf(stderr, "outlierlab lint: -panic-threshold: %g is out of range (allowed 0–100)\n", *panicPct)
		return 2
	}
	name := fs.Arg(0)
	var r io.Reader = os.Stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			fmt.Fprintf(stderr, "outlierlab lint: %v\n", err)
			return 2
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, 1<<20))
	if err != nil {
		fmt.Fprintf(stderr, "outlierlab lint: %s: %v\n", name, err)
		return 2
	}
	// An empty or comment-only file parses as null, which envoyconf reads
	// as an empty outlier_detection: linting Envoy's defaults would then
	// answer a question nobody asked (a wrong path, a truncated paste).
	if doc, err := yaml.YAMLToJSON(data); err == nil && bytes.Equal(bytes.TrimSpace(doc), []byte("null")) {
		fmt.Fprintf(stderr, "outlierlab lint: %s: no outlier_detection settings found: the file is empty or only comments (write \"outlier_detection: {}\" to lint Envoy's defaults)\n", name)
		return 2
	}
	c, err := envoyconf.ParseCluster(data)
	if err != nil {
		fmt.Fprintf(stderr, "outlierlab lint: %s: %v\n", name, err)
		return 2
	}
	panicThreshold := c.PanicThreshold
	if *panicPct != -1 {
		panicThreshold = *panicPct
	}
	for _, n := range c.Notes {
		fmt.Fprintf(stdout, "%-8s %s\n", "note", n)
	}
	findings := lint.Check(c.Outlier, lint.Cluster{Hosts: *hosts, RPS: *rps, PanicThreshold: panicThreshold, Clients: *clients})
	code := 0
	for _, f := range findings {
		fmt.Fprintf(stdout, "%-8s %s: %s\n", f.Severity, f.Field, f.Message)
		if f.Severity == lint.Problem {
			code = 1
		}
	}
	return code
}
