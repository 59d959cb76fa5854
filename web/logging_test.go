package web

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"outlierlab/web/internal/roomtest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Issue 34, item 3: the request log said "complete" for answers that never
// arrived. An answer small enough to sit in the connection's buffer is
// written when the handler returns, after the log line: past the write
// deadline it is never sent, yet every write the handler made succeeded.
// A handler that aborts (panic(http.ErrAbortHandler): a stream broken on
// purpose, or ended at shutdown) was logged as complete too.
func TestLogOutcomeOfAnswersNeverSent(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var logged bytes.Buffer
	lab := newTestServer(t)
	lab.lab.Log = slog.New(slog.NewTextHandler(lockedWriter{&mu, &logged}, nil))
	h := lab.observe(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/late":
			// As a page made past the server's WriteTimeout: the deadline
			// has passed, the small answer is buffered, never sent.
			_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(-time.Second))
			_, _ = io.WriteString(w, "a small answer")
		case "/abort":
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			_, _ = io.WriteString(w, "event: x\n\n")
			panic(http.ErrAbortHandler)
		case "/ok":
			_, _ = io.WriteString(w, "fine")
		}
	}))
	ts := httptest.NewServer(h)
	defer ts.Close()
	for _, path := range []string{"/late", "/abort", "/ok"} {
		res, err := http.Get(ts.URL + path)
		got := "no answer: " + errText(err)
		if err == nil {
			b, rerr := io.ReadAll(res.Body)
			res.Body.Close()
			got = res.Status + " " + string(b) + " " + errText(rerr)
		}
		t.Logf("%s: the client got %s", path, got)
		roomtest.WaitUntil(t, path+"'s log line", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return strings.Contains(logged.String(), "path="+path+" ")
		})
	}
	mu.Lock()
	lines := strings.Split(strings.TrimSpace(logged.String()), "\n")
	mu.Unlock()
	for _, want := range []struct{ path, outcome string }{
		{"/late", `outcome="write failed"`}, {"/abort", "outcome=aborted"}, {"/ok", "outcome=complete"},
	} {
		found := false
		for _, l := range lines {
			if strings.Contains(l, "path="+want.path+" ") {
				found = true
				if !strings.Contains(l, want.outcome) {
					t.Errorf("%s's log line: %s\nwant %s", want.path, l, want.outcome)
				}
			}
		}
		if !found {
			t.Errorf("no log line for %s", want.path)
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
