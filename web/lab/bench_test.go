package lab

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/starfederation/datastar-go/datastar"

	"outlierlab/web/chart"
	"outlierlab/web/gzipstream"
	"outlierlab/web/internal/webtest"
	"outlierlab/web/tabstate"
)

// BenchmarkSliderToRedraw is the lab's promise in one number: the time from
// a slider command (POST /lab/cmd/set) to the last byte of the redraw the
// tab's open stream sends, for search-cache at its last frame. Every
// iteration sets another cap, so every one re-runs the scenario (the run
// cache holds 64 runs; 101 values cycle through it). Goal: ≤ 30 ms.
func BenchmarkSliderToRedraw(b *testing.B) {
	lab := newTestServer(b)
	ts := webtest.Serve(b, lab)
	events := openStreamB(b, ts.URL, `{"tab":"`+webtest.Tab+`","preset":"search-cache","cursor":30}`)
	waitRedraw(b, events)
	client := &http.Client{}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		body := fmt.Sprintf(`{"tab":%q,"seq":%d,"cfg":{"max_ejection_percent":%d}}`, webtest.Tab, i+1, i%101)
		req, _ := http.NewRequest("POST", ts.URL+"/lab/cmd/set", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.AddCookie(webtest.BrowserCookie()) // the stream's browser: another's command is refused
		res, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		if res.StatusCode != http.StatusNoContent {
			b.Fatalf("set: status %d", res.StatusCode)
		}
		res.Body.Close()
		waitRedraw(b, events)
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/redraw")
}

// BenchmarkRedrawServerSide is the server's part alone: re-run the
// scenario and render the whole redraw (signals, panels, five chart
// options) into a discarding stream.
func BenchmarkRedrawServerSide(b *testing.B) {
	m := newRedrawMemo()
	for i := 0; b.Loop(); i++ {
		run, err := tabstate.BuildRun(tabstate.Inputs{Preset: tabstate.DefaultPreset}.With(map[string]float64{"max_ejection_percent": float64(i % 101)}))
		if err != nil {
			b.Fatal(err)
		}
		sse, rec := recorderSSE("")
		st := newStreamState(rec, "", m)
		if err := st.redraw(sse, snapshot{run: run, cursor: len(run.Frames), speed: tabstate.Speeds[0], gen: 1}, time.Time{}, false); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBytesPerFrame plays search-cache frame by frame into a recorder
// and reports what one played frame costs on the wire: uncompressed, and
// with the gzip the stream negotiates with the browser (brotli is not
// offered: web/gzipstream); and the server's time per frame.
func BenchmarkBytesPerFrame(b *testing.B) {
	run, err := tabstate.BuildRun(tabstate.Inputs{Preset: tabstate.DefaultPreset})
	if err != nil {
		b.Fatal(err)
	}
	var raw, gz framesPlayed
	for b.Loop() {
		raw, gz = playFrames(b, run, ""), playFrames(b, run, "gzip")
	}
	b.ReportMetric(float64(raw.perFrame), "B/frame")
	b.ReportMetric(float64(gz.perFrame), "gzip-B/frame")
	b.ReportMetric(float64(raw.redraw), "B/redraw")
	b.ReportMetric(float64(gz.elapsed.Microseconds())/float64(len(run.Frames)), "µs/gzip-frame")
}

// framesPlayed is what playing a run frame by frame sent: bytes per frame
// on the wire (mean and largest) and the first redraw's, and the time
// the frames took to build and send.
type framesPlayed struct {
	perFrame, largest, redraw, rawPerFrame int
	elapsed                                time.Duration
}

// playFrames redraws run at 0, then advances it one frame at a time to its
// end as a stream does (each update's events gathered into one
// compressed run), into a recorder asking for encoding enc.
func playFrames(tb testing.TB, run *tabstate.Run, enc string) framesPlayed {
	tb.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/lab/stream", nil)
	if enc != "" {
		req.Header.Set("Accept-Encoding", enc)
	}
	cw, _ := gzipstream.Compress(rec, req)
	sse := datastar.NewSSE(cw, req)
	st := newStreamState(cw, "", newRedrawMemo())
	snap := snapshot{run: run, speed: tabstate.Speeds[0], gen: 1}
	send := func(f func(*datastar.ServerSentEventGenerator, snapshot) error) {
		sent := gzipstream.Batch(cw)
		if err := f(sse, snap); err != nil {
			tb.Fatal(err)
		}
		if err := sent(); err != nil {
			tb.Fatal(err)
		}
	}
	send(func(sse *datastar.ServerSentEventGenerator, snap snapshot) error {
		return st.redraw(sse, snap, time.Time{}, false)
	})
	out := framesPlayed{redraw: rec.Body.Len()}
	firstRaw := st.bytes
	start := time.Now()
	for c := 1; c <= len(run.Frames); c++ {
		before := rec.Body.Len()
		snap.cursor = c
		send(func(sse *datastar.ServerSentEventGenerator, snap snapshot) error {
			return st.advance(sse, snap, time.Time{})
		})
		out.largest = max(out.largest, rec.Body.Len()-before)
	}
	out.elapsed = time.Since(start)
	out.perFrame = (rec.Body.Len() - out.redraw) / len(run.Frames)
	out.rawPerFrame = (st.bytes - firstRaw) / len(run.Frames)
	return out
}

// BenchmarkMemoryPerTab opens many tabs' streams at once and reports the
// heap each costs the server: its session, its stream goroutine and its
// compressor. "shared" tabs play the same preset (a workshop: the run is
// cached once); "own" tabs each have another cap, so each holds its own
// run (which the run cache holds, not the tab). Goal: ≤ 64 KiB a tab with
// the compression a browser negotiates (issue 15).
func BenchmarkMemoryPerTab(b *testing.B) {
	for _, mode := range []string{"shared", "own", "shared-browser", "shared-identity", "own-identity"} {
		b.Run(mode, func(b *testing.B) {
			const tabs = 40
			var perTab float64
			for b.Loop() {
				lab := newTestServer(b)
				h := lab.Handler()
				webtest.SettleHeap()
				var before runtime.MemStats
				runtime.ReadMemStats(&before)
				ctx, cancel := context.WithCancel(context.Background())
				var wg sync.WaitGroup
				for i := range tabs {
					cfg := ""
					enc := "gzip, deflate" // what Chromium sends over plain http
					switch mode {
					case "shared-browser":
						enc = "gzip, deflate, br, zstd" // Chromium over https: gzip is chosen
					case "shared-identity", "own-identity":
						enc = ""
					}
					if strings.HasPrefix(mode, "own") {
						cfg = fmt.Sprintf(`,"cfg":{"max_ejection_percent":%d}`, i+1)
					}
					sig := fmt.Sprintf(`{"tab":%q,"preset":"search-cache","cursor":30%s}`, webtest.TabOf(fmt.Sprintf("tab-%016d", i)), cfg)
					req := httptest.NewRequestWithContext(ctx, "POST", "/lab/stream", strings.NewReader(sig))
					req.AddCookie(webtest.BrowserCookie())
					req.Header.Set("Accept-Encoding", enc)
					w := newSinkWriter()
					wg.Go(func() { h.ServeHTTP(w, req) })
					<-w.first
				}
				time.Sleep(50 * time.Millisecond) // let each stream settle into its wait
				webtest.SettleHeap()
				var after runtime.MemStats
				runtime.ReadMemStats(&after)
				// Heap and goroutine stacks: each stream is a goroutine.
				perTab = float64((after.HeapAlloc+after.StackInuse)-(before.HeapAlloc+before.StackInuse)) / tabs
				cancel()
				wg.Wait()
			}
			b.ReportMetric(perTab/1024, "KiB/tab")
		})
	}
}

// recorderSSE is a Datastar stream into a recorder, compressed as a browser
// sending Accept-Encoding: enc would get it.
func recorderSSE(enc string) (*datastar.ServerSentEventGenerator, *httptest.ResponseRecorder) {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/lab/stream", nil)
	if enc != "" {
		req.Header.Set("Accept-Encoding", enc)
	}
	cw, _ := gzipstream.Compress(rec, req)
	return datastar.NewSSE(cw, req), rec
}

// sinkWriter is a ResponseWriter that forgets what it is sent, and says
// when the first bytes arrived.
type sinkWriter struct {
	h     http.Header
	once  sync.Once
	first chan struct{}
}

func newSinkWriter() *sinkWriter {
	return &sinkWriter{h: http.Header{}, first: make(chan struct{})}
}

func (w *sinkWriter) Header() http.Header { return w.h }
func (w *sinkWriter) WriteHeader(int)     {}
func (w *sinkWriter) Flush()              {}
func (w *sinkWriter) Write(p []byte) (int, error) {
	w.once.Do(func() { close(w.first) })
	return len(p), nil
}

func openStreamB(b *testing.B, base, signals string) <-chan webtest.Event {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	res, err := http.DefaultClient.Do(webtest.StreamRequest(ctx, base, "/lab/stream", signals)) // transparent gunzip
	if err != nil {
		b.Fatal(err)
	}
	events := make(chan webtest.Event, 1024)
	go webtest.ReadEvents(res.Body, events)
	return events
}

// waitRedraw waits for the last event of a redraw: the charts' options
// (replaced on a new page, merged after a slider move that keeps the
// run's hosts).
func waitRedraw(b *testing.B, events <-chan webtest.Event) {
	b.Helper()
	webtest.WaitFor(b, events, "redraw", func(ev webtest.Event) bool {
		return strings.Contains(ev.Data, "applyCharts(")
	})
}

// BenchmarkChartStep is what one played frame's charts cost the server
// for a tab alone (no room's followers to share it): the frames played in
// order, as a playing tab asks for them (chart.StepPatch: what the frame
// adds to each chart, web/chart/chart_step.go).
//
// Its figure is instructions, so a loaded machine does not decide it:
//
//	go test -c -o web.test ./web/
//	GODEBUG=asyncpreemptoff=1 GOMAXPROCS=1 valgrind --tool=callgrind \
//	  ./web.test -test.run='^$' -test.bench='^BenchmarkChartStep$' -test.benchtime=290x
//
// and the same with -test.benchtime=58x; the difference of the two totals
// over 232 is a frame's (both counts are whole passes over the preset's 29
// steps, and the run built before the loop cancels out). Issue 26's budget
// is 1.5 M instructions a frame. Measured: 14.0 M when a frame built both
// cursors' whole options and diffed them, 0.78 M built from the frames.
func BenchmarkChartStep(b *testing.B) {
	run, err := tabstate.BuildRun(tabstate.Inputs{Preset: tabstate.DefaultPreset})
	if err != nil {
		b.Fatal(err)
	}
	n := len(run.Frames)
	var scripts *chart.Scripts
	for i := 0; b.Loop(); i++ {
		c := 1 + i%(n-1)
		if c == 1 {
			scripts = chart.NewScripts() // every step built, none remembered
		}
		if _, err := scripts.Step(run, c, c+1); err != nil {
			b.Fatal(err)
		}
	}
}
