package chart_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"outlierlab/web/chart"
	"outlierlab/web/internal/webtest"
	"outlierlab/web/tabstate"
)

// A patch applied to the options at one cursor gives the options at the
// other, for every preset and for steps of one frame, of several (a fast
// speed skips frames) and from nothing drawn yet; and a played frame's
// patch is a small part of the options it stands for.
func TestChartPatchRebuildsOptions(t *testing.T) {
	for _, name := range tabstate.PresetNames() {
		run, err := tabstate.BuildRun(tabstate.Inputs{Preset: name})
		if err != nil {
			t.Fatal(err)
		}
		n := len(run.Frames)
		for _, step := range [][2]int{{0, 1}, {0, n}, {3, 4}, {n / 2, n/2 + 1}, {2, n - 1}, {n - 1, n}} {
			from, to := chart.Options(run, step[0]), chart.Options(run, step[1])
			raw, err := chart.ChartPatch(from, to)
			if err != nil {
				t.Fatal(err)
			}
			checkChartPatch(t, fmt.Sprintf("%s %d→%d", name, step[0], step[1]), from, to, raw)
			if step[1] == step[0]+1 && step[0] > 0 {
				whole, _ := json.Marshal(to)
				if 4*len(raw) > len(whole) {
					t.Errorf("%s %d→%d: patch %d B for options of %d B", name, step[0], step[1], len(raw), len(whole))
				}
			}
		}
	}
}

// A played frame's patch is built from what the frames add, not from the
// two whole options (web/chart/chart_step.go); applied to the options at the old
// cursor it must give the options a full rebuild makes at the new one, for
// every preset, under both dialects and with injected faults, at every
// step of one frame and at jumps of several (a fast speed or a slow
// connection skips frames), from nothing drawn yet to the end; and for a
// mesh of 20 clients, where the mesh's two charts have more than one
// client's data (one preset: their points come from the same frames).
func TestStepPatchEqualsRebuild(t *testing.T) {
	for _, name := range tabstate.PresetNames() {
		ins := []tabstate.Inputs{
			{Preset: name},
			{Preset: name, Base: map[string]string{"dialect": "grpc"}},
			{Preset: name, Inject: "h1@60s,h2@90s", Base: map[string]string{"max_ejection_percent": "100"}},
		}
		if name == "search-cache" {
			ins = append(ins, tabstate.Inputs{Preset: name, Base: map[string]string{"clients": "20", "rps": "1000",
				"enforcing_failure_percentage": "100", "failure_percentage_request_volume": "50"}})
		}
		if testing.Short() {
			// make check: one of the three variants a preset, in turn (its
			// own settings, gRPC, injected faults), and search-cache's
			// mesh; make test checks them all.
			i := slices.Index(tabstate.PresetNames(), name) % 3
			ins = append(ins[i:i+1:i+1], ins[3:]...)
		}
		for _, in := range ins {
			run, err := tabstate.BuildRun(in)
			if err != nil {
				t.Fatal(err)
			}
			n := len(run.Frames)
			options := make([]map[string]json.RawMessage, n+1)
			for c := range options {
				options[c] = chart.Options(run, c)
			}
			for from := 0; from <= n; from++ {
				for _, to := range []int{from, from + 1, from + 4, n} {
					if to > n {
						continue
					}
					raw, err := chart.StepPatch(run, from, to)
					if err != nil {
						t.Fatal(err)
					}
					step := fmt.Sprintf("%s %d→%d", in.Key(), from, to)
					if patch := checkChartPatch(t, step, options[from], options[to], raw); to == from && len(patch) > 0 {
						t.Errorf("%s: a step of no frame patches %s", step, raw)
					}
				}
			}
		}
	}
}

// The patch's own cases: a value set, keys added and gone, an array grown
// and changed in place, an array that shrank sent whole, nothing for equal
// values.
func TestValuePatch(t *testing.T) {
	for _, tt := range []struct{ a, b, want string }{
		{`{"x":1}`, `{"x":1}`, ``},
		{`{"x":1}`, `{"x":2}`, `{"o":{"x":{"=":2}}}`},
		{`{"x":1,"y":2}`, `{"x":1,"z":3}`, `{"d":["y"],"o":{"z":{"=":3}}}`},
		{`{"d":[1,2]}`, `{"d":[1,2,3,4]}`, `{"o":{"d":{"p":[3,4]}}}`},
		{`{"d":[1,2,3]}`, `{"d":[1,2]}`, `{"o":{"d":{"=":[1,2]}}}`},
		{`[{"n":"a","d":[1]},{"n":"b","d":[]}]`, `[{"n":"a","d":[1,5]},{"n":"b","d":[]}]`, `{"a":{"0":{"o":{"d":{"p":[5]}}}}}`},
		{`[1,2,3,4]`, `[5,6,7,8]`, `{"=":[5,6,7,8]}`},
		{`"1.50"`, `"1.5"`, `{"=":"1.5"}`},
		{`1.50`, `1.5`, `{"=":1.5}`},
		{`[1]`, `{"x":1}`, `{"=":{"x":1}}`},
		{`{"s":"a\"}],{","n":[1]}`, `{"s":"a\"}],{","n":[1,2]}`, `{"o":{"n":{"p":[2]}}}`},
		{`{"s":"x","t":[{"u":"]"}]}`, `{"t":[{"u":"]"},{"u":"["}],"s":"y"}`, `{"o":{"t":{"p":[{"u":"["}]},"s":{"=":"y"}}}`},
		{`[[1,2],[3]]`, `[[1,2],[3,4],[]]`, `{"a":{"1":{"p":[4]}},"p":[[]]}`},
		{`{"a":null,"b":true}`, `{"a":false,"b":true}`, `{"o":{"a":{"=":false}}}`},
	} {
		p, changed, err := chart.ValuePatch([]byte(tt.a), []byte(tt.b))
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if changed {
			if !json.Valid(p) {
				t.Errorf("%s → %s: the patch %s is not JSON", tt.a, tt.b, p)
			}
			got = string(p)
		}
		if got != tt.want {
			t.Errorf("%s → %s: patch %s, want %s", tt.a, tt.b, got, tt.want)
		}
	}
}

// checkChartPatch checks that patch raw (by chart id) applied to the
// options from gives the options to, and returns the patch.
func checkChartPatch(t *testing.T, step string, from, to map[string]json.RawMessage, raw []byte) map[string]json.RawMessage {
	t.Helper()
	var patch map[string]json.RawMessage
	if err := json.Unmarshal(raw, &patch); err != nil {
		t.Fatalf("%s: the patch is not JSON: %v\n%s", step, err, raw)
	}
	for id, want := range to {
		got := from[id]
		if p, ok := patch[id]; ok {
			got = webtest.ApplyPatchJSON(t, got, p)
		}
		if !webtest.SameJSON(t, got, want) {
			t.Fatalf("%s %s: the patched option differs from the rebuilt one\npatch %s\ngot  %s\nwant %s", step, id, patch[id], got, want)
		}
	}
	return patch
}
