package lab

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"golang.org/x/net/html"

	"outlierlab/web/internal/webtest"
)

// TestStreamTranscripts plays the transcripts in testdata/stream: each is
// a tab's story told as the page tells it to the server (its stream
// opened with its signals, its commands posted, the playback clock moved)
// and, under each step, what the tab's stream sent for it in short form
// (transcript.event). A change to what the stream sends fails here; after
// an intended one, rewrite them and read the diff:
//
//	go test ./web/lab -run TestStreamTranscripts -rewrite
//
// The verbs (each may take charts=(chart-id,…), printing every series'
// length in those charts after the step, and find=(text,…), printing
// whether the step's events hold each text):
//
//	stream              open the tab's stream; input: its signals (JSON,
//	                    the tab's id added); none: the last page's
//	                    (drawn=… replaces its drawn signal)
//	page URL            GET a page of the lab; its signals are the next stream's
//	cmd VERB            POST /lab/cmd/VERB; input: the signals besides the tab
//	                    (page: the last page's signals, input's merged in)
//	clock DURATION      move the playback clock on (playing tabs advance)
//	rest                move the clock on by dragGap: a drag's owed tables
//	                    arrive (their pass ends with the hosts' table)
//	reconnect           the stream drops and opens again with its first signals
//	session             the tab's session: cursor, playing, preset, inputs
//
// The clock is the test's (Lab.Now), so what a playing tab shows depends
// on the steps alone; a step waits for the stream's pass it caused (one
// that ends with the charts' script), and none when the session did not
// change.
func TestStreamTranscripts(t *testing.T) {
	t.Parallel()
	datadriven.Walk(t, "testdata/stream", func(t *testing.T, path string) {
		tr := newTranscript(t)
		datadriven.RunTest(t, path, tr.do)
	})
}

// transcript is one transcript's lab, its clock, and the tab's stream.
type transcript struct {
	lab   *testServer
	ts    *httptest.Server
	clock *atomic.Int64 // Unix nanoseconds
	tab   string
	// page is the signals of the last page the transcript loaded, first
	// the signals its stream opened with.
	page, first string
	events      <-chan webtest.Event
	stop        func()
	// charts is every chart's option as the page holds it after the
	// events so far.
	charts map[string]json.RawMessage
	// shown is the session's state at the stream's last pass (gen,
	// cursor): a step that leaves it alone makes the stream send nothing.
	shown [2]uint64
}

// transcriptEpoch is the transcripts' clock at their start: any fixed
// moment, since only its differences count.
var transcriptEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func newTranscript(t *testing.T) *transcript {
	tr := &transcript{clock: new(atomic.Int64), tab: webtest.Tab}
	tr.clock.Store(transcriptEpoch.UnixNano())
	s, err := newServer(LabOptions{Now: func() time.Time { return time.Unix(0, tr.clock.Load()).UTC() }})
	if err != nil {
		t.Fatal(err)
	}
	tr.lab, tr.ts = s, webtest.Serve(t, s)
	return tr
}

// withTab is a command's or stream's body: the tab's id, then the
// signals of input (a JSON object, maybe empty).
func (tr *transcript) withTab(input string) string {
	rest := strings.TrimSpace(input)
	rest = strings.TrimSuffix(strings.TrimPrefix(rest, "{"), "}")
	if strings.TrimSpace(rest) != "" {
		rest = "," + rest
	}
	return `{"tab":"` + tr.tab + `"` + rest + `}`
}

// mergeJSON is the object base with over's keys put in it, objects
// merged key by key.
func mergeJSON(t *testing.T, base, over string) string {
	t.Helper()
	var b, o map[string]any
	if err := json.Unmarshal([]byte(base), &b); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(over), &o); err != nil {
		t.Fatal(err)
	}
	var merge func(b, o map[string]any)
	merge = func(b, o map[string]any) {
		for k, v := range o {
			bm, ok1 := b[k].(map[string]any)
			om, ok2 := v.(map[string]any)
			if ok1 && ok2 {
				merge(bm, om)
				continue
			}
			b[k] = v
		}
	}
	merge(b, o)
	return webtest.JSON(t, b)
}

// state is what the stream shows of the session: its generation (every
// command's change) and its cursor on the transcript's clock.
func (tr *transcript) state() [2]uint64 {
	sess := tr.lab.Sessions.Get(tr.tab)
	if sess == nil {
		return [2]uint64{}
	}
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return [2]uint64{sess.gen, uint64(sess.cursorAt(tr.lab.Now()))}
}

// open opens the tab's stream with sig and returns its first redraw.
func (tr *transcript) open(t *testing.T, sig string) []webtest.Event {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	tr.events, tr.stop = webtest.OpenStreamContext(ctx, t, tr.ts.URL, sig), cancel
	tr.charts = map[string]json.RawMessage{}
	return tr.pass(t)
}

