// Package csp is the lab's content security policy: the policy of a page,
// a tab's script nonce, and the only ways a stream runs script in the page
// (Script, Run), each carrying that nonce.
package csp

import (
	"crypto/sha256"
	"encoding/base64"
	"html"
	"net/http"

	"github.com/starfederation/datastar-go/datastar"
)

// The content security policy lets a page load and connect only to its
// own origin (the offline promise, kept by the browser too) and run only
// the lab's own script files: no inline <script>, no onerror= handler, so
// markup that ever got past the escaping cannot run. Two exceptions are
// needed and no more: Datastar compiles its data-* expressions with
// Function ('unsafe-eval'), and a tab's stream sends the scripts that draw
// its charts, which carry the tab's nonce. ECharts sets inline styles.
const cspRest = "style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; " +
	"font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'self'"

// Policy is the policy of a page; nonce is "" on a page
// without a tab (no stream sends it scripts).
func Policy(nonce string) string {
	src := "script-src 'self' 'unsafe-eval'"
	if nonce != "" {
		src += " 'nonce-" + nonce + "'"
	}
	return "default-src 'self'; " + src + "; " + cspRest
}

// Nonce is the nonce of a tab's scripts: the page names it in its
// policy, every stream and command of the tab sends it on its scripts.
// It is derived from the tab id rather than drawn per response so that a
// tab's stream on another replica (no sticky sessions) sends the same one
// with nothing shared between replicas. It is as secret as the tab id,
// which is the tab's bearer token already: markup injected into the page
// cannot know it.
func Nonce(tab string) string {
	sum := sha256.Sum256([]byte("outlierlab script nonce\x00" + tab))
	return base64.RawURLEncoding.EncodeToString(sum[:18])
}

// AllowTabScripts sets a tab page's policy: its scripts are the files and
// what its stream sends with Nonce(tab).
func AllowTabScripts(w http.ResponseWriter, tab string) {
	w.Header().Set("Content-Security-Policy", Policy(Nonce(tab)))
}

// Script runs js in a tab's page: a script element with the tab's
// nonce (Nonce), which Datastar's patch recreates attributes and all.
func Script(sse *datastar.ServerSentEventGenerator, nonce, js string) error {
	return sse.ExecuteScript(js, datastar.WithExecuteScriptAttributes(`nonce="`+nonce+`"`))
}

// Run runs a short Datastar expression in the page that made
// the request, for a response that has no tab to take a nonce from (a form
// post): an element whose data-init runs once, then removes it.
func Run(sse *datastar.ServerSentEventGenerator, expr string) error {
	return sse.PatchElements(`<div hidden data-init="`+html.EscapeString(expr+"; el.remove()")+`"></div>`,
		datastar.WithSelector("body"), datastar.WithModeAppend())
}
