package tabstate

import (
	"context"
	"strings"
	"testing"

	"outlierlab/engine"
	"outlierlab/engine/explain"
	"outlierlab/engine/scenario"
	"outlierlab/web/templates"
)

// The wording is the engine's (engine/explain has its tests and golden
// logs); the log adds a tone and a badge to each sentence, and the
// template sets its fields and quantities apart.

// Every outcome has a tone web/static/css colours.
func TestDecisionTones(t *testing.T) {
	for o := explain.Ejected; o <= explain.NoOutlier; o++ {
		switch Tones[o] {
		case "eject", "overflow", "detect", "return", "skip", "info":
		default:
			t.Errorf("%s has tone %q", o.Badge(), Tones[o])
		}
	}
}

// The log of a run is the explainer's sentences of each interval, in
// order, with the time the page prints.
func TestDecisionsAreTheExplainers(t *testing.T) {
	p, _ := scenario.Lookup("search-cache")
	cfg := p.Outlier
	cfg.MaxEjectionPercent = 34
	res, err := scenario.Run(p.Scenario(), cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i := range res.Frames {
		iv := res.Frames[i].Interval()
		want := explain.Decisions(&iv, cfg)
		got := DecisionsOf(&res.Frames[i], cfg)
		if len(got) != len(want) {
			t.Fatalf("frame %d: %d entries, want %d", i, len(got), len(want))
		}
		for j := range got {
			if got[j].String() != want[j].String() || got[j].Badge != want[j].Outcome.Badge() || got[j].Tone != Tones[want[j].Outcome] {
				t.Errorf("frame %d entry %d: %s [%s %s], want %s", i, j, got[j], got[j].Tone, got[j].Badge, want[j])
			}
			seen[got[j].Tone] = true
		}
	}
	if !seen["eject"] || !seen["return"] || !seen["info"] {
		t.Errorf("the run's log lacks an ejection, a return or a pass: %v", seen)
	}
}

// The page sets fields as code and quantities (a number with a unit) in
// bold; counts and words stay plain, escaped.
func TestDecisionHTML(t *testing.T) {
	ev := engine.Event{AtMs: 40000, Host: "h5", Kind: engine.EventEject, Detector: engine.Consecutive5xx,
		Cap: engine.CapAdmits(0, 6, 34, false), Enforcing: 100, Backoff: 1, DurationMs: 30000}
	f := scenario.Frame{TMs: 40000, Events: []engine.Event{ev}}
	var b strings.Builder
	if err := templates.LogEntries(DecisionsOf(&f, engine.DefaultConfig())).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, want := range []string{
		`<time>40 s</time>`, `<span class="badge">EJECTED</span>`,
		`h5 returned 5 errors in a row (<code>consecutive_5xx</code>)`,
		`cap (0+1)/6 = <strong>16.7%</strong> ≤ <strong>34%</strong> (<code>max_ejection_percent</code>)`,
		`ejected for <strong>30 s</strong> (<code>base_ejection_time</code> <strong>30 s</strong> × 1).`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the entry lacks %s:\n%s", want, html)
		}
	}
}

// Times round to the tenth past 10 s (a lesson quoting an event at
// 20.1 s finds 20.1 s in the log), keeping more digits only where the
// tenth would read as a whole second, a sweep, the time is not.
func TestFmtMs(t *testing.T) {
	for _, tc := range []struct {
		ms   int64
		want string
	}{
		{0, "0 s"},
		{40000, "40 s"},
		{1500, "1.5 s"},
		{250, "0.25 s"},
		{23417, "23.4 s"},
		{20090, "20.1 s"}, // was cut to 20.0 s
		{20150, "20.2 s"},
		{300000, "300 s"},
		{123050, "123.1 s"},
		{239960, "239.96 s"}, // not the 240 s sweep
		{238990, "238.99 s"},
		{239999, "239.999 s"},
	} {
		if got := FormatMs(tc.ms); got != tc.want {
			t.Errorf("fmtMs(%d) = %q, want %q", tc.ms, got, tc.want)
		}
	}
}
