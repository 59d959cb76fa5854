package chart_test

import (
	"encoding/json"
	"testing"

	"outlierlab/web/chart"
	"outlierlab/web/tabstate"
)

// compareOption is the strip's option as the page gets it.
type compareOption struct {
	Grid  []map[string]any `json:"grid"`
	XAxis []struct {
		Data      []string `json:"data"`
		GridIndex int      `json:"gridIndex"`
	} `json:"xAxis"`
	YAxis []struct {
		Data      []string `json:"data"`
		GridIndex int      `json:"gridIndex"`
	} `json:"yAxis"`
	Title []struct {
		Text string `json:"text"`
	} `json:"title"`
	Series []struct {
		Name       string            `json:"name"`
		Type       string            `json:"type"`
		XAxisIndex int               `json:"xAxisIndex"`
		YAxisIndex int               `json:"yAxisIndex"`
		Data       []json.RawMessage `json:"data"`
	} `json:"series"`
}

func compareOf(t *testing.T, r *tabstate.Run, cursor int) compareOption {
	t.Helper()
	var o compareOption
	if err := json.Unmarshal(chart.Options(r, cursor)[chart.ChartCompare], &o); err != nil {
		t.Fatal(err)
	}
	// Every chart also carries the story's markers (web/chart/chartmarks.go); the
	// strip's own series are the rest.
	own := o.Series[:0]
	for _, s := range o.Series {
		if s.Name != chart.EventsSeries {
			own = append(own, s)
		}
	}
	o.Series = own
	return o
}

// cells are a heatmap series' cells as {frame, host}.
func cells(t *testing.T, data []json.RawMessage) [][2]int {
	t.Helper()
	var out [][2]int
	for _, d := range data {
		var c struct {
			Value []int `json:"value"`
		}
		if err := json.Unmarshal(d, &c); err != nil || len(c.Value) != 3 {
			t.Fatalf("cell %s: %v", d, err)
		}
		out = append(out, [2]int{c.Value[0], c.Value[1]})
	}
	return out
}

// search-cache at the default 10% cap: Envoy refuses h5 at every sweep
// from 40 s ((0+1)/6 > 10%), gRPC ejects it at 40 s (0/6 < 10%), back
// at 70 s (on a real clock the 70 s sweep is strictly after 40 s + 30 s). The strip shows both, Envoy above, from
// whichever dialect the visitor's run is in, up to the cursor only.
func TestCompareStrip(t *testing.T) {
	for _, dialect := range []string{"envoy", "grpc"} {
		t.Run(dialect, func(t *testing.T) {
			in := tabstate.Inputs{Preset: "search-cache"}
			if dialect == "grpc" {
				in.Base = map[string]string{"dialect": "grpc"}
			}
			r, err := tabstate.BuildRun(in)
			if err != nil {
				t.Fatal(err)
			}
			o := compareOf(t, r, 9) // up to 90 s
			if len(o.Grid) != 2 || len(o.XAxis) != 2 || len(o.YAxis) != 2 || len(o.Title) != 2 ||
				o.Title[0].Text != "Envoy (outlier_detection_impl.cc)" || o.Title[1].Text != "gRPC (gRFC A50, grpc-go)" {
				t.Fatalf("layout: %d grids, %d x axes, %d y axes, titles %+v", len(o.Grid), len(o.XAxis), len(o.YAxis), o.Title)
			}
			for i := range 2 {
				if o.XAxis[i].GridIndex != i || o.YAxis[i].GridIndex != i || len(o.XAxis[i].Data) != 30 || len(o.YAxis[i].Data) != 6 {
					t.Errorf("axes %d: x %d ticks on grid %d, y %v on grid %d", i, len(o.XAxis[i].Data), o.XAxis[i].GridIndex, o.YAxis[i].Data, o.YAxis[i].GridIndex)
				}
			}
			if len(o.Series) != 4 {
				t.Fatalf("%d series, want ejected and overflow for each dialect", len(o.Series))
			}
			for i, want := range []struct {
				name, typ string
				axis      int
			}{{"ejected", "heatmap", 0}, {"ejected", "heatmap", 1}, {"overflow", "scatter", 0}, {"overflow", "scatter", 1}} {
				if s := o.Series[i]; s.Name != want.name || s.Type != want.typ || s.XAxisIndex != want.axis || s.YAxisIndex != want.axis {
					t.Errorf("series %d: %s %s on axes %d/%d, want %s %s on %d", i, s.Name, s.Type, s.XAxisIndex, s.YAxisIndex, want.name, want.typ, want.axis)
				}
			}
			if n := len(o.Series[0].Data); n != 0 {
				t.Errorf("Envoy ejects %d cells at the default cap, want none", n)
			}
			var envoyOverflow [][2]int
			for _, d := range o.Series[2].Data {
				var m [2]int
				json.Unmarshal(d, &m)
				envoyOverflow = append(envoyOverflow, m)
			}
			// Refused at 40 … 90 s: frames 3 to 8, host 5.
			if len(envoyOverflow) != 6 || envoyOverflow[0] != [2]int{3, 5} || envoyOverflow[5] != [2]int{8, 5} {
				t.Errorf("Envoy's overflow marks up to 90 s: %v", envoyOverflow)
			}
			// gRPC: out after the 40, 50 and 60 s sweeps, back at 70 s, out
			// again at 80 and 90 s.
			want := [][2]int{{3, 5}, {4, 5}, {5, 5}, {7, 5}, {8, 5}}
			got := cells(t, o.Series[1].Data)
			if len(got) != len(want) {
				t.Fatalf("gRPC's cells up to 90 s: %v, want %v", got, want)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("gRPC's cells up to 90 s: %v, want %v", got, want)
					break
				}
			}
			if n := len(o.Series[3].Data); n != 0 {
				t.Errorf("gRPC refuses %d times, want none", n)
			}
			// At the cursor 3 (30 s) nothing has happened in either.
			early := compareOf(t, r, 3)
			for i, s := range early.Series {
				if len(s.Data) != 0 {
					t.Errorf("series %d shows %d marks at 30 s", i, len(s.Data))
				}
			}
		})
	}
}

