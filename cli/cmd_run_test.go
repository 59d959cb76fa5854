package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func runCLI(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = Dispatch(append([]string{"run"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

func TestRunJSONLines(t *testing.T) {
	t.Parallel()
	code, out, errs := runCLI("-scenario", "search-cache", "-set", "max_ejection_percent=34", "-seed", "3")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	var frames []map[string]any
	var summary map[string]any
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("line %d is not JSON: %v", len(frames)+1, err)
		}
		if s, ok := line["summary"]; ok {
			summary = s.(map[string]any)
			continue
		}
		if summary != nil {
			t.Fatal("a frame after the summary")
		}
		frames = append(frames, line)
	}
	if len(frames) != 30 || summary == nil {
		t.Fatalf("%d frames, summary %v", len(frames), summary != nil)
	}
	first := frames[0]
	if first["t_ms"] != 10000.0 {
		t.Fatalf("first t_ms %v, want 10000", first["t_ms"])
	}
	for _, key := range []string{"hosts", "events", "clients", "stats"} {
		if _, ok := first[key]; !ok {
			t.Errorf("frame has no %q", key)
		}
	}
	h := first["hosts"].([]any)[5].(map[string]any)
	for _, key := range []string{"name", "requests", "success_rate", "ejected"} {
		if _, ok := h[key]; !ok {
			t.Errorf("host has no %q", key)
		}
	}
	if stats := first["stats"].(map[string]any); len(stats) != 21 || stats["ejections_overflow"] != 0.0 {
		t.Errorf("stats %v", stats)
	}
	cl := first["clients"].(map[string]any)
	if _, ok := cl["requests"]; !ok {
		t.Error("clients has no requests")
	}
	if _, ok := cl["failures"]; !ok {
		t.Error("clients has no failures")
	}
	// 40 s: h5 is ejected by success rate, in the replay event format.
	ev := frames[3]["events"].([]any)[0].(map[string]any)
	if ev["at_ms"] != 40000.0 || ev["host"] != "h5" || ev["event"] != "eject" || ev["detector"] != "success_rate" {
		t.Fatalf("40 s event %v", ev)
	}
	un := frames[6]["events"].([]any)[0].(map[string]any)
	if _, has := un["detector"]; has || un["event"] != "uneject" || un["at_ms"] != 70000.0 {
		t.Fatalf("70 s event %v", un)
	}
	if summary["ejections"] != 4.0 {
		t.Errorf("summary ejections %v", summary["ejections"])
	}
}

func TestRunFormatsAndList(t *testing.T) {
	t.Parallel()
	code, out, _ := runCLI("-scenario", "list")
	if code != 0 || !strings.Contains(out, "search-cache") {
		t.Fatalf("list: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI("-scenario", "search-cache", "-format", "csv", "-set", "duration=30s")
	if lines := strings.Count(out, "\n"); code != 0 || lines != 1+3*6 || !strings.HasPrefix(out, "t_ms,host,") {
		t.Fatalf("csv: exit %d, %d lines", code, lines)
	}
	code, out, _ = runCLI("-scenario", "search-cache", "-format", "text", "-set", "max_ejection_percent=34", "-set", "duration=80s")
	if code != 0 || !strings.Contains(out, "40 s: h5 success rate 66.7%") || !strings.Contains(out, "70 s: h5 returns to service after 30 s out") {
		t.Fatalf("text: exit %d\n%s", code, out)
	}
	// Same seed, same bytes.
	_, a, _ := runCLI("-scenario", "search-cache", "-seed", "9", "-set", "duration=60s")
	_, b, _ := runCLI("-scenario", "search-cache", "-seed", "9", "-set", "duration=60s")
	if a != b {
		t.Fatal("same seed, different output")
	}
}

func TestRunBadInput(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args []string
		want []string // substrings of stderr
	}{
		{[]string{"-scenario", "nope"}, []string{`unknown scenario "nope"`, "search-cache"}},
		{[]string{}, []string{"-scenario is required"}},
		{[]string{"-scenario", "search-cache", "-set", "hosts=500"}, []string{"hosts", "500", "1–200"}},
		{[]string{"-scenario", "search-cache", "-set", "fault_rate=1.5"}, []string{"fault_rate", "0–1"}},
		{[]string{"-scenario", "search-cache", "-set", "lb=fastest"}, []string{"lb", "round_robin|least_request|random"}},
		{[]string{"-scenario", "search-cache", "-set", "max_ejection_percent=101"}, []string{"max_ejection_percent", "0–100"}},
		{[]string{"-scenario", "search-cache", "-set", "interval=0s"}, []string{"interval"}},
		{[]string{"-scenario", "search-cache", "-set", "bogus=1"}, []string{"bogus", "unknown"}},
		// Every bad setting is named, knobs and fields alike.
		{[]string{"-scenario", "search-cache", "-set", "hosts=500", "-set", "max_ejection_percent=101"},
			[]string{"hosts: 500 is out of range (allowed 1–200 hosts)", "max_ejection_percent: 101 is out of range (allowed 0–100)"}},
		{[]string{"-scenario", "search-cache", "-set", "hosts"}, []string{"field=value"}},
		{[]string{"-scenario", "search-cache", "-format", "xml"}, []string{"xml"}},
	}
	for _, tc := range cases {
		code, _, errs := runCLI(tc.args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", tc.args, code, errs)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(errs, w) {
				t.Errorf("%v: message %q does not mention %q", tc.args, errs, w)
			}
		}
	}
}

// -set takes a setting by its name or by the Envoy field it stands for,
// as lessons and the lab do (settings.Apply).
func TestRunSetsByAlias(t *testing.T) {
	t.Parallel()
	_, a, _ := runCLI("-scenario", "search-cache", "-format", "text", "-set", "duration=80s", "-set", "panic_threshold=0", "-set", "retries=1")
	code, b, errs := runCLI("-scenario", "search-cache", "-format", "text", "-set", "duration=80s", "-set", "healthy_panic_threshold=0", "-set", "num_retries=1")
	if code != 0 || a != b {
		t.Fatalf("exit %d (%s); by alias:\n%s\nby name:\n%s", code, errs, b, a)
	}
}

// TestRunMesh: -set clients=20 runs the mesh and prints each client and
// the fleet; 20 proxies sharing search-cache's 600 req/s over six hosts
// send each host ~50 requests an interval, under
// success_rate_request_volume 100, so no client's success rate runs.
func TestRunMesh(t *testing.T) {
	t.Parallel()
	code, out, errs := runCLI("-scenario", "search-cache", "-set", "clients=20", "-format", "text")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"mesh: 20 clients", "fleet: ", "  client 19:", "   30.0 req/s", "SR skipped: 0/5 hosts with volume", "| mesh of 20: "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if strings.Contains(out, "SR thr") {
		t.Error("a client's success rate ran on ~50 requests per host")
	}
	code, out, _ = runCLI("-scenario", "search-cache", "-set", "clients=20", "-set", "duration=30s")
	if code != 0 || !strings.Contains(out, `"mesh":{"clients":20,"client_skew":1,"fleet":`) || !strings.Contains(out, `"ejected_by":[`) {
		t.Errorf("JSON output (exit %d) lacks the mesh: %.300s", code, out)
	}
	code, _, errs = runCLI("-scenario", "search-cache", "-set", "clients=101")
	if code != 2 || !strings.Contains(errs, "clients: 101 is out of range (allowed 1–100 clients)") {
		t.Errorf("clients=101: exit %d, %q", code, errs)
	}
}
