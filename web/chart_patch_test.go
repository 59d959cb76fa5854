package web

import (
	"encoding/json"
	"reflect"
	"testing"

	"outlierlab/web/chart"
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
			var patch map[string]json.RawMessage
			if err := json.Unmarshal(raw, &patch); err != nil {
				t.Fatalf("%s %d→%d: the patch is not JSON: %v", name, step[0], step[1], err)
			}
			for id, want := range to {
				got := from[id]
				if p, ok := patch[id]; ok {
					got = applyPatchJSON(t, got, p)
				}
				if !sameJSON(t, got, want) {
					t.Errorf("%s %d→%d %s: the patched option differs from the option at %d", name, step[0], step[1], id, step[1])
				}
			}
			if step[1] == step[0]+1 && step[0] > 0 {
				whole, _ := json.Marshal(to)
				if 4*len(raw) > len(whole) {
					t.Errorf("%s %d→%d: patch %d B for options of %d B", name, step[0], step[1], len(raw), len(whole))
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

func sameJSON(t *testing.T, a, b json.RawMessage) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(va, vb)
}
