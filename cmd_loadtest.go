package main

import (
	"bufio"
	"compress/gzip"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"outlierlab/web"
)

// runLoadtest serves the lab on a loopback port inside this process and
// drives it as a room would: N tabs open their streams, each with its own
// heavy settings (50 hosts, 1 s interval, 3000 rps, a distinct cap), and M
// of them move the cursor while the rest idle. It prints the process's RSS,
// its live heap after a collection, the command→redraw latencies, the
// streams that dropped and the commands acknowledged without a redraw.
// The figures are the server's plus the clients' (gzip readers, buffers):
// an upper bound on the server's.
func runLoadtest(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("loadtest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Int("streams", 300, "open streams (tabs), 1–5000")
	movers := fs.Int("movers", 20, "tabs that move the cursor, 0–streams")
	d := fs.Duration("duration", 2*time.Minute, "how long the movers move, 1s–10m")
	every := fs.Duration("every", 250*time.Millisecond, "each mover's pause between commands, 10ms–10s")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	switch {
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "loadtest: unexpected argument %q\n", fs.Arg(0))
		return 2
	case *n < 1 || *n > 5000:
		fmt.Fprintf(stderr, "loadtest: -streams %d: allowed 1–5000\n", *n)
		return 2
	case *movers < 0 || *movers > *n:
		fmt.Fprintf(stderr, "loadtest: -movers %d: allowed 0–%d (the streams)\n", *movers, *n)
		return 2
	case *d < time.Second || *d > 10*time.Minute:
		fmt.Fprintf(stderr, "loadtest: -duration %s: allowed 1s–10m\n", *d)
		return 2
	case *every < 10*time.Millisecond || *every > 10*time.Second:
		fmt.Fprintf(stderr, "loadtest: -every %s: allowed 10ms–10s\n", *every)
		return 2
	}
	base, stop, err := loadServer()
	if err != nil {
		fmt.Fprintf(stderr, "loadtest: %v\n", err)
		return 1
	}
	defer stop()
	lt := &loadTest{base: base}
	return lt.run(*n, *movers, *d, *every, stdout, stderr)
}

// loadServer starts the lab on 127.0.0.1 (loopback only) with the
// per-address limits lifted: every tab here has the same address.
func loadServer() (string, func(), error) {
	lab, err := web.New(web.Options{Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return "", nil, err
	}
	lab.SetClientLimits(1_000_000, 10_000_000)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: lab.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() { _ = srv.Close() }, nil
}

type loadTest struct {
	base    string
	mu      sync.Mutex
	lat     []time.Duration
	dropped atomic.Int64
	lost    atomic.Int64
	sent    atomic.Int64
	refused atomic.Int64
}

// tabStream is one open stream: the cursors it was shown, in order.
type tabStream struct {
	seen chan int
	done chan struct{}
}

func (lt *loadTest) run(n, movers int, d, every time.Duration, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	t0 := time.Now()
	tabs := make([]*tabStream, n)
	for i := range n {
		ts, err := lt.open(ctx, i)
		if err != nil {
			fmt.Fprintf(stderr, "loadtest: stream %d: %v\n", i, err)
			return 1
		}
		tabs[i] = ts
	}
	fmt.Fprintf(stdout, "opened %d streams with distinct heavy settings in %s\n", n, time.Since(t0).Round(time.Millisecond))
	lt.report(stdout, "after opening")
	var wg sync.WaitGroup
	end := time.Now().Add(d)
	for i := range movers {
		wg.Go(func() { lt.move(i, tabs[i], end, every) })
	}
	wg.Wait()
	for _, ts := range tabs {
		select {
		case <-ts.done:
			lt.dropped.Add(1)
		default:
		}
	}
	lt.report(stdout, "after moving")
	lt.summary(stdout)
	return 0
}

// open starts tab i's stream and waits for its first redraw.
func (lt *loadTest) open(ctx context.Context, i int) (*tabStream, error) {
	sig := fmt.Sprintf(`{"tab":"load-%016d","preset":"search-cache","cfg":{"hosts":50,"interval":1,"rps":3000,"max_ejection_percent":%d,"consecutive_5xx":%d}}`, i, 1+i%100, 2+i/100)
	req, _ := http.NewRequestWithContext(ctx, "GET", lt.base+"/lab/stream?datastar="+url.QueryEscape(sig), nil)
	req.Header.Set("Accept-Encoding", "gzip")
	res, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if res.StatusCode != 200 {
		res.Body.Close()
		return nil, fmt.Errorf("status %d", res.StatusCode)
	}
	ts := &tabStream{seen: make(chan int, 64), done: make(chan struct{})}
	go ts.read(res.Body)
	select {
	case <-ts.seen:
		return ts, nil
	case <-ts.done:
		return nil, fmt.Errorf("stream ended before its first redraw")
	case <-time.After(30 * time.Second):
		return nil, fmt.Errorf("no first redraw within 30 s")
	}
}

// read passes on every cursor the stream shows, until it ends.
func (ts *tabStream) read(body io.ReadCloser) {
	defer close(ts.done)
	defer body.Close()
	zr, err := gzip.NewReader(body)
	if err != nil {
		return
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 64<<10), 8<<20)
	for sc.Scan() {
		line := sc.Text()
		_, rest, ok := strings.Cut(line, `"cursor":`)
		if !ok {
			continue
		}
		var c int
		if _, err := fmt.Sscanf(rest, "%d", &c); err == nil {
			select {
			case ts.seen <- c:
			default: // nobody waits: a frame of an idle tab
			}
		}
	}
}

