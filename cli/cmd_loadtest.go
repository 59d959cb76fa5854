package cli

import (
	"bufio"
	"compress/gzip"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"outlierlab/web/tabid"
)

// runLoadtest serves the lab on a loopback port, in a child process
// started as `outlierlab serve` with its defaults (the soft memory limit
// among them; only the per-address limits are lifted, as every tab here
// has the same address), and drives it as a room would: N tabs open their
// streams, each with its own heavy settings (50 hosts, 1 s interval, 3000
// rps, a distinct cap), and M of them move the cursor while the rest idle.
// It prints the server's RSS and heap (read from its /proc entry and its
// /metrics: the clients are not counted), the command→redraw latencies,
// the streams that dropped and the commands acknowledged without a redraw.
// With -heavy K, K more clients loop over the heaviest requests the lab
// allows (heavyKinds) meanwhile, each a cache miss: the movers' redraws
// are the lab's promise under that load.
func runLoadtest(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("loadtest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Int("streams", 300, "open streams (tabs), 1–5000")
	movers := fs.Int("movers", 20, "tabs that move the cursor, 0–streams")
	d := fs.Duration("duration", 2*time.Minute, "how long the movers move, 1s–10m")
	every := fs.Duration("every", 250*time.Millisecond, "each mover's pause between commands, 10ms–10s")
	mem := fs.Int("memory-limit", 400, "the server's soft memory limit in MiB, serve's -memory-limit (0: none)")
	light := fs.Bool("light", false, "tabs at the preset's own settings (one shared run), not each with its own heavy settings")
	heavy := fs.Int("heavy", 0, "clients looping the heaviest requests allowed (sweep, compare, what-if, lab page) meanwhile, 0–64")
	kinds := fs.String("heavy-kinds", strings.Join(heavyKindNames(), ","), "which heavy requests the -heavy clients send, in turn")
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
	case *mem < 0 || *mem > 1<<20:
		fmt.Fprintf(stderr, "loadtest: -memory-limit %d: allowed 0–%d MiB\n", *mem, 1<<20)
		return 2
	case *heavy < 0 || *heavy > 64:
		fmt.Fprintf(stderr, "loadtest: -heavy %d: allowed 0–64\n", *heavy)
		return 2
	}
	var use []heavyKind
	for name := range strings.SplitSeq(*kinds, ",") {
		k, ok := lookupHeavyKind(strings.TrimSpace(name))
		if !ok {
			fmt.Fprintf(stderr, "loadtest: -heavy-kinds: %q is not one (allowed %s)\n", name, strings.Join(heavyKindNames(), ", "))
			return 2
		}
		use = append(use, k)
	}
	srv, err := startLoadServer(*n, *mem)
	if err != nil {
		fmt.Fprintf(stderr, "loadtest: %v\n", err)
		return 1
	}
	defer srv.stop()
	fmt.Fprintf(stdout, "server: %s (pid %d), soft memory limit %d MiB\n", srv.base, srv.cmd.Process.Pid, *mem)
	base := srv.base
	lt := &loadTest{base: base, server: srv, light: *light, heavy: *heavy, kinds: use, heavyStats: map[string]*heavyStat{}, browser: tabid.NewBrowser()}
	return lt.run(*n, *movers, *d, *every, stdout, stderr)
}

// loadServer is the lab under test: this program's serve in a child
// process, on 127.0.0.1 (loopback only), with a data directory of its own
// (removed at stop): a load test never touches the user's workshops, and
// runs beside a `make run` that holds the default directory.
type loadServer struct {
	cmd     *exec.Cmd
	base    string
	dataDir string
}

// startLoadServer starts the child and waits for the address it prints.
// A child that exits first (a flag it refuses, a directory it cannot
// write) is reported at once with what it said on stderr.
// extra are more flags of serve (tests).
func startLoadServer(tabs, memMiB int, extra ...string) (*loadServer, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "outlierlab-loadtest-")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, "serve", "-addr", "127.0.0.1:0", "-data-dir", dir, "-max-tabs", fmt.Sprint(max(tabs, 2000)),
		"-tabs-per-minute", "1000000", "-commands-per-minute", "1000000", "-streams-per-address", "1000000", "-memory-limit", fmt.Sprint(memMiB))
	cmd.Args = append(cmd.Args, extra...)
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "GOMEMLIMIT=") })
	out, err := cmd.StdoutPipe()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	// The child's log: kept for the reason it gives if it does not start;
	// past that only its warnings go on (the request lines would drown
	// the report).
	errs := &childLog{}
	cmd.Stderr = errs
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s := &loadServer{cmd: cmd, dataDir: dir}
	found := make(chan string, 1)
	exited := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			// "outlierlab: serving the lab on http://127.0.0.1:PORT/ (…)"
			if _, rest, ok := strings.Cut(sc.Text(), "serving the lab on "); ok {
				u, _, _ := strings.Cut(rest, " ")
				found <- strings.TrimSuffix(u, "/")
			}
		}
		// stdout closes when the child exits (or closes it): a child that
		// has not printed its address by then never will.
		close(exited)
	}()
	select {
	case s.base = <-found:
		errs.started()
		return s, nil
	case <-exited:
		err := cmd.Wait()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("the server did not start (%v): %s", err, errs.String())
	case <-time.After(30 * time.Second):
		s.stop()
		return nil, fmt.Errorf("the server did not start within 30 s: %s", errs.String())
	}
}

func (s *loadServer) stop() {
	defer os.RemoveAll(s.dataDir)
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
}

// childLog is the load test's child's stderr: all of it until the child
// has started (the reason it gives if it does not), then only its last
// lines, for a report.
type childLog struct {
	mu   sync.Mutex
	buf  []byte
	live bool
}

