package web

import (
	"context"
	"net/http"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"outlierlab/web/internal/webtest"
	"outlierlab/web/tabid"
)

// A page whose browser identity changed under it (cookies cleared, two
// first pages at once racing for the cookie) has its stream refused (403,
// web/tabid): it stops trying, and says the page must be loaded again,
// rather than "Reconnecting…" for ever. The page's stream is made to
// reconnect by another stream of its tab, from its old cookie.
func TestBrowserTabRefused(t *testing.T) {
	b := startBrowser(t, 1000, 700)
	b.Step("open /lab", chromedp.Navigate(b.URL+"/lab?preset=search-cache"), chromedp.WaitVisible(chromedp.CSS("#chart-lanes canvas")))
	b.Poll("the stream live", `document.getElementById('stream').dataset.conn === 'live'`)
	tab := b.Eval(`JSON.parse(document.getElementById('lab').getAttribute('data-signals')).tab`)
	var old string
	b.Step("swap the browser's identity", func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		got, err := cdp.Call(ctx, tg, network.GetCookies, network.GetCookiesParams{URLs: []string{b.URL}})
		if err != nil {
			return chromedp.Void{}, err
		}
		for _, c := range got.Cookies {
			if c.Name == tabid.Cookie {
				old = c.Value
			}
		}
		httpOnly := true
		_, err = cdp.Call(ctx, tg, network.SetCookie, network.SetCookieParams{Name: tabid.Cookie, Value: tabid.NewBrowser(), URL: b.URL, Path: "/", HTTPOnly: &httpOnly})
		return chromedp.Void{}, err
	})
	if tabid.Owned(tab, old) != nil {
		t.Fatalf("the page's tab %q is not its browser's (%q)", tab, old)
	}
	// Another stream of the tab, from the old identity: the page's ends,
	// and it reconnects with the new one.
	res, err := http.DefaultClient.Do(webtest.StreamRequest(t.Context(), b.URL, "/lab/stream", `{"tab":"`+tab+`","preset":"search-cache"}`, &http.Cookie{Name: tabid.Cookie, Value: old}))
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("the tab's stream from its own cookie: %v %v", err, res)
	}
	t.Cleanup(func() { res.Body.Close() })
	b.Poll("the page's stream refused", `document.getElementById('stream').dataset.conn === 'refused'`)
	b.Poll("the page says so and links itself", `[...document.querySelectorAll('.conn-status')].some(p => p.offsetParent !== null && p.textContent.includes('Load the page again') && p.querySelector('a[href=""]'))`)
	if got := b.Eval(`String([...document.querySelectorAll('.conn-status')].filter(p => p.offsetParent !== null).length)`); got != "1" {
		t.Errorf("%s status lines shown, want the refusal alone (not Reconnecting)", got)
	}
}
