// Package tabid is a tab's id and the browser it belongs to (issue 34: a
// tab id was a bearer token; a third party that knew one re-roomed the
// tab and refused its owner's every move).
//
// A browser is known by its olab_browser cookie: random, HttpOnly,
// SameSite=Lax (Secure over https), given by the first page of the lab
// it loads (Ensure). A tab id is issued for a browser: a nonce and a
// binding, a digest of the browser's cookie and the nonce. A stream or
// command carrying a tab id is served only with the cookie the id was
// issued for (Check): the id alone proves nothing, and since the binding
// is in the id itself, every replica checks it without asking the others
// or remembering anything, and a session rebuilt after an eviction or a
// restart is as bound as the first one was. The binding needs no secret:
// finding a cookie whose digest with the nonce is the binding is a
// preimage of 128 bits; and a script may issue ids for a cookie of its
// own (For), which moves only its own tabs.
//
// Two first pages of a browser loaded at once (a restored session after
// its cookies were cleared) each set a new identity, and the browser keeps
// the last: the other page's stream is refused, and the page says to load
// it again (web/templates/stream.go), which gives it a tab of the
// identity the browser kept.
package tabid

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"outlierlab/web/httperr"
)

// Cookie names the browser's identity cookie.
const Cookie = "olab_browser"

// A browser's identity is BrowserLen hex digits (128 random bits); an id's
// nonce is MinNonce to MaxNonce letters, digits, - or _ (a page's: 32 hex
// digits), and its binding bindingLen hex digits after it.
const (
	BrowserLen = 32
	MinNonce   = 16
	MaxNonce   = 32
	bindingLen = 32
)

// cookieAge is how long a browser keeps its identity without loading a
// page of the lab (each page load sets it again).
const cookieAge = 30 * 24 * time.Hour

// Browser is the request's browser identity: its olab_browser cookie when
// it holds one the lab could have issued, else "".
func Browser(r *http.Request) string {
	c, err := r.Cookie(Cookie)
	if err != nil || !isHex(c.Value, BrowserLen) {
		return ""
	}
	return c.Value
}

// Ensure is the request's browser identity, a new one (set on w) for a
// browser without one; secure marks the cookie Secure (the browser came
// over https). Call it before the answer's header is written: a page
// issues its tab's id for the browser it is rendered for.
func Ensure(w http.ResponseWriter, r *http.Request, secure bool) string {
	b := Browser(r)
	if b == "" {
		b = NewBrowser()
	}
	// Set again at each page: the identity lasts cookieAge from the last
	// page, not from the first.
	http.SetCookie(w, &http.Cookie{Name: Cookie, Value: b, Path: "/", MaxAge: int(cookieAge.Seconds()),
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: secure})
	return b
}

// NewBrowser is a fresh browser identity (a cookie's value).
func NewBrowser() string { return randomHex(BrowserLen / 2) }

// New is a fresh tab id for browser.
func New(browser string) string { return For(browser, randomHex(MaxNonce/2)) }

// For is the tab id of nonce issued for browser: a script or a test that
// names its tabs issues them for a cookie of its own this way.
func For(browser, nonce string) string { return nonce + binding(browser, nonce) }

func binding(browser, nonce string) string {
	sum := sha256.Sum256([]byte("outlierlab tab of a browser v1\x00" + browser + "\x00" + nonce))
	return hex.EncodeToString(sum[:bindingLen/2])
}

// Check refuses a tab id that is not one (400, naming the form) or that
// was not issued for the request's browser (403, naming why): the
// cookie is missing, or it is another browser's.
func Check(r *http.Request, tab string) error {
	if err := CheckForm(tab); err != nil {
		return err
	}
	return Owned(tab, Browser(r))
}

// CheckForm refuses what is not a tab id the lab could have issued:
// nothing that could probe or bloat the sessions. A bad one is a
// malformed request: no page of the lab sends it.
func CheckForm(tab string) error {
	n := len(tab) - bindingLen
	if n < MinNonce || n > MaxNonce || strings.Trim(tab[:n], "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_") != "" || !isHex(tab[n:], bindingLen) {
		return httperr.WithKind(httperr.KindMalformed, &httperr.FieldError{Field: "tab", Msg: fmt.Sprintf(
			"%q is not a tab id (allowed %d–%d letters, digits, - or _, then %d lowercase hex digits: the id a page of the lab issued)", httperr.Truncate(tab, 80), MinNonce, MaxNonce, bindingLen)})
	}
	return nil
}

// ErrNotOwner is what Owned's refusals wrap.
var ErrNotOwner = errors.New("the tab is not this browser's")

// Owned refuses (403) a well-formed tab id not issued for browser ("":
// the request carried no identity cookie).
func Owned(tab, browser string) error {
	n := len(tab) - bindingLen
	if browser == "" {
		return httperr.WithKind(httperr.KindForbidden, &httperr.FieldError{Field: "tab", Msg: fmt.Sprintf(
			"%v: the request carries no %s cookie, and a tab is served only to the browser its page was loaded in (the lab needs cookies): load the page again", ErrNotOwner, Cookie)})
	}
	if n < 0 || subtle.ConstantTimeCompare([]byte(tab[n:]), []byte(binding(browser, tab[:n]))) != 1 {
		return httperr.WithKind(httperr.KindForbidden, &httperr.FieldError{Field: "tab", Msg: fmt.Sprintf(
			"%v: its id was issued to another browser (another %s cookie), and a tab id alone moves no tab: load the page again in this browser", ErrNotOwner, Cookie)})
	}
	return nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// isHex reports whether s is n lowercase hex digits.
func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
