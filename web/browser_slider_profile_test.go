package web

import (
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/profiler"
	"github.com/chromedp/chromedp"

	"outlierlab/web/internal/browsertest"
	"outlierlab/web/room"
	"outlierlab/web/roombus"
)

// TestBrowserSliderProfile is a tool for issue 26 item 0, not a check:
// with OUTLIERLAB_SLIDER_PROFILE=1 it plays /lab (or
// OUTLIERLAB_SLIDER_PROFILE_PATH) to its end, moves the cap slider 12
// times under V8's sampling profiler (CDP Profiler, 100 µs) and logs the
// functions that took the time, by self and by inclusive time. Native
// work (style, layout, canvas) shows as "(program)"; a forced layout is
// charged to the function that read a size. OUTLIERLAB_SLIDER_PROFILE_FOCUS
// names a function (as logged, "dispatchEvent :-1") to count only what
// runs under it. OUTLIERLAB_SLIDER_TRACE=1 records a CDP trace instead
// and logs the page's main-thread CPU time by trace event
// (browser_slider_trace_test.go).
func TestBrowserSliderProfile(t *testing.T) {
	if os.Getenv("OUTLIERLAB_SLIDER_PROFILE") != "1" {
		t.Skip("a profiling tool: OUTLIERLAB_SLIDER_PROFILE=1 runs it")
	}
	browsertest.SkipWithoutChromium(t)
	l := startRoomLab(t, roombus.BusOptions{}, room.Limits{})
	bctx := browsertest.StartChromium(t, 1280, 900)
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	path := "/lab"
	if p := os.Getenv("OUTLIERLAB_SLIDER_PROFILE_PATH"); p != "" {
		path = p
	}
	b := browsertest.Tab(t, bctx, l.TS.URL, 90*time.Second)
	b.Step("open "+path, chromedp.Navigate(b.URL+path), chromedp.WaitVisible(chromedp.CSS("#chart-lanes canvas")))
	b.Eval(sliderBench + `; 'ok'`)
	b.Step("instant speed", chromedp.Click(chromedp.CSS(`button.speed[title="instant"]`)))
	b.Step("play", chromedp.Click(chromedp.CSS("#btn-play")))
	b.Poll("the run's end", `document.getElementById('scrub').value === document.getElementById('scrub').max && document.getElementById('scrub').max !== '0'`)
	move := func(i int) moveTimes {
		m, err := chromedp.Run(b.Ctx, chromedp.Evaluate[moveTimes](fmt.Sprintf(`t_move("c-max_ejection_percent", %q)`, capValues[i%len(capValues)]), chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("move the cap: %v", err)
		}
		return m
	}
	for i := range 4 { // warm: V8 has compiled the paths a move takes
		move(i)
	}
	if os.Getenv("OUTLIERLAB_SLIDER_TRACE") == "1" {
		trace := startPageTrace(t, b)
		var moves []moveTimes
		for i := range 12 {
			moves = append(moves, move(4+i))
		}
		trace.stop(t, b, len(moves))
		line, _, _ := sliderFigures(path, moves)
		t.Log(line)
		return
	}
	for _, err := range []error{
		cdpCall(b, profiler.Enable, cdp.Empty{}),
		cdpCall(b, profiler.SetSamplingInterval, profiler.SetSamplingIntervalParams{Interval: 100}),
		cdpCall(b, profiler.Start, cdp.Empty{}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	var moves []moveTimes
	for i := range 12 {
		moves = append(moves, move(4+i))
	}
	res, err := chromedp.Call(b.Ctx, profiler.Stop, cdp.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	line, _, _ := sliderFigures(path, moves)
	t.Log(line)
	self, incl, total := profileTimes(res.Profile, os.Getenv("OUTLIERLAB_SLIDER_PROFILE_FOCUS"))
	logTop(t, fmt.Sprintf("self time, %v sampled over %d moves", total.Round(time.Millisecond), len(moves)), self, 35)
	logTop(t, "inclusive time", incl, 70)
}

func cdpCall[P any, R any](b *browser, cmd cdp.Command[P, R], p P) error {
	_, err := chromedp.Call(b.Ctx, cmd, p)
	return err
}

// profileTimes sums a V8 CPU profile's samples by function (name, script
// and line): the time on top of the stack, the time anywhere on it; with
// focus, only the samples under that function, and the frames above it.
func profileTimes(p *profiler.Profile, focus string) (self, incl map[string]time.Duration, total time.Duration) {
	parent := map[int64]*profiler.ProfileNode{}
	byID := map[int64]*profiler.ProfileNode{}
	for _, n := range p.Nodes {
		byID[n.ID] = n
		for _, c := range n.Children {
			parent[c] = n
		}
	}
	name := func(n *profiler.ProfileNode) string {
		u := n.CallFrame.URL
		if i := len(u) - 28; i > 0 {
			u = u[i:]
		}
		return fmt.Sprintf("%s %s:%d", n.CallFrame.FunctionName, u, n.CallFrame.LineNumber)
	}
	self, incl = map[string]time.Duration{}, map[string]time.Duration{}
	for i, id := range p.Samples {
		if i+1 >= len(p.TimeDeltas) {
			break
		}
		d := time.Duration(p.TimeDeltas[i+1]) * time.Microsecond // until the next sample
		var stack []string                                       // top first, up to focus
		found := focus == ""
		for n := byID[id]; n != nil && !found; n = parent[n.ID] {
			k := name(n)
			stack = append(stack, k)
			found = k == focus
		}
		if !found {
			continue
		}
		if focus == "" {
			for n := byID[id]; n != nil; n = parent[n.ID] {
				stack = append(stack, name(n))
			}
		}
		total += d
		self[stack[0]] += d
		seen := map[string]bool{} // a recursive function counts once
		for _, k := range stack {
			if !seen[k] {
				seen[k] = true
				incl[k] += d
			}
		}
	}
	return self, incl, total
}

func logTop(t *testing.T, title string, m map[string]time.Duration, n int) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return int(m[b] - m[a]) })
	t.Log(title)
	for _, k := range keys[:min(n, len(keys))] {
		t.Logf("  %8.1f ms  %s", float64(m[k])/float64(time.Millisecond), k)
	}
}