// await is the stream's pass for a step: none when the step left the
// session as the stream last showed it.
func (tr *transcript) await(t *testing.T) []webtest.Event {
	t.Helper()
	if tr.events == nil || tr.state() == tr.shown {
		return nil
	}
	return tr.pass(t)
}

// pass reads the stream's events up to the end of a pass: the charts'
// script, which every redraw and advance sends last.
func (tr *transcript) pass(t *testing.T) []webtest.Event {
	t.Helper()
	var evs []webtest.Event
	webtest.WaitFor(t, tr.events, "the stream's charts", func(ev webtest.Event) bool {
		evs = append(evs, ev)
		return webtest.HoldCharts(t, tr.charts, ev.Data)
	})
	tr.shown = tr.state()
	return evs
}

// shortEvent is ev in a transcript's short form: its type and what it
// patches by name, with a digest of the rest (digest).
func shortEvent(ev webtest.Event) string {
	lines := map[string][]string{}
	for _, l := range strings.Split(ev.Data, "\n") {
		k, v, _ := strings.Cut(l, " ")
		lines[k] = append(lines[k], v)
	}
	switch ev.Type {
	case "datastar-patch-signals":
		return "signals " + shortSignals(strings.Join(lines["signals"], "\n"))
	case "datastar-patch-elements":
		var b strings.Builder
		mode, sel := strings.Join(lines["mode"], ""), strings.Join(lines["selector"], "")
		els := strings.Join(lines["elements"], "\n")
		if mode == "remove" {
			return "remove " + sel
		}
		if js, ok := scriptOf(els); ok {
			return "script " + shortScript(js)
		}
		b.WriteString("elements")
		if mode != "" && mode != "outer" {
			b.WriteString(" mode=" + mode)
		}
		if sel != "" {
			b.WriteString(" selector=" + sel)
		}
		b.WriteString(" " + topElements(els) + " " + digest(els))
		return b.String()
	}
	return ev.Type + " " + digest(ev.Data)
}

// shortSignals is a signals patch as key=value, sorted: short values as
// they are, an object of a few short values key by key (_ph.p0="1"),
// longer ones by digest.
func shortSignals(js string) string {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(js), &m); err != nil {
		return "(not an object) " + digest(js)
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := string(m[k])
		var sub map[string]json.RawMessage
		if json.Unmarshal(m[k], &sub) == nil && len(sub) <= 12 {
			for _, sk := range slices.Sorted(maps.Keys(sub)) {
				out = append(out, k+"."+sk+"="+shortValue(string(sub[sk])))
			}
			continue
		}
		out = append(out, k+"="+shortValue(v))
	}
	return strings.Join(out, " ")
}

// shortValue is a JSON value as it is, or by digest when long.
func shortValue(v string) string {
	if len(v) > 40 {
		return v[:1] + "…" + digest(v)
	}
	return v
}

// scriptOf is the script of an elements patch that is one <script>.
func scriptOf(els string) (string, bool) {
	m := regexp.MustCompile(`(?s)^<script[^>]*>(.*)</script>$`).FindStringSubmatch(strings.TrimSpace(els))
	if m == nil {
		return "", false
	}
	return m[1], true
}

// shortScript names what a script the stream runs does: the charts it
// sets or patches, the address it shows; its text by digest (the tab's
// nonce, on the element, is left out).
func shortScript(js string) string {
	for _, fn := range []string{"applyCharts(", "advanceCharts("} {
		i := strings.Index(js, fn)
		if i < 0 {
			continue
		}
		arg := js[i+len(fn):]
		var ids map[string]json.RawMessage
		dec := json.NewDecoder(strings.NewReader(arg))
		if err := dec.Decode(&ids); err != nil {
			return fn + "? " + digest(js)
		}
		how := ""
		if strings.HasPrefix(strings.TrimSpace(arg[dec.InputOffset():]), ",true") {
			how = " replace"
		}
		return strings.TrimSuffix(fn, "(") + how + " " + strings.Join(slices.Sorted(maps.Keys(ids)), ",") + " " + digest(js)
	}
	if m := regexp.MustCompile(`olabAddress\(("[^"]*")\)`).FindStringSubmatch(js); m != nil {
		var u string
		if json.Unmarshal([]byte(m[1]), &u) == nil {
			return "address " + u
		}
	}
	return digest(js)
}

// topElements names the top-level elements of a patch (tag#id), at most
// four, then how many more.
func topElements(els string) string {
	z := html.NewTokenizer(strings.NewReader(els))
	var names []string
	depth := 0
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			if len(names) > 4 {
				names = append(names[:4], fmt.Sprintf("+%d", len(names)-4))
			}
			return strings.Join(names, " ")
		case html.StartTagToken, html.SelfClosingTagToken:
			tok := z.Token()
			if depth == 0 {
				name := tok.Data
				for _, a := range tok.Attr {
					switch a.Key {
					case "id":
						name += "#" + a.Val
					case "data-done": // a lesson step's status
						name += "[done=" + a.Val + "]"
					}
				}
				names = append(names, name)
			}
			if tt == html.StartTagToken && !voidElement[tok.Data] {
				depth++
			}
		case html.EndTagToken:
			depth--
		}
	}
}

