package tabid

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"outlierlab/web/httperr"
)

// A tab id is served only with the cookie it was issued for: not with
// another browser's, not with none; a page's id is 64 characters, a
// named one its nonce and the binding; nothing else is an id.
func TestTabBelongsToItsBrowser(t *testing.T) {
	mine, theirs := NewBrowser(), NewBrowser()
	if mine == theirs || len(mine) != BrowserLen {
		t.Fatalf("browsers %q %q", mine, theirs)
	}
	tab := New(mine)
	if len(tab) != MaxNonce+bindingLen || New(mine) == tab {
		t.Fatalf("a page's tab id %q (a second: another)", tab)
	}
	for _, c := range []struct {
		name, tab, browser string
		status             int
		text               string
	}{
		{"its own browser", tab, mine, 0, ""},
		{"a named tab of its browser", For(mine, "follower-tab-00000000001"), mine, 0, ""},
		{"another browser", tab, theirs, 403, "tab: the tab is not this browser's: its id was issued to another browser (another olab_browser cookie)"},
		{"no cookie", tab, "", 403, "tab: the tab is not this browser's: the request carries no olab_browser cookie"},
		{"the nonce alone", tab[:MaxNonce], mine, 400, "is not a tab id"},
		// a binding changed: its last digit, whatever it was (a random tab may end in 0)
		{"a binding changed", tab[:len(tab)-1] + map[bool]string{true: "1", false: "0"}[strings.HasSuffix(tab, "0")], mine, 403, "issued to another browser"},
		{"another tab's binding on this nonce", tab[:MaxNonce] + New(theirs)[MaxNonce:], theirs, 403, "issued to another browser"},
		{"a nonce too short", For(mine, "short"), mine, 400, "allowed 16–32 letters"},
		{"a nonce with a dot", For(mine, "bad.nonce.000000000"), mine, 400, "is not a tab id"},
		{"upper-case binding", strings.ToUpper(tab), mine, 400, "is not a tab id"},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest("POST", "/lab/cmd/play", nil)
			if c.browser != "" {
				req.AddCookie(&http.Cookie{Name: Cookie, Value: c.browser})
			}
			err := Check(req, c.tab)
			if c.status == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || httperr.Status[httperr.KindOf(err, httperr.KindInternal)] != c.status || !strings.Contains(err.Error(), c.text) {
				t.Fatalf("%v (status %d), want %d with %q", err, httperr.Status[httperr.KindOf(err, httperr.KindInternal)], c.status, c.text)
			}
		})
	}
}

// A page's request without an identity gets a new one in a cookie that
// scripts cannot read and other sites' requests do not carry (Secure
// over https); one with an identity keeps it; a forged value is replaced.
func TestEnsure(t *testing.T) {
	for _, c := range []struct {
		name, sent string
		secure     bool
		keep       bool
	}{
		{"first page", "", false, false},
		{"over https", "", true, false},
		{"a browser that has one", "00112233445566778899aabbccddeeff", false, true},
		{"a forged value", "not-an-identity", false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest("GET", "/lab", nil)
			if c.sent != "" {
				req.AddCookie(&http.Cookie{Name: Cookie, Value: c.sent})
			}
			w := httptest.NewRecorder()
			b := Ensure(w, req, c.secure)
			if (b == c.sent) != c.keep || len(b) != BrowserLen {
				t.Fatalf("identity %q, sent %q", b, c.sent)
			}
			cs := w.Result().Cookies()
			if len(cs) != 1 {
				t.Fatalf("cookies set: %v", cs)
			}
			ck := cs[0]
			if ck.Name != Cookie || ck.Value != b || !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode || ck.Secure != c.secure || ck.Path != "/" || ck.MaxAge <= 0 {
				t.Fatalf("cookie %+v", ck)
			}
		})
	}
}
