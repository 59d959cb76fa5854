// Package guard is the middleware every request of the lab passes: a
// cross-site request refused, a body bounded, a page's security headers.
// The server puts it in front of every route; a feature's tests put it in
// front of theirs, so they meet what a visitor meets.
package guard

import (
	"net/http"
	"strings"

	"outlierlab/web/csp"
	"outlierlab/web/httperr"
)

// SameOrigin refuses state-changing requests (anything but GET, HEAD and
// OPTIONS) that a browser sent from another site: a page elsewhere must not
// move a tab's sliders or, with a room's key cookie, steer a workshop. The
// standard library's check is the one wanted: Sec-Fetch-Site must be
// same-origin or none when the browser sends it; otherwise Origin, when
// present, must name the request's own host. Requests with neither (curl,
// scripts) are not a browser acting for a visitor, and pass.
func SameOrigin() *http.CrossOriginProtection {
	p := http.NewCrossOriginProtection()
	p.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		site := r.Header.Get("Sec-Fetch-Site")
		from := "origin " + httperr.Truncate(r.Header.Get("Origin"), 80)
		if site != "" {
			from = "Sec-Fetch-Site: " + httperr.Truncate(site, 20)
		}
		httperr.Write(w, httperr.Errorf(httperr.KindForbidden, "cross-site request refused (%s): %s %s must come from a page of this lab (%s)",
			from, r.Method, httperr.Truncate(r.URL.Path, 80), httperr.Truncate(r.Host, 80)), httperr.KindForbidden)
	}))
	return p
}

// LimitBodies bounds every request's body: def, or the larger limit of
// the few routes that take an upload (by path). A body that says it is
// larger than def (Content-Length) is refused before a byte is read; one
// that does not say is cut at the limit by http.MaxBytesReader, whose error
// is answered 413 wherever a handler meets it (kindOf). An upload route
// answers its own too-large body (its page names the field), so it is only
// cut, never refused here. A handler may set a smaller limit of its own; it
// cannot read past this one.
func LimitBodies(def int64, uploads map[string]int64) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			limit, upload := uploads[r.URL.Path]
			if !upload {
				limit = def
			}
			if r.ContentLength > limit && !upload {
				// The connection is closed after the answer: the rest of
				// the body is not read to keep it alive.
				w.Header().Set("Connection", "close")
				httperr.Write(w, httperr.BodyTooLarge(limit), httperr.KindTooLarge)
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, limit)
			next.ServeHTTP(w, r)
		})
	}
}

// SecurityHeaders sets the policy of a page without a tab
// (csp.Policy); a tab's page replaces it with its nonce's. A script or a
// stylesheet under /static/ goes without it: a browser enforces a policy
// only on the document (or worker) it came with, so on the page's 15
// scripts and stylesheets it was 290 bytes each of header on the wire for
// nothing (issue 26's first-load budget). The icon, an SVG that opens as a
// document, keeps it.
func SecurityHeaders(next http.Handler) http.Handler {
	csp := csp.Policy("")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		if !subresource(r.URL.Path) {
			h.Set("Content-Security-Policy", csp)
		}
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		next.ServeHTTP(w, r)
	})
}

// subresource is a script or stylesheet the pages load, which no policy
// of its own governs.
func subresource(path string) bool {
	return strings.HasPrefix(path, "/static/") && (strings.HasSuffix(path, ".js") || strings.HasSuffix(path, ".css"))
}
