package web

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"outlierlab/web/internal/browsertest"
	"outlierlab/web/internal/webtest"
	"outlierlab/web/room"
	"outlierlab/web/roombus"
)

// Issue 26's first-load budgets, measured in Chromium over CDP: what a
// page costs on the wire with an empty cache, what a second visit costs,
// and how long an attendee on bad Wi-Fi waits for the first chart.
const (
	firstLoadBudget = 250 << 10 // bytes on the wire, empty cache
	// A second visit takes every static file from the cache (0 bytes of
	// /static/) and is ≤ 20 KB on the wire: the page (its tab id and
	// script nonce make it new each time), and its stream's first redraw,
	// which leaves out what the page drew (the "drawn" signal).
	secondVisitTarget = 20 << 10
	slowFirstChart    = 6 * time.Second
	// The slow link: 1 Mbit/s each way, 300 ms before each response.
	// Chromium's emulation has no packet loss for HTTP (its packetLoss is
	// WebRTC's), so the 5% loss is not in this figure.
	slowLinkBytesPerSec = 1e6 / 8
	slowLinkLatencyMs   = 300
)

// emulateNetworkConditions is Network.emulateNetworkConditions, deprecated
// and gone from cdproto but what this Chromium takes (its ByRule successor
// answered "Invalid parameters" to a global rule).
var emulateNetworkConditions = cdp.Command[slowLink, cdp.Empty]{Method: "Network.emulateNetworkConditions"}

type slowLink struct {
	Offline            bool    `json:"offline"`
	Latency            float64 `json:"latency"`            // ms before each response
	DownloadThroughput float64 `json:"downloadThroughput"` // bytes/s
	UploadThroughput   float64 `json:"uploadThroughput"`   // bytes/s
}

// wireMeter sums what a tab received: every finished request's
// encodedDataLength (headers and body as sent, compressed), and for a
// request still open (the page's event stream) the chunks so far.
type wireMeter struct {
	mu       sync.Mutex
	url      map[network.RequestID]string
	chunks   map[network.RequestID]int64
	finished map[network.RequestID]int64
}

func meterWire(t testing.TB, ctx context.Context) *wireMeter {
	t.Helper()
	m := &wireMeter{}
	m.reset()
	if err := chromedp.Listen(ctx, func(ev any) {
		m.mu.Lock()
		defer m.mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			m.url[e.RequestID] = e.Request.URL
		case *network.EventDataReceived:
			m.chunks[e.RequestID] += e.EncodedDataLength
		case *network.EventLoadingFinished:
			m.finished[e.RequestID] = int64(e.EncodedDataLength)
		}
	}); err != nil {
		t.Fatalf("listen: %v", err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatalf("network.enable: %v", err)
	}
	return m
}

func (m *wireMeter) reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.url = map[network.RequestID]string{}
	m.chunks = map[network.RequestID]int64{}
	m.finished = map[network.RequestID]int64{}
}

// total is the bytes received since the last reset, and one line per
// request (largest first) for the log.
func (m *wireMeter) total() (int64, string) {
	n, _, rows := m.totals()
	return n, rows
}

// totals is total, and the bytes of /static/ files among them.
func (m *wireMeter) totals() (sum, static int64, log string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	type row struct {
		url string
		n   int64
	}
	var rows []row
	for id, u := range m.url {
		n, ok := m.finished[id]
		if !ok {
			n = m.chunks[id]
		}
		sum += n
		if strings.Contains(u, "/static/") {
			static += n
		}
		rows = append(rows, row{u, n})
	}
	slices.SortFunc(rows, func(a, b row) int { return int(b.n - a.n) })
	var b strings.Builder
	for _, r := range rows {
		u := r.url
		if i := strings.Index(u, "/static/"); i >= 0 {
			u = u[i:]
		} else if i := strings.Index(u, "//"); i >= 0 {
			if j := strings.Index(u[i+2:], "/"); j >= 0 {
				u = u[i+2+j:]
			}
		}
		fmt.Fprintf(&b, "\n    %7.1f KB  %s", float64(r.n)/1024, webtest.Head(u, 90))
	}
	return sum, static, b.String()
}

// firstChartJS is truthy (the page's clock, in ms since navigation) once
// the lanes chart has an ECharts instance with its axes: the first chart
// an attendee sees.
const firstChartJS = `(() => {
	const el = document.getElementById('chart-lanes'), c = el && window.echarts && echarts.getInstanceByDom(el);
	const o = c && c.getOption();
	return o && o.xAxis && o.xAxis.length > 0 && el.querySelector('canvas') ? performance.now() : false })()`

// settle waits until nothing new arrived for quiet (the event stream stays
// open: its first patches are part of the load, not what comes after).
func (m *wireMeter) settle(quiet time.Duration) {
	last, since := int64(-1), time.Now()
	for time.Since(since) < quiet {
		time.Sleep(50 * time.Millisecond)
		if n, _ := m.total(); n != last {
			last, since = n, time.Now()
		}
	}
}

