package csp

import (
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/starfederation/datastar-go/datastar"
)

// A page's policy lets it load and connect only to its own origin and run
// only the lab's files, plus, on a tab's page, the scripts carrying its
// tab's nonce; never inline script without it.
func TestPolicy(t *testing.T) {
	for _, tt := range []struct {
		nonce     string
		scriptSrc string
	}{
		{"", "script-src 'self' 'unsafe-eval'"},
		{"abc_-123", "script-src 'self' 'unsafe-eval' 'nonce-abc_-123'"},
	} {
		p := Policy(tt.nonce)
		directives := map[string]string{}
		for _, d := range strings.Split(p, "; ") {
			name, _, _ := strings.Cut(d, " ")
			if _, dup := directives[name]; dup {
				t.Errorf("%q: %s twice", p, name)
			}
			directives[name] = d
		}
		if got := directives["script-src"]; got != tt.scriptSrc {
			t.Errorf("nonce %q: %q, want %q", tt.nonce, got, tt.scriptSrc)
		}
		for name, want := range map[string]string{
			"default-src": "default-src 'self'", "connect-src": "connect-src 'self'",
			"object-src": "object-src 'none'", "base-uri": "base-uri 'none'", "frame-ancestors": "frame-ancestors 'self'",
		} {
			if directives[name] != want {
				t.Errorf("nonce %q: %s is %q, want %q", tt.nonce, name, directives[name], want)
			}
		}
		if strings.Contains(directives["script-src"], "unsafe-inline") || strings.Contains(p, "http") {
			t.Errorf("nonce %q: a policy that lets in inline script or another origin: %s", tt.nonce, p)
		}
	}
}

// A tab's nonce is the same for the tab on any replica, another tab's is
// another, and it is a CSP nonce's form (base64url, 24 characters).
func TestNonce(t *testing.T) {
	form := regexp.MustCompile(`^[A-Za-z0-9_-]{24}$`)
	seen := map[string]string{}
	for _, tab := range []string{"a", "b", "0123456789abcdef0123", strings.Repeat("x", 200)} {
		n := Nonce(tab)
		if !form.MatchString(n) {
			t.Errorf("Nonce(%q) = %q: not 24 base64url characters", tab, n)
		}
		if Nonce(tab) != n {
			t.Errorf("Nonce(%q) changes between calls", tab)
		}
		if other, ok := seen[n]; ok {
			t.Errorf("tabs %q and %q share the nonce %q", other, tab, n)
		}
		seen[n] = tab
	}
	w := httptest.NewRecorder()
	AllowTabScripts(w, "a")
	if got, want := w.Header().Get("Content-Security-Policy"), Policy(Nonce("a")); got != want {
		t.Errorf("AllowTabScripts: %q, want %q", got, want)
	}
}

// The two ways a stream runs script in a page: a script element with the
// tab's nonce, or (no tab) an element whose data-init runs the
// expression, escaped, then removes itself.
func TestScriptAndRun(t *testing.T) {
	for _, tt := range []struct {
		name string
		send func(*datastar.ServerSentEventGenerator) error
		want []string
	}{
		{"script", func(sse *datastar.ServerSentEventGenerator) error {
			return Script(sse, "N0nce", `applyCharts({"a":1})`)
		}, []string{"event: datastar-patch-elements", `nonce="N0nce"`, `applyCharts({"a":1})`, "<script"}},
		{"run", func(sse *datastar.ServerSentEventGenerator) error {
			return Run(sse, `location.assign("/r/<&>")`)
		}, []string{"event: datastar-patch-elements", "data: selector body", "data: mode append",
			`<div hidden data-init="location.assign(&#34;/r/&lt;&amp;&gt;&#34;); el.remove()"></div>`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			if err := tt.send(datastar.NewSSE(w, httptest.NewRequest("POST", "/", nil))); err != nil {
				t.Fatal(err)
			}
			out := w.Body.String()
			for _, want := range tt.want {
				if !strings.Contains(out, want) {
					t.Errorf("the event lacks %s:\n%s", want, out)
				}
			}
		})
	}
}
