package budget

import (
	"errors"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"outlierlab/engine/scenario"
	"outlierlab/engine/settings"
	"outlierlab/web/httperr"
)

// Work at the ceiling passes; past it, it is refused naming the field,
// what it is, the ceiling and the hint, and the refusal is counted once
// (the pages weigh their work through CheckWork and Over alone).
func TestCheckWork(t *testing.T) {
	b := New(BudgetOptions{MaxWork: 2_000_000})
	over := MetricHeavy.WithLabelValues("over_budget")
	before := testutil.ToFloat64(over)
	if err := b.CheckWork("a", 2_000_000, "two runs", "fewer hosts"); err != nil {
		t.Fatalf("at the ceiling: %v", err)
	}
	err := b.CheckWork("b", 2_100_000, "two runs", "fewer hosts")
	ob, ok := errors.AsType[*OverBudget](err)
	if !ok || ob.Field != "b" || err.Error() != "b: two runs, 2.1 M units of work (allowed up to 2.0 M per request: fewer hosts)" {
		t.Fatalf("past the ceiling: %v", err)
	}
	if got := testutil.ToFloat64(over) - before; got != 1 {
		t.Errorf("over_budget counted %v times, want 1", got)
	}
	if err := b.Over("log", "too many host-ticks"); err.Error() != "log: too many host-ticks" || testutil.ToFloat64(over)-before != 2 {
		t.Errorf("Over: %v, counted %v", err, testutil.ToFloat64(over)-before)
	}
}

// issueRun is the run of issue 34 item 3: flapping at 3000 rps over 50
// hosts, five retries on 5xx through a breaker of 100000 into hosts that
// serve 10 requests a second, least request, health checks every second.
// The first weight (rps × duration + 10 × hosts × ticks) put it at 2.1 M
// units (0.2 s); it took 12.9 CPU-s and 700 MB more.
var issueRun = map[string]string{"hosts": "50", "rps": "3000", "interval": "1s", "retries": "5", "retry_on": "5xx",
	"fault_rate": "1", "max_retries": "100000", "active_hc": "true", "hc_interval": "1s", "lb": "least_request",
	"capacity_rps": "10", "previous_hosts": "true"}

// The issue's run is refused before it runs, as a 422 of the error
// kinds' table, naming a setting; each setting the refusal suggests, at
// the value it names, makes the run fit, alone; the refusal is counted.
func TestCheckRunRefusesWithFixes(t *testing.T) {
	p, _ := scenario.Lookup("flapping")
	sc, cfg, err := settings.Apply(p, issueRun)
	if err != nil {
		t.Fatal(err)
	}
	b := New(BudgetOptions{})
	over := MetricHeavy.WithLabelValues("over_budget")
	before := testutil.ToFloat64(over)
	err = b.CheckRun(sc, cfg)
	ob, ok := errors.AsType[*OverBudget](err)
	if !ok || httperr.KindOf(err, httperr.KindInternal) != httperr.KindOverBudget || httperr.Status[httperr.KindOverBudget] != http.StatusUnprocessableEntity {
		t.Fatalf("the issue's run: %v (kind %d), want a 422 OverBudget", err, httperr.KindOf(err, httperr.KindInternal))
	}
	if got := testutil.ToFloat64(over) - before; got != 1 {
		t.Errorf("over_budget counted %v times, want 1", got)
	}
	fixes := b.Fixes(sc, cfg)
	if len(fixes) == 0 || ob.Field != settingName(fixes[0].Setting) || !strings.Contains(err.Error(), "would fit") {
		t.Fatalf("the refusal names %q (%v), fixes %v", ob.Field, err, fixes)
	}
	t.Log(err)
	for _, x := range fixes {
		if !strings.Contains(err.Error(), x.String()) {
			t.Errorf("the refusal does not say %q: %v", x, err)
		}
		fixed := maps.Clone(issueRun)
		fixed[x.Setting] = strconv.FormatFloat(x.Value, 'f', -1, 64)
		if x.Setting == "interval" || x.Setting == "hc_interval" {
			fixed[x.Setting] += "s"
		}
		fsc, fcfg, err := settings.Apply(p, fixed)
		if err != nil {
			t.Fatalf("%v: %v", x, err)
		}
		if err := b.CheckRun(fsc, fcfg); err != nil {
			t.Errorf("with %v the run still does not fit: %v", x, err)
		}
	}
	// The preset as it ships is far from the ceiling.
	if sc, cfg, _ := settings.Apply(p, nil); b.CheckRun(sc, cfg) != nil || RunWork(sc, cfg) > LightRun {
		t.Errorf("flapping as it ships: %d units", RunWork(sc, cfg))
	}
}

func settingName(s string) string {
	st, _ := settings.Lookup(s)
	return st.EnvoyName()
}