// move scrubs tab i back and forth until end, timing each command to
// the stream's redraw.
func (lt *loadTest) move(i int, ts *tabStream, end time.Time, every time.Duration) {
	for k := 0; time.Now().Before(end); k++ {
		c := 5 + k%50
		drain(ts.seen)
		start := time.Now()
		body := fmt.Sprintf(`{"tab":"load-%016d","cursor":%d}`, i, c)
		res, err := http.Post(lt.base+"/lab/cmd/scrub", "application/json", strings.NewReader(body))
		lt.sent.Add(1)
		if err != nil {
			lt.refused.Add(1)
			continue
		}
		res.Body.Close()
		if res.StatusCode != http.StatusNoContent {
			lt.refused.Add(1)
			continue
		}
		if lt.await(ts, c) {
			lt.mu.Lock()
			lt.lat = append(lt.lat, time.Since(start))
			lt.mu.Unlock()
		} else {
			lt.lost.Add(1)
		}
		time.Sleep(every)
	}
}

// await waits up to 5 s for the stream to show cursor c.
func (lt *loadTest) await(ts *tabStream, c int) bool {
	timeout := time.After(5 * time.Second)
	for {
		select {
		case got := <-ts.seen:
			if got == c {
				return true
			}
		case <-ts.done:
			return false
		case <-timeout:
			return false
		}
	}
}

func drain(ch chan int) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

// report prints the process's RSS and its live heap after a collection.
func (lt *loadTest) report(w io.Writer, when string) {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	fmt.Fprintf(w, "%s: RSS %s, live heap %.1f MiB, goroutines %d\n", when, rss(), float64(m.HeapAlloc)/(1<<20), runtime.NumGoroutine())
}

func (lt *loadTest) summary(w io.Writer) {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	slices.Sort(lt.lat)
	q := func(p float64) time.Duration {
		if len(lt.lat) == 0 {
			return 0
		}
		return lt.lat[min(len(lt.lat)-1, int(p*float64(len(lt.lat))))].Round(time.Microsecond)
	}
	fmt.Fprintf(w, "commands %d, redrawn %d: command→redraw p50 %s, p95 %s, p99 %s\n", lt.sent.Load(), len(lt.lat), q(0.50), q(0.95), q(0.99))
	fmt.Fprintf(w, "dropped streams %d, lost commands (204, no redraw in 5 s) %d, refused commands %d\n", lt.dropped.Load(), lt.lost.Load(), lt.refused.Load())
}

// rss is the process's resident set size, from /proc (Linux); "?" elsewhere.
func rss() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "?"
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb int
			if _, err := fmt.Sscanf(strings.TrimSpace(v), "%d", &kb); err == nil {
				return fmt.Sprintf("%.0f MiB", float64(kb)/1024)
			}
		}
	}
	return "?"
}
