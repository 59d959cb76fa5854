package grpcgo

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"google.golang.org/grpc/codes"

	"outlierlab/engine/envoyconf"
	"outlierlab/engine/replay"
)

var writeDir = flag.String("write", "", "write each scenario as a gRPC-dialect replay trace (grpc-go's events as expect) into this folder")

func synctestWait() { synctest.Wait() }

// fault makes a host fail some of its calls in some intervals.
type fault struct {
	host        int
	from, until int // intervals [from, until); until 0: to the end
	// The j-th call of the interval (from 1) fails when it crosses a
	// multiple of den/num: floor(j·num/den) > floor((j−1)·num/den), so n
	// calls hold floor(n·num/den) failures, evenly spaced.
	num, den int
	codes    []codes.Code // cycled over the failures; none: UNAVAILABLE
}

// scenario is one cross-check: an Envoy OutlierDetection config (what the
// engine reads; grpc-go gets its xDS translation), the hosts, the calls per
// interval and the faults.
type scenario struct {
	name      string
	hosts     int
	calls     int // per interval, a multiple of lcm(1..hosts)
	intervals int
	config    string
	faults    []fault
	// want pins what grpc-go did, canonical order, "AT_MS HOST EVENT
	// [DETECTOR]", so the scenario's point stays visible and checked.
	want []string
}

// interval is the config's interval as grpc-go reads it: the block is
// read by the engine's gRPC dialect (envoyconf.ParseJSONGRPC), so a
// scenario may hold what only Envoy refuses.
func (sc *scenario) interval() time.Duration {
	cfg, err := envoyconf.ParseJSONGRPC([]byte(sc.config))
	if err != nil {
		panic(fmt.Sprintf("%s: %v", sc.name, err))
	}
	return time.Duration(cfg.GRPCIntervalNs())
}

// status is the code a backend returns to the j-th call of interval k.
func (sc *scenario) status(host, k, j int) codes.Code {
	for _, f := range sc.faults {
		if f.host != host || k < f.from || (f.until > 0 && k >= f.until) {
			continue
		}
		if n := j * f.num / f.den; n > (j-1)*f.num/f.den {
			if len(f.codes) == 0 {
				return codes.Unavailable
			}
			return f.codes[(n-1)%len(f.codes)]
		}
	}
	return codes.OK
}

// grpcConfig is grpc-go's xDS translation of the Envoy config
// (xdsresource/unmarshal_cds.go, outlierConfigFromCluster): the durations
// and max_ejection_percent as they are; successRateEjection unless
// enforcing_success_rate is 0; failurePercentageEjection only when
// enforcing_failure_percentage is set and not 0; each with the fields that
// are set (grpc-go fills in the rest); every other field dropped.
func (sc *scenario) grpcConfig() (map[string]any, error) {
	var in map[string]json.RawMessage
	if err := json.Unmarshal([]byte(sc.config), &in); err != nil {
		return nil, err
	}
	num := func(k string) (uint32, bool) {
		raw, ok := in[k]
		if !ok {
			return 0, false
		}
		n, err := strconv.ParseUint(string(raw), 10, 32)
		if err != nil {
			panic(fmt.Sprintf("%s: %s: %v", sc.name, k, err))
		}
		return uint32(n), true
	}
	copyTo := func(dst map[string]any, pairs ...string) {
		for i := 0; i < len(pairs); i += 2 {
			if raw, ok := in[pairs[i]]; ok {
				dst[pairs[i+1]] = raw
			}
		}
	}
	od := map[string]any{}
	copyTo(od, "interval", "interval", "base_ejection_time", "baseEjectionTime",
		"max_ejection_time", "maxEjectionTime", "max_ejection_percent", "maxEjectionPercent")
	if v, set := num("enforcing_success_rate"); !set || v != 0 {
		sr := map[string]any{}
		copyTo(sr, "success_rate_stdev_factor", "stdevFactor", "enforcing_success_rate", "enforcementPercentage",
			"success_rate_minimum_hosts", "minimumHosts", "success_rate_request_volume", "requestVolume")
		od["successRateEjection"] = sr
	}
	if v, set := num("enforcing_failure_percentage"); set && v != 0 {
		fp := map[string]any{}
		copyTo(fp, "failure_percentage_threshold", "threshold", "enforcing_failure_percentage", "enforcementPercentage",
			"failure_percentage_minimum_hosts", "minimumHosts", "failure_percentage_request_volume", "requestVolume")
		od["failurePercentageEjection"] = fp
	}
	return od, nil
}

