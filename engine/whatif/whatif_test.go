package whatif

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"outlierlab/engine"
	"outlierlab/engine/envoyconf"
	"outlierlab/engine/replay"
)

// envoyLine is one line in Envoy's default format.
func envoyLine(at time.Time, code int, flags string, duration int, service, host string) string {
	return fmt.Sprintf(`[%s] "GET /search HTTP/1.1" %d %s 0 120 %d %s "-" "curl/8.5.0" "req-1" "search.internal" "%s"`,
		at.Format("2006-01-02T15:04:05.000Z"), code, flags, duration, service, host)
}

var t0 = time.Date(2026, 5, 1, 2, 0, 0, 0, time.UTC)

func ms(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }

// sixHosts is a log of six hosts, one request per host every second for
// 40 s (at 10 ms past each second, host by host), where 10.0.0.5 answers five 503 in a
// row in second 20: at 20.100, 20.300, … 20.900, each answered 2 ms after
// it started.
func sixHosts() string {
	var lines []string
	for sec := range 40 {
		for h := 1; h <= 6; h++ {
			lines = append(lines, envoyLine(ms(sec*1000+h*10), 200, "-", 4, "3", fmt.Sprintf("10.0.0.%d:8080", h)))
		}
	}
	for i := range 5 {
		lines = append(lines, envoyLine(ms(20100+200*i), 503, "-", 3, "2", "10.0.0.5:8080"))
	}
	return strings.Join(lines, "\n") + "\n"
}

func runLog(t *testing.T, text string, cfg engine.Config, panicThreshold float64) *Result {
	t.Helper()
	log, err := ParseLog(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(log, Options{Config: cfg, PanicThreshold: panicThreshold, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// The fifth 503 (answered at 20.902 s) ejects 10.0.0.5 at that moment;
// it returns at the first tick at or after 20.902 + 30 = 50.902 s: 60 s.
func TestFiveErrorsInARowEjectThenReturnAtATick(t *testing.T) {
	cfg := engine.DefaultConfig()
	cfg.MaxEjectionPercent = 20 // one host of six: 100·1/6 = 16.7% ≤ 20%
	res := runLog(t, sixHosts(), cfg, 50)
	want := []replay.Event{
		// A 503 is a gateway error too: consecutive_gateway_failure (5)
		// fires first and, at its default enforcing 0, only detects.
		{AtMs: 20902, Host: "10.0.0.5:8080", Event: "detect", Detector: "consecutive_gateway_failure"},
		{AtMs: 20902, Host: "10.0.0.5:8080", Event: "eject", Detector: "consecutive_5xx"},
		{AtMs: 60000, Host: "10.0.0.5:8080", Event: "uneject"},
	}
	if !slices.Equal(res.Events, want) {
		t.Errorf("events\n got %+v\nwant %+v", res.Events, want)
	}
	if !res.Start.Equal(t0) {
		t.Errorf("start %v, want the first line's second %v", res.Start, t0)
	}
	// Frames close at every tick, 10 s to 60 s (the log ends at 39.06 s;
	// the replay goes on until the ejected host is back).
	if n := len(res.Frames); n != 6 || res.Frames[5].TMs != 60000 {
		t.Errorf("%d frames, last at %d", n, res.Frames[len(res.Frames)-1].TMs)
	}
	if f := res.Frames[2]; !f.Hosts[4].Ejected || f.Hosts[4].ReturnsInMs != 50902-30000 {
		t.Errorf("frame at 30 s: host 5 %+v", f.Hosts[4])
	}
	// 10.0.0.5's lines from 21.05 s to 39.05 s (19 of them) would have gone
	// elsewhere.
	if s := res.Summary; s.DroppedWhileEjected != 19 || s.Reported != 240+5-19 || s.Requests != 245 {
		t.Errorf("summary %+v", s)
	}
}

// At Envoy's default cap (10%) the same log ejects nobody: the cap
// refuses one host of six.
func TestDefaultCapRefusesOneOfSix(t *testing.T) {
	res := runLog(t, sixHosts(), engine.DefaultConfig(), 50)
	want := []replay.Event{
		{AtMs: 20902, Host: "10.0.0.5:8080", Event: "overflow", Detector: "consecutive_gateway_failure"},
		{AtMs: 20902, Host: "10.0.0.5:8080", Event: "overflow", Detector: "consecutive_5xx"},
	}
	if !slices.Equal(res.Events, want) {
		t.Errorf("events\n got %+v\nwant %+v", res.Events, want)
	}
}

func TestSampleLogs(t *testing.T) {
	for _, tc := range []struct {
		log, config string
		want        []replay.Event
		retried     int
	}{
		{"envoy.log", "whatif/cluster.yaml", []replay.Event{
			{AtMs: 20902, Host: "10.0.0.5:8080", Event: "detect", Detector: "consecutive_gateway_failure"},
			{AtMs: 20902, Host: "10.0.0.5:8080", Event: "eject", Detector: "consecutive_5xx"},
			{AtMs: 60000, Host: "10.0.0.5:8080", Event: "uneject"},
		}, 0},
		// The DestinationRule turns the gateway detector off
		// (consecutiveGatewayErrors: 0) and lifts the cap to 100%.
		{"istio.jsonl", "import/destination-rule.yaml", []replay.Event{
			{AtMs: 19503, Host: "10.1.0.3:9080", Event: "eject", Detector: "consecutive_5xx"},
			{AtMs: 50000, Host: "10.1.0.3:9080", Event: "uneject"},
		}, 26},
	} {
		t.Run(tc.log, func(t *testing.T) {
			f, err := os.Open(filepath.Join("..", "..", "testdata", "whatif", tc.log))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			log, err := ParseLog(f)
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(filepath.Join("..", "..", "testdata", tc.config))
			if err != nil {
				t.Fatal(err)
			}
			c, err := envoyconf.ParseCluster(data)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Run(log, Options{Config: c.Outlier, PanicThreshold: c.PanicThreshold, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(res.Events, tc.want) || res.Summary.Retried != tc.retried {
				t.Errorf("events %+v, retried %d\nwant %+v, %d", res.Events, res.Summary.Retried, tc.want, tc.retried)
			}
		})
	}
}

// Plan says what Run would replay, before it runs: six hosts, 245
// requests over 40 s (from 02:00:00, the first line's second); Progress
// ends at the total; Plan fails where Run does.
func TestPlan(t *testing.T) {
	log, err := ParseLog(strings.NewReader(sixHosts()))
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Config: engine.DefaultConfig(), Seed: 1}
	p, err := Plan(log, opts)
	if err != nil {
		t.Fatal(err)
	}
	if p != (Planned{Requests: 245, Hosts: 6, Span: 39*time.Second + 63*time.Millisecond}) {
		t.Errorf("plan %+v", p)
	}
	var last [2]int
	opts.Progress = func(done, total int) { last = [2]int{done, total} }
	if _, err := Run(log, opts); err != nil || last != [2]int{245, 245} {
		t.Errorf("progress ended at %v (%v)", last, err)
	}
	opts.Cluster = "other"
	if _, err := Plan(log, opts); err == nil {
		t.Errorf("a cluster the log lacks: no error")
	}
}