func (c *childLog) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buf = append(c.buf, p...)
	if c.live && len(c.buf) > 64<<10 {
		c.buf = append(c.buf[:0], c.buf[len(c.buf)-16<<10:]...)
	}
	return len(p), nil
}

func (c *childLog) started() {
	c.mu.Lock()
	c.live = true
	c.mu.Unlock()
}

func (c *childLog) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.TrimSpace(string(c.buf))
}

// memory is the server's RSS (from /proc) and its heap in use, from its
// /metrics (heap objects, live and not yet collected).
func (s *loadServer) memory() (string, string) {
	heap := "?"
	if res, err := http.Get(s.base + "/metrics"); err == nil {
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		for line := range strings.SplitSeq(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "go_memstats_heap_alloc_bytes "); ok {
				var f float64
				if _, err := fmt.Sscanf(v, "%g", &f); err == nil {
					heap = fmt.Sprintf("%.1f MiB", f/(1<<20))
				}
			}
		}
	}
	return rssOf(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid)), heap
}

type loadTest struct {
	base    string
	server  *loadServer
	mu      sync.Mutex
	lat     []time.Duration
	dropped atomic.Int64
	lost    atomic.Int64
	sent    atomic.Int64
	refused atomic.Int64
	// light tabs share the preset's run; heavy clients loop over kinds,
	// heavyStats count their answers.
	light      bool
	heavy      int
	kinds      []heavyKind
	heavyMu    sync.Mutex
	heavyStats map[string]*heavyStat
	// browser is the identity every tab here is issued for (web/tabid):
	// its cookie goes with every stream and command.
	browser string
}

// tab is tab i's id, issued for the load test's browser.
func (lt *loadTest) tab(i int) string { return tabid.For(lt.browser, fmt.Sprintf("load-%016d", i)) }

// post sends a tab's signals to path (a stream, a command) as a page of
// the browser does.
func (lt *loadTest) post(ctx context.Context, path, signals string) *http.Request {
	req, _ := http.NewRequestWithContext(ctx, "POST", lt.base+path, strings.NewReader(signals))
	req.Header.Set("Content-Type", "application/json")
	req.AddCookie(&http.Cookie{Name: tabid.Cookie, Value: lt.browser})
	return req
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
	settings := "distinct heavy settings"
	if lt.light {
		settings = "the preset's settings"
	}
	fmt.Fprintf(stdout, "opened %d streams with %s in %s\n", n, settings, time.Since(t0).Round(time.Millisecond))
	lt.report(stdout, "after opening")
	var wg sync.WaitGroup
	end := time.Now().Add(d)
	var hwg sync.WaitGroup
	for i := range lt.heavy {
		hwg.Go(func() { lt.loopHeavy(ctx, end, i) })
	}
	for i := range movers {
		wg.Go(func() { lt.move(i, tabs[i], end, every) })
	}
	wg.Wait()
	hwg.Wait()
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
	sig := fmt.Sprintf(`{"tab":%q,"preset":"search-cache","cfg":{"hosts":50,"interval":1,"rps":3000,"max_ejection_percent":%d,"consecutive_5xx":%d}}`, lt.tab(i), 1+i%100, 2+i/100)
	if lt.light {
		sig = fmt.Sprintf(`{"tab":%q,"preset":"search-cache"}`, lt.tab(i))
	}
	req := lt.post(ctx, "/lab/stream", sig)
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

// read passes on every cursor the stream shows, until it ends. It reads
// in small pieces and keeps no line: a redraw's chart line is hundreds of
// kilobytes, and a client holding one per tab would be most of the
// process.
func (ts *tabStream) read(body io.ReadCloser) {
	defer close(ts.done)
	defer body.Close()
	zr, err := gzip.NewReader(body)
	if err != nil {
		return
	}
	br := bufio.NewReaderSize(zr, 4096)
	const key = `"cursor":`
	matched, c, inNum := 0, 0, false
	for {
		b, err := br.ReadByte()
		if err != nil {
			return
		}
		switch {
		case inNum && b >= '0' && b <= '9':
			c = 10*c + int(b-'0')
		case inNum:
			inNum = false
			select {
			case ts.seen <- c:
			default: // nobody waits: a frame of an idle tab
			}
		case b == key[matched]:
			matched++
			if matched == len(key) {
				matched, c, inNum = 0, 0, true
			}
		default:
			matched = 0
			if b == key[0] {
				matched = 1
			}
		}
	}
}

// move scrubs tab i back and forth until end, timing each command to
// the stream's redraw.
func (lt *loadTest) move(i int, ts *tabStream, end time.Time, every time.Duration) {
	for k := 0; time.Now().Before(end); k++ {
		c := 5 + k%50
		if lt.light {
			c = 1 + k%29 // search-cache has 30 frames
		}
		drain(ts.seen)
		start := time.Now()
		body := fmt.Sprintf(`{"tab":%q,"cursor":%d}`, lt.tab(i), c)
		res, err := http.DefaultClient.Do(lt.post(context.Background(), "/lab/cmd/scrub", body))
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

// report prints the server's RSS and heap, and the clients' (this
// process) after a collection.
func (lt *loadTest) report(w io.Writer, when string) {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	rss, heap := lt.server.memory()
	fmt.Fprintf(w, "%s: server RSS %s, heap %s; clients RSS %s, live heap %.1f MiB\n", when, rss, heap, rssOf("/proc/self/status"), float64(m.HeapAlloc)/(1<<20))
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
	lt.heavySummary(w)
}

// rssOf is a process's resident set size from its /proc status file
// (Linux); "?" elsewhere.
func rssOf(status string) string {
	b, err := os.ReadFile(status)
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
