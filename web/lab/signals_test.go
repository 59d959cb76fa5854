package lab

import (
	"encoding/json"
	"slices"
	"testing"

	"outlierlab/web/internal/webtest"
	"outlierlab/web/lessonbook"
	"outlierlab/web/tabstate"
)

// signalKeys is the sorted keys of a signals object as it goes out.
func signalKeys(t *testing.T, v any) (map[string]json.RawMessage, []string) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return m, keys
}

// A patch merges into the page's signals: what it leaves out stays, what
// it sends replaces, even false or "". The stream leaves out what is not
// the page's kind (held on a free lab, inject on a lesson) and the inputs
// unless the server chose them, and always sends a cleared inject list.
func TestOutgoingSignals(t *testing.T) {
	t.Parallel()
	r := webtest.DefaultRun(t, -1)
	free := snapshot{run: r, in: r.Inputs, cursor: 7, speed: tabstate.Speeds[1]}
	lesson := snapshot{run: r, cursor: 3, speed: tabstate.Speeds[0], lesson: &lessonbook.Doc{}, step: "", held: false}
	for _, tt := range []struct {
		name string
		sig  any
		keys []string
		has  map[string]string
	}{
		{"free lab, new inputs", redrawSignalsOf(free, true),
			[]string{"cfg", "cursor", "frames", "inject", "playing", "preset", "speed"},
			map[string]string{"cursor": "7", "frames": "30", "inject": `""`, "playing": "false", "preset": `"search-cache"`, "speed": `"4"`}},
		{"free lab, a slider's own change", redrawSignalsOf(free, false),
			[]string{"cursor", "frames", "inject", "playing", "speed"}, nil},
		{"lesson, new inputs", redrawSignalsOf(lesson, true),
			[]string{"cfg", "cursor", "frames", "held", "playing", "preset", "speed", "step"},
			map[string]string{"held": "false", "step": `""`, "cfg": "{}"}},
		{"lesson, a frame", frameSignalsOf(lesson), []string{"cursor", "held", "playing"}, map[string]string{"held": "false"}},
		{"free lab, a frame", frameSignalsOf(free), []string{"cursor", "playing"}, nil},
		{"placeholders", placeholderSignals{PH: map[string]string{"p0": "5.5%"}}, []string{"_ph"}, map[string]string{"_ph": `{"p0":"5.5%"}`}},
		{"inject menu", injectHostSignal{InjectHost: "h0"}, []string{"injectHost"}, map[string]string{"injectHost": `"h0"`}},
	} {
		m, keys := signalKeys(t, tt.sig)
		if !slices.Equal(keys, tt.keys) {
			t.Errorf("%s: keys %v, want %v", tt.name, keys, tt.keys)
		}
		for k, want := range tt.has {
			if string(m[k]) != want {
				t.Errorf("%s: %s = %s, want %s", tt.name, k, m[k], want)
			}
		}
	}

	// The page's first signals hold every signal a request reads back.
	var page TabSignals
	if err := json.Unmarshal([]byte(pageSignals(webtest.Tab, snapshot{run: r, speed: tabstate.Speeds[0], cursor: 4})), &page); err != nil {
		t.Fatal(err)
	}
	if page.Tab != webtest.Tab || page.Preset != tabstate.DefaultPreset || page.Cursor == nil || *page.Cursor != 4 || page.Speed != "1" ||
		page.InjectHost != "h0" || len(page.Cfg) == 0 || parseDrawn(page.Drawn) == (drawn{}) {
		t.Errorf("page signals %+v", page)
	}
	_, keys := signalKeys(t, json.RawMessage(pageSignals(webtest.Tab, snapshot{run: r, speed: tabstate.Speeds[0], cursor: 4})))
	if want := []string{"cfg", "cursor", "drawn", "frames", "inject", "injectDrop", "injectHost", "playing", "preset", "seq", "speed", "tab"}; !slices.Equal(keys, want) {
		t.Errorf("page signal keys %v, want %v", keys, want)
	}
}