// trace is the run as a gRPC-dialect replay trace: per interval k, each
// host's OK and non-OK counts at k·I + I/2, and the tick at (k+1)·I.
func (sc *scenario) trace(obs *observed) *replay.Trace {
	iv := sc.interval().Milliseconds()
	tr := &replay.Trace{
		Name:    sc.name,
		Source:  "grpc-go v1.85.0 outlier_detection_experimental over round_robin, driven by conformance/grpcgo (testing/synctest, net.Pipe)",
		Dialect: "grpc",
		Config:  json.RawMessage(sc.config),
	}
	for i := range sc.hosts {
		tr.Hosts = append(tr.Hosts, fmt.Sprintf("h%d", i))
	}
	for k, row := range obs.traffic {
		at := int64(k)*iv + iv/2
		for i, c := range row {
			for _, r := range []struct {
				n      int
				result string
			}{{c.ok, "request_success"}, {c.failed, "request_failed"}} {
				if r.n > 0 {
					n := r.n
					tr.Steps = append(tr.Steps, replay.Step{AtMs: at, Ext: &replay.ResultStep{Host: tr.Hosts[i], Result: r.result, Times: &n}})
				}
			}
		}
		tr.Steps = append(tr.Steps, replay.Step{AtMs: int64(k+1) * iv, Tick: true})
	}
	return tr
}

// canonical orders one tick's events the way grpc-go's
// intervalTimerAlgorithm makes them (success rate, failure percentage,
// unejection), hosts in index order inside each pass: grpc-go walks a map
// there, and the scenarios avoid cases where that order changes an outcome.
func canonical(evs []event) []event {
	phase := func(e event) int {
		switch {
		case e.Event == "uneject":
			return 2
		case e.Detector == "failure_percentage":
			return 1
		}
		return 0
	}
	idx := func(e event) int { n, _ := strconv.Atoi(strings.TrimPrefix(e.Host, "h")); return n }
	out := slices.Clone(evs)
	slices.SortStableFunc(out, func(a, b event) int {
		if a.AtMs != b.AtMs {
			return int(a.AtMs - b.AtMs)
		}
		if pa, pb := phase(a), phase(b); pa != pb {
			return pa - pb
		}
		return idx(a) - idx(b)
	})
	return out
}

func lines(evs []event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.String()
	}
	return out
}

// TestCrossCheck runs every scenario through grpc-go and through the
// engine's gRPC dialect: the events must be identical.
func TestCrossCheck(t *testing.T) {
	if *writeDir != "" {
		if err := os.MkdirAll(*writeDir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for i := range scenarios {
		sc := &scenarios[i]
		t.Run(sc.name, func(t *testing.T) {
			var obs *observed
			synctest.Test(t, func(t *testing.T) { obs = runGRPC(t, sc) })
			if t.Failed() {
				return
			}
			grpcGo := lines(canonical(obs.events))
			if sc.want != nil && !slices.Equal(grpcGo, sc.want) {
				t.Errorf("grpc-go did not do what the scenario pins:\n  grpc-go: %q\n  pinned:  %q", grpcGo, sc.want)
			}
			tr := sc.trace(obs)
			out, err := replay.Run(tr)
			if err != nil {
				t.Fatalf("engine: %v", err)
			}
			var eng []event
			for _, e := range out.Events {
				eng = append(eng, event{e.AtMs, e.Host, e.Event, e.Detector})
			}
			engine := lines(canonical(eng))
			if !slices.Equal(grpcGo, engine) {
				t.Errorf("the engine's gRPC dialect differs from grpc-go\n%s", diff(grpcGo, engine))
			}
			checkServed(t, sc, obs)
			if *writeDir != "" {
				writeTrace(t, sc, tr, obs.events)
			}
		})
	}
}

// checkServed: the statuses the servers sent are the client's counts, and
// every failing call ended with one of its fault's codes.
func checkServed(t *testing.T, sc *scenario, obs *observed) {
	for i := range sc.hosts {
		var ok, failed int
		for _, row := range obs.traffic {
			ok += row[i].ok
			failed += row[i].failed
		}
		var sOK, sFailed int
		for c, n := range obs.served[i] {
			if c == codes.OK {
				sOK += n
			} else {
				sFailed += n
			}
		}
		if ok != sOK || failed != sFailed {
			t.Errorf("h%d: the client saw %d OK / %d failed, the server sent %d / %d", i, ok, failed, sOK, sFailed)
		}
	}
}

func diff(want, got []string) string {
	var b strings.Builder
	for i := range max(len(want), len(got)) {
		w, g := "-", "-"
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		mark := "  "
		if w != g {
			mark = "≠ "
		}
		fmt.Fprintf(&b, "%s grpc-go %-40s engine %s\n", mark, w, g)
	}
	return b.String()
}

func writeTrace(t *testing.T, sc *scenario, tr *replay.Trace, evs []event) {
	tr.Expect = &replay.Output{Events: []replay.Event{}, Snapshots: []replay.Snapshot{}}
	for _, e := range canonical(evs) {
		tr.Expect.Events = append(tr.Expect.Events, replay.Event{AtMs: e.AtMs, Host: e.Host, Event: e.Event, Detector: e.Detector})
	}
	b, err := json.MarshalIndent(tr, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(*writeDir, sc.name+".json"), append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}
