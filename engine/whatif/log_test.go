package whatif

import (
	"strings"
	"testing"
	"time"

	"outlierlab/engine"
)

const istioLine = `[2026-05-01T02:00:01.250Z] "GET /reviews/1 HTTP/1.1" 503 UF,URX upstream_reset_before_response_started{connection_failure} - "delayed connect error: 111" 0 91 1200 - "-" "curl/8.5.0" "3b2a" "reviews:9080" "10.1.0.3:9080" outbound|9080||reviews.default.svc.cluster.local - 10.96.0.7:9080 10.244.0.9:51234 - default`

func TestParseLine(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		want       Entry
	}{
		{"envoy default", `[2026-05-01T02:00:00.310Z] "POST /api HTTP/2" 204 - 154 0 226 100 "10.0.35.28" "nsq2http" "cc21" "locations" "tcp://10.0.2.1:80"`,
			Entry{Format: FormatEnvoy, Start: ms(310), Answer: ms(410), Code: 204, Host: "tcp://10.0.2.1:80", DurationMs: 226}},
		{"istio default", istioLine,
			Entry{Format: FormatIstio, Start: ms(1250), Answer: ms(2450), Code: 503, Flags: []string{"UF", "URX"}, Host: "10.1.0.3:9080",
				Cluster: "outbound|9080||reviews.default.svc.cluster.local", DurationMs: 1200}},
		{"json numbers", `{"start_time":"2026-05-01T02:00:02.000Z","response_code":503,"response_flags":"URX","upstream_host":"10.1.0.3:9080","upstream_request_attempt_count":3,"duration":80,"upstream_service_time":"2"}`,
			Entry{Format: FormatJSON, Start: ms(2000), Answer: ms(2002), Code: 503, Flags: []string{"URX"}, Host: "10.1.0.3:9080", Attempts: 3, DurationMs: 80}},
		{"json strings, other key spellings, no host", `{"START_TIME":"2026-05-01T02:00:03Z","RESPONSE_CODE":"503","RESPONSE_FLAGS":"UH","UPSTREAM_HOST":"-","DURATION":"0"}`,
			Entry{Format: FormatJSON, Start: ms(3000), Answer: ms(3000), Code: 503, Flags: []string{"UH"}, DurationMs: 0}},
		{"epoch seconds", `{"start_time":"1777600804.5","response_code":200,"upstream_host":"h1"}`,
			Entry{Format: FormatJSON, Start: time.Unix(1777600804, 500e6).UTC(), Answer: time.Unix(1777600804, 500e6).UTC(), Code: 200, Host: "h1", DurationMs: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseLine(tc.line)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Start.Equal(tc.want.Start) || !got.Answer.Equal(tc.want.Answer) || got.Code != tc.want.Code || strings.Join(got.Flags, ",") != strings.Join(tc.want.Flags, ",") ||
				got.Host != tc.want.Host || got.Cluster != tc.want.Cluster || got.Attempts != tc.want.Attempts || got.DurationMs != tc.want.DurationMs || got.Format != tc.want.Format {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestBadLinesAreCountedAndShown(t *testing.T) {
	good := envoyLine(ms(0), 200, "-", 4, "3", "h1")
	bad := []struct{ line, reason string }{
		{"garbage", "1 fields; Envoy's default format has 13"},
		{strings.Replace(good, "2026-05-01T02:00:00.000Z", "yesterday", 1), `START_TIME "yesterday" is not a time`},
		{strings.Replace(good, "] \"GET", "] \"GET", 1)[:40], "is not closed"},
		{strings.Replace(good, " 200 ", " OK ", 1), `RESPONSE_CODE "OK" is not an HTTP status`},
		{`{"start_time": "2026-05-01T02:00:00Z"`, "not valid JSON"},
		{`{"start_time": "2026-05-01T02:00:00Z", "response_code": 200}`, "no upstream_host key"},
		{strings.Replace(good, " 4 3 ", " fast 3 ", 1), `DURATION "fast"`},
	}
	lines := []string{good}
	for _, b := range bad {
		lines = append(lines, b.line, good)
	}
	log, err := ParseLog(strings.NewReader(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	if log.Unparsed != len(bad) || len(log.Entries) != len(bad)+1 || len(log.Errors) != MaxLineErrors {
		t.Fatalf("unparsed %d, entries %d, shown %d", log.Unparsed, len(log.Entries), len(log.Errors))
	}
	for i, e := range log.Errors {
		if e.Line != 2*i+2 || !strings.Contains(e.Reason, bad[i].reason) {
			t.Errorf("error %d = %+v, want line %d with %q", i, e, 2*i+2, bad[i].reason)
		}
	}
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		code      int
		flags     string
		host      string
		want      Report
		connected bool
	}{
		{200, "-", "h", ReportResponse, true},
		{503, "-", "h", ReportResponse, true},
		{503, "URX", "h", ReportResponse, true}, // retries ran out on an upstream 503
		{503, "UF", "h", ReportConnectFailed, false},
		{503, "UF,URX", "h", ReportConnectFailed, false},
		{504, "UT", "h", ReportTimeout, true},
		{503, "UC", "h", ReportConnectFailed, true},
		{503, "UR", "h", ReportConnectFailed, true},
		{503, "UO", "h", ReportNothing, false},
		{503, "UH", "-", ReportNothing, false},
		{404, "NR", "-", ReportNothing, false},
		{0, "DC", "h", ReportNothing, true}, // the client left before any response
	} {
		e, err := parseLine(envoyLine(ms(0), tc.code, tc.flags, 1, "-", tc.host))
		if err != nil {
			t.Fatal(err)
		}
		got, connected := Classify(e)
		if got != tc.want || connected != tc.connected {
			t.Errorf("%d %s %s: %v, connected %v; want %v, %v", tc.code, tc.flags, tc.host, got, connected, tc.want, tc.connected)
		}
	}
}

// In split mode a connect failure is a local-origin failure: two UF lines
// eject with consecutive_local_origin_failure 2, while the 5xx counter
// does not move. t = 0 is 02:00:01, the first line's second, so the
// second failure, answered at 02:00:03.250, is at 2.25 s.
func TestSplitModeConnectFailures(t *testing.T) {
	cfg := engine.DefaultConfig()
	cfg.SplitExternalLocalOriginErrors, cfg.ConsecutiveLocalOriginFailure, cfg.MaxEjectionPercent = true, 2, 100
	text := envoyLine(ms(1000), 200, "-", 4, "3", "h1") + "\n" + envoyLine(ms(1000), 200, "-", 4, "3", "h2") + "\n" +
		envoyLine(ms(2000), 503, "UF", 250, "-", "h1") + "\n" + envoyLine(ms(3000), 503, "UF", 250, "-", "h1") + "\n"
	res := runLog(t, text, cfg, 50)
	if len(res.Events) == 0 || res.Events[0].Event != "eject" || res.Events[0].Detector != "consecutive_local_origin_failure" || res.Events[0].AtMs != 2250 {
		t.Errorf("events %+v", res.Events)
	}
}

// In panic Envoy routes to ejected hosts too, so their lines count: two
// hosts, one ejected, is 50% healthy, below a 60% threshold.
func TestPanicFeedsEjectedHosts(t *testing.T) {
	cfg := engine.DefaultConfig()
	cfg.Consecutive5xx, cfg.MaxEjectionPercent = 1, 100
	text := envoyLine(ms(500), 200, "-", 4, "3", "h2") + "\n" + envoyLine(ms(1000), 503, "-", 4, "3", "h1") + "\n" + envoyLine(ms(2000), 200, "-", 4, "3", "h1") + "\n"
	for _, tc := range []struct {
		threshold float64
		dropped   int
	}{{60, 0}, {50, 1}, {0, 1}} {
		res := runLog(t, text, cfg, tc.threshold)
		if res.Summary.DroppedWhileEjected != tc.dropped {
			t.Errorf("panic threshold %v: dropped %d, want %d", tc.threshold, res.Summary.DroppedWhileEjected, tc.dropped)
		}
	}
}

func TestClusterSelection(t *testing.T) {
	two := strings.Replace(istioLine, "outbound|9080||reviews", "outbound|9080||ratings", 1)
	log, err := ParseLog(strings.NewReader(istioLine + "\n" + istioLine + "\n" + two + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := engine.DefaultConfig()
	if _, err := Run(log, Options{Config: cfg}); err == nil || !strings.Contains(err.Error(), "2 upstream clusters (outbound|9080||reviews.default.svc.cluster.local: 2, outbound|9080||ratings.default.svc.cluster.local: 1)") {
		t.Errorf("no cluster chosen: %v", err)
	}
	res, err := Run(log, Options{Config: cfg, Cluster: "outbound|9080||ratings.default.svc.cluster.local"})
	if err != nil || res.Summary.Requests != 1 || res.Summary.OtherCluster != 2 {
		t.Errorf("one cluster: %+v, %v", res, err)
	}
	if _, err := Run(log, Options{Config: cfg, Cluster: "nope"}); err == nil || !strings.Contains(err.Error(), `cluster "nope": no request`) {
		t.Errorf("unknown cluster: %v", err)
	}
}

// Counts of lines read as English: "1 lines did not parse" was issue 19's.
func TestLinesWere(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{{0, "0 lines were"}, {1, "1 line was"}, {2, "2 lines were"}} {
		if got := linesWere(tc.n, "were", "was"); got != tc.want {
			t.Errorf("linesWere(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
