package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"outlierlab/engine/envoyconf"
	"outlierlab/engine/eventlog"
	"outlierlab/engine/whatif"
)

// whatifEvents is `outlierlab whatif -events EVENTS.jsonl`: Envoy's
// outlier event log beside the lab's replay of the access log. Exit 0
// when something was compared (lines set aside are counted, shown with
// their numbers and warned of on stderr), 2 when no event is usable.
func whatifEvents(stdout, stderr io.Writer, eventsFile, format, configFile, cluster string, c envoyconf.Cluster, log *whatif.Log, opts whatif.Options) int {
	events, err := readEvents(eventsFile, eventsCluster(cluster, c.Name, log))
	if err != nil {
		fmt.Fprintf(stderr, "outlierlab whatif: %s: %v\n", eventsFile, err)
		return 2
	}
	if k := events.Counts; k.Skipped()+k.UnknownFields > 0 {
		fmt.Fprintf(stderr, "outlierlab whatif: warning: %s: of %d lines, %d set aside and %d read without fields Envoy's proto lacks:", eventsFile, events.Lines, k.Skipped(), k.UnknownFields)
		for _, p := range events.Problems {
			fmt.Fprintf(stderr, " line %d (%s);", p.Line, p.Kind)
		}
		fmt.Fprintln(stderr)
	}
	cmp, err := whatif.Compare(log, events, opts)
	if err != nil {
		fmt.Fprintf(stderr, "outlierlab whatif: %v\n", err)
		return 2
	}
	if configFile == "" {
		configFile = "Envoy's defaults"
	}
	if format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(struct {
			Config   map[string]any     `json:"config"`
			EventLog eventLogView       `json:"event_log"`
			Replay   whatif.Summary     `json:"replay"`
			Compare  *whatif.Comparison `json:"comparison"`
		}{map[string]any{"file": configFile, "source": c.Source, "notes": append([]string{}, c.Notes...)},
			eventLogView{eventsFile, events.Cluster, events.Lines, len(events.Events), events.Counts, append([]eventlog.Problem{}, events.Problems...)}, cmp.Result.Summary, cmp})
	} else {
		var b strings.Builder
		fmt.Fprintf(&b, "config: %s (%s)\n", configFile, c.Source)
		for _, n := range c.Notes {
			fmt.Fprintf(&b, "  note: %s\n", n)
		}
		fmt.Fprintf(&b, "access log: %d requests on %d hosts, from %s\n", cmp.Result.Summary.Requests, len(cmp.Result.Hosts), cmp.Result.Start.Format("2006-01-02T15:04:05Z07:00"))
		if _, err = io.WriteString(stdout, b.String()); err == nil {
			err = whatif.WriteCompareText(stdout, cmp, events, c.Outlier)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "outlierlab whatif: %v\n", err)
		return 1
	}
	return 0
}

// parseConfigFile reads a -config file: Envoy's /config_dump (JSON with
// "configs") is searched for the cluster by name, anything else is
// ParseCluster's.
func parseConfigFile(data []byte, cluster string) (envoyconf.Cluster, error) {
	var probe map[string]json.RawMessage
	if json.Unmarshal(data, &probe) == nil && probe["configs"] != nil {
		d, err := envoyconf.ParseConfigDump(data, cluster)
		if err != nil {
			return envoyconf.Cluster{}, err
		}
		note := fmt.Sprintf("read from the config dump's %s", d.Where)
		if d.VersionInfo != "" {
			note += fmt.Sprintf(" (version_info %s)", d.VersionInfo)
		}
		d.Notes = append([]string{note}, d.Notes...)
		return d.Cluster, nil
	}
	return envoyconf.ParseCluster(data)
}

// eventLogView is the event log without its events: the comparison
// carries each of them.
type eventLogView struct {
	File     string             `json:"file"`
	Cluster  string             `json:"cluster"`
	Lines    int                `json:"lines"`
	Events   int                `json:"events"`
	Counts   eventlog.Counts    `json:"counts"`
	Problems []eventlog.Problem `json:"problems"`
}

// logCluster is -cluster as the access log is filtered by it: a log that
// names no cluster (Envoy's default format) is all of the one -cluster
// chose in a config dump or an event log.
func logCluster(log *whatif.Log, cluster string) string {
	if log.NamesClusters() {
		return cluster
	}
	return ""
}

// adminHosts reads Envoy's /clusters?format=json for the cluster named
// cluster, else the config's: its hosts join the replay (the cap counts
// every host of the cluster), and a note says which were ejected when the
// admin was asked.
func adminHosts(file, cluster string, c *envoyconf.Cluster) ([]string, error) {
	if file == "" {
		return nil, nil
	}
	data, err := readSmall(file)
	if err != nil {
		return nil, err
	}
	if cluster == "" {
		cluster = c.Name
	}
	ac, err := envoyconf.ParseAdminClusters(data, cluster)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	hosts := make([]string, len(ac.Hosts))
	for i, h := range ac.Hosts {
		hosts[i] = h.Address
	}
	ejected := "none"
	if e := ac.EjectedHosts(); len(e) > 0 {
		ejected = strings.Join(e, ", ")
	}
	c.Notes = append(c.Notes, fmt.Sprintf("%s: cluster %q has %d hosts; ejected when the admin was asked (failed_outlier_check): %s", file, ac.Name, len(hosts), ejected))
	return hosts, nil
}

// readSmall reads a file of at most maxConfigBytes.
func readSmall(file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	if len(data) > maxConfigBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", file, maxConfigBytes)
	}
	return data, nil
}

// eventsCluster is the cluster whose events are compared: -cluster, else
// the config's name, else the one the access log names; "" lets the
// event log's most named cluster be chosen.
func eventsCluster(flag, config string, log *whatif.Log) string {
	if flag != "" {
		return flag
	}
	if config != "" {
		return config
	}
	named := ""
	for _, e := range log.Entries {
		if e.Cluster != "" {
			if named != "" && named != e.Cluster {
				return ""
			}
			named = e.Cluster
		}
	}
	return named
}

func readEvents(file, cluster string) (*eventlog.Log, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	log, err := eventlog.Parse(f, cluster)
	if errors.Is(err, eventlog.ErrNoEvents) && log != nil && len(log.Problems) > 0 {
		var b strings.Builder
		for _, p := range log.Problems {
			fmt.Fprintf(&b, "\n  line %d: %s", p.Line, p.Reason)
		}
		return nil, fmt.Errorf("%v%s", err, b.String())
	}
	return log, err
}
