package scenario

import (
	"strings"
	"testing"
	"time"
)

// Knobs: every knob reads back what it was set to, and errors name the knob
// and its range.
func TestKnobs(t *testing.T) {
	sc := SearchCache.Scenario()
	set := map[string]string{
		"hosts": "10", "rps": "1200", "duration": "120s", "panic_threshold": "30", "lb": "least_request",
		"retries": "2", "retry_on": "gateway-error,reset", "retry_budget_percent": "25", "min_retry_concurrency": "5",
		"max_retries": "7", "previous_hosts": "true", "per_try_timeout": "250ms", "route_timeout": "5s",
		"latency": "20ms", "capacity_rps": "300", "fault_rate": "0.5", "fault_kind": "timeout",
		"fault_pattern": "random", "fault_start": "20s", "fault_host": "7", "fault_duration": "40s", "hc_shares_fault": "true",
		"active_hc": "true", "hc_interval": "2s", "hc_unhealthy_threshold": "2", "hc_healthy_threshold": "3",
		"inject": "h2@30s,h9@90s", "dialect": "grpc", "clients": "4", "client_skew": "3", "failover_hosts": "3",
	}
	if len(set) != len(Knobs()) {
		t.Fatalf("test sets %d knobs, there are %d", len(set), len(Knobs()))
	}
	got, err := ApplyKnobs(sc, set)
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range set {
		if g := KnobValue(got, name); g != v {
			t.Errorf("%s: set %q, reads %q", name, v, g)
		}
	}
	if f := got.Cluster.Faults[0]; f.From != 20*time.Second || f.Until != 60*time.Second {
		t.Errorf("fault window [%v, %v)", f.From, f.Until)
	}
	if KnobValue(sc, "hosts") != "6" || sc.Cluster.Faults[0].Share != 1.0/3 {
		t.Error("ApplyKnobs changed its input")
	}
	if _, err := Run(got, SearchCache.Outlier, 1); err != nil {
		t.Fatal(err)
	}
	bad := []struct{ name, value, want string }{
		{"hosts", "0", "hosts: 0 is out of range (allowed 1–200 hosts)"},
		{"hosts", "x", "hosts: x is not a whole number (allowed 1–200 hosts)"},
		{"fault_rate", "1.2", "fault_rate: 1.2 is out of range (allowed 0–1)"},
		{"duration", "2h", "duration: 2h is out of range (allowed 10s–3600s)"},
		{"lb", "ring_hash", "lb: ring_hash is not allowed (allowed round_robin|least_request|random)"},
		{"retry_on", "5xx,teapot", "retry_on: 5xx,teapot is not allowed (allowed a comma-separated list of 5xx,gateway-error,connect-failure,reset)"},
		{"active_hc", "yes", "active_hc: yes is not a boolean (allowed true or false)"},
		{"colour", "red", "colour: unknown scenario knob"},
		{"clients", "101", "clients: 101 is out of range (allowed 1–100 clients)"},
		{"clients", "0", "clients: 0 is out of range (allowed 1–100 clients)"},
		{"client_skew", "0.5", "client_skew: 0.5 is out of range (allowed 1–20 ×)"},
		{"fault_host", "6", "fault_host: 6 is out of range (allowed 0–5: the cluster's hosts h0…h5)"},
		{"fault_host", "-1", "fault_host: -1 is out of range (allowed 0–199 host)"},
		{"fault_host", "1e9", "fault_host: 1e9 is not a whole number (allowed 0–199 host)"},
		{"fault_host", "NaN", "fault_host: NaN is not a whole number (allowed 0–199 host)"},
		{"fault_host", "", `fault_host: "" is not a whole number (allowed 0–199 host)`},
		{"fault_host", "2.5", "fault_host: 2.5 is not a whole number (allowed 0–199 host)"},
	}
	for _, b := range bad {
		_, err := ApplyKnobs(sc, map[string]string{b.name: b.value})
		if err == nil || !strings.HasPrefix(err.Error(), b.want) {
			t.Errorf("%s=%s: error %v, want %q", b.name, b.value, err, b.want)
		}
	}
}

