package lab

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"outlierlab/web/clientaddr"
	"outlierlab/web/internal/webtest"
)

// A tab has one stream (issue 34: 4 000 streams of one tab id took every
// slot of the server): each new stream of the tab ends the one before, so
// twenty opened one after another leave one open.
func TestStreamOnePerTab(t *testing.T) {
	t.Parallel()
	lab, ts := startTestServer(t)
	sig := `{"tab":"` + webtest.Tab + `","preset":"search-cache"}`
	var streams []<-chan webtest.Event
	for range 20 {
		ev := webtest.OpenStream(t, ts.URL, sig)
		webtest.NextCharts(t, ev)
		streams = append(streams, ev)
	}
	for _, ev := range streams[:19] {
		for range ev { // drained: the stream ended
		}
	}
	if n := lab.Sessions.Get(webtest.Tab).Streams(); n != 1 {
		t.Errorf("%d streams of the tab open, want 1", n)
	}
	if n := lab.openStreams.Load(); n != 1 {
		t.Errorf("%d stream slots taken, want 1", n)
	}
}

// One address holds at most StreamsPerAddress streams (429 past it,
// naming the limit); another address still gets one (issue 34: 4 000
// streams from one address left every other visitor a 503).
func TestStreamsPerAddress(t *testing.T) {
	t.Parallel()
	s, err := newServer(LabOptions{StreamsPerAddress: 5, Proxies: clientaddr.Proxies{Peer: true}})
	if err != nil {
		t.Fatal(err)
	}
	ts := webtest.Serve(t, s)
	open := func(i int, from string) *http.Response {
		t.Helper()
		sig := fmt.Sprintf(`{"tab":%q,"preset":"search-cache"}`, webtest.TabOf(fmt.Sprintf("addr-test-tab-%010d", i)))
		ctx, cancel := context.WithCancel(t.Context())
		t.Cleanup(cancel)
		req := webtest.StreamRequest(ctx, ts.URL, "/lab/stream", sig)
		req.Header.Set("X-Forwarded-For", from)
		res, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for i := range 5 {
		if res := open(i, "198.51.100.7"); res.StatusCode != 200 {
			t.Fatalf("stream %d of the address: %d", i+1, res.StatusCode)
		}
	}
	res := open(5, "198.51.100.7")
	body := webtest.Body(t, res)
	if res.StatusCode != 429 || res.Header.Get("Retry-After") == "" || !strings.Contains(body, "from your address") || !strings.Contains(body, "-streams-per-address is 5") {
		t.Errorf("the 6th stream of the address: %d %q", res.StatusCode, body)
	}
	if res := open(6, "203.0.113.9"); res.StatusCode != 200 {
		t.Errorf("another address's stream: %d", res.StatusCode)
	}
}
