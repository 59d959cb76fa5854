package chart_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"outlierlab/web/chart"
	"outlierlab/web/internal/webtest"
	"outlierlab/web/tabstate"
)

// Charts that say only what is true (issue 38).

// markOption is what these tests read of an option: its legend and the
// names and labels of its markers.
type markOption struct {
	Legend struct {
		Type string   `json:"type"`
		Data []string `json:"data"`
	} `json:"legend"`
	Series []struct {
		Name     string `json:"name"`
		MarkLine *struct {
			Data []struct {
				Name  string `json:"name"`
				XAxis string `json:"xAxis"`
			} `json:"data"`
		} `json:"markLine"`
		MarkArea *struct {
			Data [][]struct {
				Name string `json:"name"`
			} `json:"data"`
		} `json:"markArea"`
	} `json:"series"`
}

func marksOf(t *testing.T, r *tabstate.Run, id string) markOption {
	t.Helper()
	var o markOption
	if err := json.Unmarshal(chart.Options(r, len(r.Frames))[id], &o); err != nil {
		t.Fatal(err)
	}
	return o
}

// An ejection decided between two ticks (a consecutive-error streak) is
// drawn at the tick that closes its interval, and its line says so and
// gives the moment; one decided at a tick says nothing more.
func TestEjectionMarksSayWhen(t *testing.T) {
	var names []string
	for _, s := range marksOf(t, webtest.BuildRun(t, tabstate.Inputs{Preset: "dead-host"}), chart.ChartLanes).Series {
		if s.Name == chart.EventsSeries && s.MarkLine != nil {
			for _, l := range s.MarkLine.Data {
				if strings.HasPrefix(l.Name, "ejected: ") {
					names = append(names, l.Name+"@"+l.XAxis)
				}
			}
		}
	}
	if len(names) == 0 || !strings.HasPrefix(names[0], "ejected: h3 at 20.") || !strings.HasSuffix(names[0], " (marked at the 30 s tick that closes the interval)@30 s") {
		t.Errorf("dead-host's first ejection line: %v", names)
	}
	for _, s := range marksOf(t, webtest.BuildRun(t, tabstate.Inputs{Preset: "search-cache"}.With(map[string]float64{"max_ejection_percent": 34})), chart.ChartLanes).Series {
		if s.Name == chart.EventsSeries && s.MarkLine != nil && len(s.MarkLine.Data) > 0 && strings.HasPrefix(s.MarkLine.Data[0].Name, "ejected") {
			if got := s.MarkLine.Data[0].Name + "@" + s.MarkLine.Data[0].XAxis; got != "ejected: h5@40 s" {
				t.Errorf("success rate's ejection at the 40 s tick: %q", got)
			}
		}
	}
}

// The fault's shading says what the fault is in the run shown, so a
// changed fault is named as it is now, never as the preset told it.
func TestFaultLabelFollowsTheFault(t *testing.T) {
	label := func(in tabstate.Inputs) string {
		for _, s := range marksOf(t, webtest.BuildRun(t, in), chart.ChartSuccessRate).Series {
			if s.MarkArea != nil && len(s.MarkArea.Data) > 0 {
				return s.MarkArea.Data[0][0].Name
			}
		}
		return ""
	}
	kind := tabstate.LookupControl("fault_kind")
	refused, _ := kind.Number("connect_failure")
	for _, c := range []struct {
		in   tabstate.Inputs
		want string
	}{
		{tabstate.Inputs{Preset: "search-cache"}, "fault: h5: 503, 1 in 3 from 30 s"},
		{tabstate.Inputs{Preset: "search-cache"}.With(map[string]float64{"fault_kind": refused, "fault_rate": 0.5}), "fault: h5: connect_failure, 1 in 2 from 30 s"},
		{tabstate.Inputs{Preset: "search-cache"}.With(map[string]float64{"hosts": 8, "fault_rate": 1}), "fault: h7: 503, every request from 30 s"},
		{tabstate.Inputs{Preset: "shared-dependency"}, "fault: every host: 503, 33.3% at random from 30 s"},
	} {
		if got := label(c.in); got != c.want {
			t.Errorf("%s: fault label %q, want %q", c.in.Key(), got, c.want)
		}
	}
}

// A legend entry that is not a host (the mean, the threshold, the
// counters, the markers) is one a lesson may tell the learner to watch:
// it is never on a legend's second page. Either the legend is sent
// "plain" (js/fit.js never pages it), or those entries come before the
// hosts, whose fifty names are what pages.
func TestNamedLegendEntriesNeverPaged(t *testing.T) {
	r := webtest.BuildRun(t, tabstate.Inputs{Preset: "search-cache"}.With(map[string]float64{"hosts": 50}))
	opts := chart.Options(r, len(r.Frames))
	for _, c := range chart.List {
		var o markOption
		if err := json.Unmarshal(opts[c.ID], &o); err != nil {
			t.Fatal(err)
		}
		if o.Legend.Type == "plain" {
			continue
		}
		entries := o.Legend.Data
		if entries == nil { // ECharts takes the series' names
			for _, s := range o.Series {
				entries = append(entries, s.Name)
			}
		}
		firstHost := slices.IndexFunc(entries, func(e string) bool { return slices.Contains(r.Hosts, e) })
		for i, e := range entries {
			if firstHost >= 0 && i > firstHost && !slices.Contains(r.Hosts, e) {
				t.Errorf("%s: legend entry %q comes after the hosts (%v…): a paged legend hides it", c.ID, e, entries[:min(len(entries), 4)])
				break
			}
		}
	}
	if o := marksOf(t, r, chart.ChartCounters); o.Legend.Type != "plain" {
		t.Errorf("the counters' legend is %q: the gRPC lesson asks for its active gauge", o.Legend.Type)
	}
}
