package web

import (
	"encoding/json"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/tracing"
	"github.com/chromedp/chromedp"
)

// A CDP performance trace of the slider moves (TestBrowserSliderProfile
// with OUTLIERLAB_SLIDER_TRACE=1): the CPU time of the renderer's main
// thread by trace event, each event's own time (its children's taken
// out). Thread time, not wall time: on a loaded machine the figures
// change less than the sampled profile's, which counts the time a thread
// waited for a core as the function it was in. V8's work shows as
// FunctionCall (a callback from the page: ECharts' frame, Datastar's
// stream) or EvaluateScript (a script the stream ran: applyCharts), by
// script.

// traceEvent is one event of Chrome's trace format.
type traceEvent struct {
	Name string          `json:"name"`
	Ph   string          `json:"ph"`
	Ts   float64         `json:"ts"`
	Dur  float64         `json:"dur"`
	Tdur float64         `json:"tdur"`
	Pid  int             `json:"pid"`
	Tid  int             `json:"tid"`
	Args json.RawMessage `json:"args"`
}

// pageTrace collects the trace events of b's target.
type pageTrace struct {
	mu   sync.Mutex
	evs  []traceEvent
	done chan struct{}
}

func startPageTrace(t *testing.T, b *browser) *pageTrace {
	t.Helper()
	pt := &pageTrace{done: make(chan struct{})}
	if err := chromedp.Listen(b.Ctx, func(ev any) {
		switch e := ev.(type) {
		case *tracing.EventDataCollected:
			pt.mu.Lock()
			for _, v := range e.Value {
				var x traceEvent
				if json.Unmarshal(v, &x) == nil {
					pt.evs = append(pt.evs, x)
				}
			}
			pt.mu.Unlock()
		case *tracing.EventTracingComplete:
			close(pt.done)
		}
	}); err != nil {
		t.Fatalf("listen for the trace: %v", err)
	}
	if _, err := chromedp.Call(b.Ctx, tracing.Start, tracing.StartParams{
		TransferMode: tracing.StartTransferModeReportEvents,
		TraceConfig: &tracing.TraceConfig{IncludedCategories: []string{
			"devtools.timeline", "disabled-by-default-devtools.timeline", "v8.execute", "blink", "toplevel", "cc",
		}},
	}); err != nil {
		t.Fatalf("start the trace: %v", err)
	}
	return pt
}

// stop ends the trace and logs the busiest renderer main thread's CPU
// time per move, by event.
func (pt *pageTrace) stop(t *testing.T, b *browser, moves int) {
	t.Helper()
	if _, err := chromedp.Call(b.Ctx, tracing.End, cdp.Empty{}); err != nil {
		t.Fatalf("end the trace: %v", err)
	}
	select {
	case <-pt.done:
	case <-time.After(30 * time.Second):
		t.Fatal("the trace did not complete in 30 s")
	}
	pt.mu.Lock()
	defer pt.mu.Unlock()
	type thread struct{ pid, tid int }
	main := map[thread]bool{}
	for _, e := range pt.evs {
		if e.Ph == "M" && e.Name == "thread_name" && strings.Contains(string(e.Args), `"CrRendererMain"`) {
			main[thread{e.Pid, e.Tid}] = true
		}
	}
	byThread := map[thread][]traceEvent{}
	for _, e := range pt.evs {
		if k := (thread{e.Pid, e.Tid}); e.Ph == "X" && main[k] {
			byThread[k] = append(byThread[k], e)
		}
	}
	var busiest map[string]float64
	var top float64
	for _, evs := range byThread {
		self, total := ownTimes(evs)
		if total > top {
			busiest, top = self, total
		}
	}
	per := func(us float64) float64 { return us / 1000 / float64(moves) }
	t.Logf("trace: the page's main thread, %.1f ms of CPU a move (%d moves), by event:", per(top), moves)
	names := make([]string, 0, len(busiest))
	for n := range busiest {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return busiest[names[i]] > busiest[names[j]] })
	for _, n := range names[:min(20, len(names))] {
		t.Logf("  %6.2f ms  %s", per(busiest[n]), n)
	}
}

// ownTimes sums complete events' thread time less their children's, by
// name (a script's name added to V8's), and the top-level events' total.
func ownTimes(evs []traceEvent) (self map[string]float64, total float64) {
	sort.Slice(evs, func(i, j int) bool {
		if evs[i].Ts != evs[j].Ts {
			return evs[i].Ts < evs[j].Ts
		}
		return evs[i].Dur > evs[j].Dur
	})
	self = map[string]float64{}
	type open struct {
		e        traceEvent
		children float64
	}
	var stack []*open
	pop := func() {
		o := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		name := o.e.Name
		if name == "FunctionCall" || name == "EvaluateScript" {
			var a struct {
				Data struct {
					URL string `json:"url"`
				} `json:"data"`
			}
			_ = json.Unmarshal(o.e.Args, &a)
			u := a.Data.URL
			u = u[strings.LastIndex(u, "/")+1:]
			if i := strings.Index(u, "?"); i >= 0 {
				u = u[:i]
			}
			name += " " + u
		}
		self[name] += o.e.Tdur - o.children
		if len(stack) > 0 {
			stack[len(stack)-1].children += o.e.Tdur
		} else {
			total += o.e.Tdur
		}
	}
	for _, e := range evs {
		for len(stack) > 0 && stack[len(stack)-1].e.Ts+stack[len(stack)-1].e.Dur <= e.Ts {
			pop()
		}
		stack = append(stack, &open{e: e})
	}
	for len(stack) > 0 {
		pop()
	}
	return self, total
}
