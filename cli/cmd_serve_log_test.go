package cli

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// -log-format json: every line serve writes, from the first to "stopped",
// is one JSON object on stderr and stdout has nothing; a request's line
// has its duration in milliseconds as a number and the client's address
// as the limits count it (behind a trusted proxy, the address it
// forwarded), the key of a 429.
func TestServeJSONLog(t *testing.T) {
	var stdout, logs syncBuffer
	func() {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		cfg, err := parseServe([]string{"-addr", "127.0.0.1:0", "-data-dir", t.TempDir(), "-log-format", "json",
			"-trusted-proxies", "127.0.0.1", "-tabs-per-minute", "1"}, io.Discard, func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		ready := make(chan serving, 1)
		done := make(chan error, 1)
		go func() { done <- serve(ctx, cfg, &stdout, &logs, ready) }()
		base := "http://" + (<-ready).HTTP
		codes := []int{}
		for _, tab := range []string{testTab("jsonlogtab0000000001"), testTab("jsonlogtab0000000002")} {
			req, _ := http.NewRequest("POST", base+"/lab/cmd/pause", strings.NewReader(`{"tab":"`+tab+`"}`))
			req.Header.Set("X-Forwarded-For", "203.0.113.7")
			req.AddCookie(browserCookie())
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			codes = append(codes, res.StatusCode)
		}
		if codes[1] != http.StatusTooManyRequests {
			t.Errorf("a second new tab at -tabs-per-minute 1: %v, want a 429", codes)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}()
	if stdout.String() != "" {
		t.Errorf("stdout with -log-format json: %q", stdout.String())
	}
	lines := jsonLines(t, logs.String())
	msgs := []string{}
	var limited map[string]any
	for _, l := range lines {
		msgs = append(msgs, l["msg"].(string))
		if l["msg"] == "request" && l["status"] == float64(429) {
			limited = l
		}
		if _, ok := l["duration"]; ok {
			t.Errorf("a duration without its unit: %v", l)
		}
	}
	if msgs[0] != "outlierlab starting" || msgs[len(msgs)-1] != "stopped" || !strings.Contains(strings.Join(msgs, "|"), "|serving the lab|") {
		t.Errorf("the log's lines: %q", msgs)
	}
	if limited == nil {
		t.Fatalf("no request line for the 429:\n%s", logs.String())
	}
	if d, ok := limited["duration_ms"].(float64); !ok || d < 0 || limited["client"] != "203.0.113.7" || limited["path"] != "/lab/cmd/pause" {
		t.Errorf("the 429's line: %v", limited)
	}
}

// A -nats-url where nothing listens is said at once, by name, not after
// a JetStream call times out: by the bus itself (nats.go's error on the
// first connection), in serve's log.
func TestServeNATSUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "nats://" + ln.Addr().String()
	ln.Close() // nothing listens there now
	var logs syncBuffer
	start := time.Now()
	serveIn(t, io.Discard, &logs, "-log-format", "json", "-nats-url", url)
	for !strings.Contains(logs.String(), "cannot connect to NATS") {
		if time.Since(start) > 4*time.Second {
			t.Fatalf("nothing said of %s within 4 s:\n%s", url, logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, l := range jsonLines(t, logs.String()) {
		if strings.Contains(l["msg"].(string), "cannot connect to NATS") {
			if e, _ := l["err"].(string); l["nats_url"] != url || !strings.Contains(e, "refused") {
				t.Errorf("the line does not name the server and why: %v", l)
			}
		}
	}
}