// TestBrowserFirstLoadBudget loads /lab, /lessons/cap and a room
// attendee's page /r/CODE in fresh browser contexts (empty caches): each
// first load ≤ 250 KB on the wire, each second visit with every static
// file from the cache and ≤ 20 KB on the wire; then /lab over an
// emulated 1 Mbit/s, 300 ms link: the first chart appears, within its
// bytes' budget. How long it took is logged, not judged: on two cores
// shared with other builds it is the machine's load as much as the
// page's (7 s at a load of 8–15, issue 33); the benchmark
// BenchmarkBrowserFirstChartSlowLink reports it.
func TestBrowserFirstLoadBudget(t *testing.T) {
	browsertest.SkipWithoutChromium(t)
	l := startRoomLab(t, roombus.BusOptions{}, room.Limits{})
	code, _ := l.CreateRoom(t, `{"preset":"search-cache"}`)
	bctx := browsertest.StartChromium(t, 1280, 900)
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	for _, path := range []string{"/lab", "/lessons/cap", "/r/" + code} {
		b := browsertest.Tab(t, bctx, l.TS.URL, 90*time.Second)
		m := meterWire(t, b.Ctx)
		for _, visit := range []string{"first load", "second visit"} {
			m.reset()
			b.Step("open "+path, chromedp.Navigate(l.TS.URL+path))
			if _, err := chromedp.Run(b.Ctx, chromedp.Poll[float64](firstChartJS, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
				t.Fatalf("%s: waiting for the first chart: %v", path, err)
			}
			m.settle(700 * time.Millisecond)
			n, static, rows := m.totals()
			kb := float64(n) / 1024
			if visit == "first load" {
				t.Logf("%s first load: %.1f KB on the wire (budget %d KB)%s", path, kb, firstLoadBudget>>10, rows)
				if n > firstLoadBudget {
					t.Errorf("%s first load: %.1f KB on the wire, over the %d KB budget", path, kb, firstLoadBudget>>10)
				}
				continue
			}
			t.Logf("%s second visit: %.1f KB on the wire (budget %d KB), %d bytes of static files%s", path, kb, secondVisitTarget>>10, static, rows)
			if n > secondVisitTarget {
				t.Errorf("%s second visit: %.1f KB on the wire, over the %d KB budget", path, kb, secondVisitTarget>>10)
			}
			if static > 0 {
				t.Errorf("%s second visit: %d bytes of static files on the wire, want every one from the cache", path, static)
			}
		}
		b.CheckOffline()
	}

	b := browsertest.Tab(t, bctx, l.TS.URL, 90*time.Second)
	first, n, err := firstChartOnSlowLink(t, b.Ctx, l.TS.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("/lab on 1 Mbit/s, %d ms: first chart after %.2f s (the target is %.0f s on an idle machine; load now %.1f), %.1f KB on the wire",
		slowLinkLatencyMs, first.Seconds(), slowFirstChart.Seconds(), loadAverage(), float64(n)/1024)
	if n > firstLoadBudget {
		t.Errorf("/lab on the slow link: %.1f KB on the wire, over the %d KB budget", float64(n)/1024, firstLoadBudget>>10)
	}
	b.CheckOffline()
}

// BenchmarkBrowserFirstChartSlowLink reports how long an attendee on bad
// Wi-Fi (1 Mbit/s each way, 300 ms before each response, empty cache)
// waits for /lab's first chart, in seconds ("s/first-chart"; issue 26's
// target is 6 s), and the kilobytes it took ("KB/first-load"). A figure,
// not a verdict: Chromium, the server and the page's script share the
// machine with whatever else runs on it, so read it beside the load.
// Each iteration is a fresh browser context (an empty cache) in one
// Chromium: go test -run '^$' -bench FirstChartSlowLink ./web/
func BenchmarkBrowserFirstChartSlowLink(b *testing.B) {
	browsertest.SkipWithoutChromium(b)
	_, ts := startTestServer(b)
	bctx := browsertest.StartChromium(b, 1280, 900)
	if err := chromedp.Do(bctx); err != nil {
		b.Fatalf("start chromium: %v", err)
	}
	var wait time.Duration
	var bytes int64
	runs := 0
	for b.Loop() {
		ctx, cancel := chromedp.NewContext(bctx, chromedp.WithNewBrowserContext())
		first, n, err := firstChartOnSlowLink(b, ctx, ts.URL)
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		wait += first
		bytes += n
		runs++
	}
	b.ReportMetric(wait.Seconds()/float64(runs), "s/first-chart")
	b.ReportMetric(float64(bytes)/1024/float64(runs), "KB/first-load")
	b.Logf("load average %.1f", loadAverage())
}

// firstChartOnSlowLink opens /lab at base in ctx (a fresh browser
// context) over the emulated slow link and returns how long the first
// chart took from the navigation's start (the page's clock) and the
// bytes received by then; an error if it did not appear within a minute.
func firstChartOnSlowLink(tb testing.TB, ctx context.Context, base string) (time.Duration, int64, error) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx); err != nil {
		return 0, 0, fmt.Errorf("new browser context: %w", err)
	}
	m := meterWire(tb, ctx)
	if _, err := chromedp.Call(ctx, emulateNetworkConditions, slowLink{Latency: slowLinkLatencyMs, DownloadThroughput: slowLinkBytesPerSec, UploadThroughput: slowLinkBytesPerSec}); err != nil {
		return 0, 0, fmt.Errorf("emulate the slow link: %w", err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/lab")); err != nil {
		return 0, 0, fmt.Errorf("open /lab on the slow link: %w", err)
	}
	ms, err := chromedp.Run(ctx, chromedp.Poll[float64](firstChartJS, chromedp.WithPollingTimeout(60*time.Second)))
	if err != nil {
		return 0, 0, fmt.Errorf("slow link: waiting for the first chart: %w", err)
	}
	n, _ := m.total()
	return time.Duration(ms * float64(time.Millisecond)), n, nil
}