// voidElement are the elements with no end tag.
var voidElement = map[string]bool{"input": true, "br": true, "img": true, "hr": true, "meta": true, "link": true, "col": true, "source": true, "wbr": true}

// digest is a short hash of s: a change to s changes it.
func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "#" + hex.EncodeToString(sum[:4])
}

// seriesLens is every series of a chart's option with its length.
func seriesLens(t *testing.T, opt json.RawMessage) string {
	t.Helper()
	if opt == nil {
		return "none"
	}
	var out []string
	for _, s := range webtest.Series(t, opt) {
		out = append(out, fmt.Sprintf("%s=%d", s.Name, s.Len))
	}
	return strings.Join(out, " ")
}

func (tr *transcript) do(t *testing.T, d *datadriven.TestData) string {
	var out strings.Builder
	var evs []webtest.Event
	switch d.Cmd {
	case "page":
		url := d.CmdArgs[0].Key // the directive's parser cut the address at its first =
		if len(d.CmdArgs[0].Vals) > 0 {
			url += "=" + d.CmdArgs[0].Vals[0]
		}
		res, err := webtest.Get(tr.ts.URL + url)
		if err != nil {
			t.Fatal(err)
		}
		body := webtest.Body(t, res)
		if res.StatusCode != http.StatusOK {
			return fmt.Sprintf("status %d: %s\n", res.StatusCode, webtest.Head(body, 200))
		}
		if tr.stop != nil {
			tr.stop() // the last page's tab is gone
			tr.events = nil
		}
		tr.page = pageSignalsOf(t, body)
		tr.tab = regexp.MustCompile(`"tab":"([^"]+)"`).FindStringSubmatch(tr.page)[1]
		return "status 200\n"
	case "stream":
		sig := tr.page
		if in := strings.TrimSpace(d.Input); in != "" {
			sig = tr.withTab(in)
		}
		if d.HasArg("drawn") {
			var v string
			d.ScanArgs(t, "drawn", &v)
			sig = regexp.MustCompile(`"drawn":"[^"]*"`).ReplaceAllString(sig, `"drawn":"`+v+`"`)
		}
		tr.first = sig
		evs = tr.open(t, sig)
	case "reconnect":
		tr.stop()
		evs = tr.open(t, tr.first)
	case "cmd":
		body := tr.withTab(d.Input)
		if d.HasArg("page") {
			body = mergeJSON(t, tr.page, d.Input)
		}
		res, err := webtest.Post(tr.ts.URL+"/lab/cmd/"+d.CmdArgs[0].Key, body)
		if err != nil {
			t.Fatal(err)
		}
		if body := webtest.Body(t, res); res.StatusCode != http.StatusNoContent {
			fmt.Fprintf(&out, "status %d: %s\n", res.StatusCode, strings.TrimSpace(body))
		}
		evs = tr.await(t)
	case "clock":
		step, err := time.ParseDuration(d.CmdArgs[0].Key)
		if err != nil {
			d.Fatalf(t, "clock: %v", err)
		}
		tr.clock.Add(int64(step))
		evs = tr.await(t)
	case "rest":
		tr.clock.Add(int64(dragGap))
		webtest.WaitFor(t, tr.events, "the owed tables", func(ev webtest.Event) bool {
			evs = append(evs, ev)
			return strings.Contains(ev.Data, `id="envoy-hosts"`)
		})
	case "session":
		sess := tr.lab.Sessions.Get(tr.tab)
		if sess == nil {
			return "none\n"
		}
		snap := sess.snapshot(tr.lab.Now())
		return fmt.Sprintf("cursor=%d playing=%v speed=%s preset=%s cap=%d\n", snap.cursor, snap.playing, snap.speed.Name, snap.in.Preset, snap.run.Config.MaxEjectionPercent)
	default:
		d.Fatalf(t, "unknown verb %q", d.Cmd)
	}
	for _, ev := range evs {
		out.WriteString(shortEvent(ev))
		out.WriteString("\n")
	}
	for _, arg := range d.CmdArgs {
		switch arg.Key {
		case "charts":
			for _, id := range arg.Vals {
				fmt.Fprintf(&out, "chart %s: %s\n", id, seriesLens(t, tr.charts[id]))
			}
		case "find":
			text := webtest.JoinData(evs)
			for _, s := range arg.Vals {
				fmt.Fprintf(&out, "find %q: %v\n", s, strings.Contains(text, s))
			}
		}
	}
	return out.String()
}