// The other dialect's run is made once per run: later redraws read it
// from the run (Run.Twin), not from a cache of its own.
func TestCompareStripCached(t *testing.T) {
	r, err := tabstate.BuildRun(tabstate.Inputs{Preset: "dead-host", Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	a, b := chart.TwinOf(r), chart.TwinOf(r)
	if a != b {
		t.Error("the twin run was made twice for the same inputs")
	}
	// dead-host under gRPC: nothing ejects h3 before the 30 s sweep
	// (no consecutive detectors), where Envoy's consecutive_5xx has it out
	// at 20.1 s, so after the 30 s sweep both show it ejected.
	if len(a.Ejected) < 3 || a.Ejected[1][3] || !a.Ejected[2][3] {
		t.Errorf("dead-host under gRPC: h3 after 20 s and 30 s: %v", a.Ejected[1:3])
	}
	if got, want := chart.CompareHeight(r), 2*chart.CompareRow*10+2*chart.CompareTitle+chart.CompareGap+chart.CompareAxis; got != want {
		t.Errorf("strip height for 10 hosts: %d, want %d", got, want)
	}
	big, err := tabstate.BuildRun(tabstate.Inputs{Preset: "search-cache", Values: map[string]float64{"hosts": 50}})
	if err != nil {
		t.Fatal(err)
	}
	if got := chart.CompareHeight(big); got > chart.CompareMax {
		t.Errorf("strip height for 50 hosts: %d, more than %d", got, chart.CompareMax)
	}
}

// Under gRPC the lab takes a block Envoy refuses (max_ejection_time below
// base_ejection_time: grpc-go caps at max(base, max)); Envoy would not load
// that cluster, so the strip has no Envoy run and its lane says why.
func TestCompareStripEnvoyRefuses(t *testing.T) {
	r, err := tabstate.BuildRun(tabstate.Inputs{Preset: "search-cache", Values: map[string]float64{
		"dialect": 1, "base_ejection_time": 30, "max_ejection_time": 10}})
	if err != nil {
		t.Fatalf("gRPC takes max_ejection_time below base_ejection_time: %v", err)
	}
	o := compareOf(t, r, len(r.Frames)-1)
	if len(o.Title) != 2 || o.Title[0].Text != "Envoy refuses this cluster, so no run: max_ejection_time: 10s is below base_ejection_time 30s (allowed ≥ base_ejection_time)" {
		t.Errorf("titles %+v", o.Title)
	}
	if n := len(o.Series[0].Data) + len(o.Series[2].Data); n != 0 {
		t.Errorf("the Envoy lane shows %d marks of a run Envoy would not make", n)
	}
	if len(o.Series[1].Data) == 0 {
		t.Error("the gRPC lane is empty: search-cache's h5 is ejected under gRPC")
	}
}
