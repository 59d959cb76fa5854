package lab

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"outlierlab/web/internal/webtest"
	"outlierlab/web/tabid"
)

// Issue 34: a tab id was a bearer token. A third party that knew one (from
// a log, a proxy's, a shoulder) moved the tab's sliders and took its
// stream. Now a tab is served only to the browser whose page it was
// issued in: the victim's tab id, sent by another browser (a page of its
// own loaded, so with a cookie of its own) or by a script with no cookie,
// is refused, 403 naming why, for a command and for a stream alike, and
// the victim's session and stream are as they were; the victim's own
// commands still move it.
func TestTabIDAloneMovesNothing(t *testing.T) {
	t.Parallel()
	lab, ts := startTestServer(t)

	// The victim's page and stream (the tests' browser).
	res, err := webtest.Get(ts.URL + "/lab?preset=search-cache&t=60")
	if err != nil {
		t.Fatal(err)
	}
	sig := pageSignalsOf(t, webtest.Body(t, res))
	victim := pageTab(t, sig)
	if tabid.Owned(victim, webtest.Browser) != nil {
		t.Fatalf("the page's tab %q is not its browser's", victim)
	}
	events := webtest.OpenStream(t, ts.URL, sig)
	waitCursor(t, events, 6)
	sess := lab.Sessions.Get(victim)
	before := sess.snapshot(lab.Now())

	// The attacker: a browser of its own (its page gave it a cookie), and
	// a script without one.
	attacker := webtest.Client(t)
	if res, err := attacker.Get(ts.URL + "/lab"); err != nil || res.StatusCode != 200 {
		t.Fatalf("the attacker's page: %v", err)
	} else {
		res.Body.Close()
	}
	script := &http.Client{}
	for _, c := range []struct {
		who    string
		client *http.Client
		why    string
	}{
		{"another browser", attacker, "its id was issued to another browser"},
		{"a script without cookie", script, "the request carries no olab_browser cookie"},
	} {
		t.Run(c.who, func(t *testing.T) {
			for _, verb := range []string{"scrub", "set", "play", "preset"} {
				body := `{"tab":"` + victim + `","cursor":29,"seq":99,"cfg":{"max_ejection_percent":99},"preset":"burst"}`
				res, err := c.client.Post(ts.URL+"/lab/cmd/"+verb, "application/json", strings.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				if text := webtest.Body(t, res); res.StatusCode != http.StatusForbidden || !strings.HasPrefix(text, "tab: the tab is not this browser's") || !strings.Contains(text, c.why) {
					t.Errorf("%s with the victim's tab id: %d %q, want 403 naming the tab and %q", verb, res.StatusCode, text, c.why)
				}
			}
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL+"/lab/stream", strings.NewReader(`{"tab":"`+victim+`","preset":"burst","seq":99,"cfg":{"max_ejection_percent":99}}`))
			req.Header.Set("Content-Type", "application/json")
			res, err := c.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			if text := webtest.Body(t, res); res.StatusCode != http.StatusForbidden || !strings.Contains(text, c.why) {
				t.Errorf("a stream of the victim's tab: %d %q, want 403 naming %q", res.StatusCode, text, c.why)
			}
		})
	}

	// Nothing of the victim's changed: its session is the same one, at
	// the same settings, cursor and generation, with its one stream and no
	// notice; its stream was neither replaced nor redrawn.
	if lab.Sessions.Get(victim) != sess {
		t.Fatal("the victim's session was replaced")
	}
	after := sess.snapshot(lab.Now())
	if after.gen != before.gen || after.cursor != before.cursor || after.run != before.run || after.notice != "" || after.playing || sess.Streams() != 1 {
		t.Errorf("the victim's session changed: gen %d→%d, cursor %d→%d, run same %v, notice %q, playing %v, %d streams",
			before.gen, after.gen, before.cursor, after.cursor, after.run == before.run, after.notice, after.playing, sess.Streams())
	}
	// Its own browser still moves it, on the same stream.
	res, err = webtest.Post(ts.URL+"/lab/cmd/scrub", `{"tab":"`+victim+`","cursor":3}`)
	if err != nil || res.StatusCode != http.StatusNoContent {
		t.Fatalf("the victim's own scrub: %v %v", err, res.Status)
	}
	res.Body.Close()
	waitCursor(t, events, 3)
}

// A page issues its tab's id for the browser it is rendered for: the
// identity its cookie holds, or a new one it sets (HttpOnly, SameSite=Lax;
// Secure behind a trusted proxy that says https), never one a request
// names in its address or signals. A lesson page does as the lab's.
func TestPageIssuesTabForItsBrowser(t *testing.T) {
	t.Parallel()
	lab := newTestServer(t)
	h := lab.Handler()
	for _, path := range []string{"/lab?preset=search-cache", "/lessons/cap"} {
		res := webtest.Do(t, h, "GET", path, "")
		if tab := pageTab(t, pageSignalsOf(t, webtest.Body(t, res))); tabid.Owned(tab, webtest.Browser) != nil || len(res.Cookies()) != 1 || res.Cookies()[0].Value != webtest.Browser {
			t.Errorf("%s with the tests' browser: tab %s, cookies %v", path, tab, res.Cookies())
		}
		res = webtest.Do(t, h, "GET", path, "", "Cookie", "")
		cs := res.Cookies()
		if len(cs) != 1 || cs[0].Name != tabid.Cookie || !cs[0].HttpOnly || cs[0].SameSite != http.SameSiteLaxMode || cs[0].Secure {
			t.Fatalf("%s without an identity: cookies %v", path, cs)
		}
		if tab := pageTab(t, pageSignalsOf(t, webtest.Body(t, res))); tabid.Owned(tab, cs[0].Value) != nil || tabid.Owned(tab, webtest.Browser) == nil {
			t.Errorf("%s: the new browser's page has tab %s, not its own", path, tab)
		}
	}
}