// Every bad value is reported at once, each naming its knob; nothing is
// set unless all are good.
func TestKnobsReportEveryBadValue(t *testing.T) {
	_, err := ApplyKnobs(SearchCache.Scenario(), map[string]string{"hosts": "500", "rps": "0", "lb": "random", "colour": "red"})
	if err == nil {
		t.Fatal("no error")
	}
	// Sorted by knob name, one line each.
	got := err.Error()
	if !strings.HasPrefix(got, "colour: unknown scenario knob") ||
		!strings.HasSuffix(got, "\nhosts: 500 is out of range (allowed 1–200 hosts)\nrps: 0 is out of range (allowed 1–100000 req/s)") {
		t.Errorf("error:\n%s", got)
	}
}

// A list knob's menu holds values the knob reads back as written, and an
// enum's choices likewise: a menu never shows a value the run does not use.
func TestKnobMenusReadBack(t *testing.T) {
	for _, k := range Knobs() {
		values := k.Menu
		if len(values) == 0 {
			values = k.Choices
		}
		for _, v := range values {
			sc, err := ApplyKnobs(SearchCache.Scenario(), map[string]string{k.Name: v})
			if err != nil {
				t.Errorf("%s=%s: %v", k.Name, v, err)
			} else if back := KnobValue(sc, k.Name); back != v {
				t.Errorf("%s=%s reads back %q", k.Name, v, back)
			}
		}
	}
}

// fault_start moves a fault of several windows as a whole: flapping's
// twenty windows keep their 30 s rhythm (they used to collapse onto one).
func TestFaultStartMovesEveryWindow(t *testing.T) {
	sc, err := ApplyKnobs(Flapping.Scenario(), map[string]string{"fault_start": "45s"})
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range sc.Cluster.Faults {
		from := time.Duration(45+30*i) * time.Second
		if f.From != from || f.Until != from+20*time.Second {
			t.Fatalf("window %d: [%v, %v), want [%v, %v)", i, f.From, f.Until, from, from+20*time.Second)
		}
	}
	if got := KnobValue(sc, "fault_start"); got != "45s" {
		t.Errorf("fault_start reads %q", got)
	}
}

// fault_host puts the primary fault on one host, checked against the
// cluster's size as the same call leaves it (hosts is set first, whatever
// the order); a preset's "last host" reads as its number, and a fault of
// several hosts names none.
func TestFaultHost(t *testing.T) {
	if got := KnobValue(SearchCache.Scenario(), "fault_host"); got != "5" {
		t.Errorf("search-cache's fault_host reads %q, want 5 (its last host)", got)
	}
	if got := KnobValue(BadDeploy.Scenario(), "fault_host"); got != "" {
		t.Errorf("bad-deploy's fault_host reads %q: half the fleet has no one host", got)
	}
	for _, tc := range []struct {
		knobs map[string]string
		want  string // the error's start, or "" for none
	}{
		{map[string]string{"hosts": "3", "fault_host": "4"}, "fault_host: 4 is out of range (allowed 0–2: the cluster's hosts h0…h2)"},
		{map[string]string{"hosts": "10", "fault_host": "9"}, ""},
		{map[string]string{"fault_host": "0", "inject": "h0@60s"}, ""},
	} {
		_, err := ApplyKnobs(SearchCache.Scenario(), tc.knobs)
		if (err == nil) != (tc.want == "") || (err != nil && !strings.HasPrefix(err.Error(), tc.want)) {
			t.Errorf("%v: error %v, want %q", tc.knobs, err, tc.want)
		}
	}
	sc, err := ApplyKnobs(SearchCache.Scenario(), map[string]string{"fault_host": "2", "fault_start": "60s"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(sc, SearchCache.Outlier, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range res.Frames {
		for _, h := range f.Hosts {
			failing := h.Requests > h.Successes
			if want := h.Name == "h2" && f.TMs > 60000; failing != want {
				t.Errorf("%d ms %s: %d of %d failed; want failures %v (the fault on h2 from 60 s)", f.TMs, h.Name, h.Requests-h.Successes, h.Requests, want)
			}
		}
	}
}
