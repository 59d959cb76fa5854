package lab

import (
	"context"
	"errors"
	"net/http"
	"path"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/starfederation/datastar-go/datastar"

	"outlierlab/web/tabrelay"
)

// Any replica takes any request of a tab (ARCHITECTURE.md, "A tab on many
// replicas"): a command that reaches a replica without the tab's stream is
// forwarded over the bus to the one that holds it (tabrelay), which
// applies it and wakes the stream; its answer is this request's.

// SetRelay gives the lab the bus's tab relay (once, before it serves).
func (s *Lab) SetRelay(r *tabrelay.Relay) { s.relay = r }

// relayOutcome is what forward did with a command.
type relayOutcome uint8

const (
	// serveHere: the tab's stream is here, or there is no relay, or the
	// request came over it: the command is applied here as it is.
	serveHere relayOutcome = iota
	// answered: the holder applied it and its answer was written.
	answered
	// orphaned: the page believes its stream is live but no replica holds
	// it (its replica is gone, or the bus): the command is applied here
	// and the page is told to reconnect its stream, never a silent 204.
	orphaned
)

// forward sends a command of tab (checked: readTab), whose page says its
// stream is conn, to the replica that holds the tab's stream, when that
// is another.
func (s *Lab) forward(w http.ResponseWriter, r *http.Request, tab, conn string, body []byte) relayOutcome {
	if s.relay == nil || tabrelay.Forwarded(r) || s.streamsHere(tab) {
		return serveHere
	}
	err := s.relay.Forward(w, r, tab, body)
	switch {
	case err == nil:
		return answered
	case errors.Is(err, tabrelay.ErrNoHolder) && conn == ConnLive:
		return orphaned
	case errors.Is(err, tabrelay.ErrNoHolder):
		return serveHere // a tab with no stream yet (or a script's): its session is made here
	}
	// The holder did not answer in time (the bus failing under it): the
	// command is applied here too (set, play, pause, scrub are the same
	// applied twice), and the page reconnects to a replica that answers.
	s.Log.Warn("tab relay: forward", "err", err)
	return orphaned
}

// ForwardCommand sends a command of tab (its body read as body) that is
// not the lab's own (a recording player's) to the replica that holds the
// tab's stream, when that is another: true when that replica answered.
// The caller has checked the tab is the request's browser's (tabid.Check);
// the holder checks again.
func (s *Lab) ForwardCommand(w http.ResponseWriter, r *http.Request, tab string, body []byte) bool {
	if s.relay == nil || tabrelay.Forwarded(r) || s.streamsHere(tab) {
		return false
	}
	return s.relay.Forward(w, r, tab, body) == nil
}

// SetForwardHandler has the tab's holder serve forwarded requests with h,
// the server's router (the lab's commands and the players' alike), in
// place of the lab's own command handler.
func (s *Lab) SetForwardHandler(h http.Handler) { s.forwardTo = h }

// streamsHere reports whether a stream of tab is open on this replica.
func (s *Lab) streamsHere(tab string) bool {
	sess := s.Sessions.Get(tab)
	if sess == nil {
		return false
	}
	return sess.Streams() > 0
}

// holdTab answers the tab's commands forwarded by other replicas while its
// stream is open here.
func (s *Lab) holdTab(tab string) (release func()) {
	if s.relay == nil {
		return func() {}
	}
	if s.forwardTo != nil {
		return s.relay.Hold(tab, s.forwardTo)
	}
	return s.relay.Hold(tab, http.HandlerFunc(s.serveForwarded))
}

// serveForwarded serves a command another replica forwarded: the route's
// verb from its path, as the router would have found it.
func (s *Lab) serveForwarded(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, "/lab/cmd/") {
		http.NotFound(w, r)
		return
	}
	rctx := chi.NewRouteContext()
	rctx.URLParams.Add("verb", path.Base(r.URL.Path))
	s.command(w, r.WithContext(context.WithValue(r.Context(), chi.RouteCtxKey, rctx)))
}

// The page's conn signal: how its stream is (the page sets it, from
// Datastar's fetch events; the server sets stale and ended).
const (
	ConnLive  = "live"
	ConnStale = "stale" // reconnect now: the stream's replica is gone
	ConnEnded = "ended" // the stream ended for good (its room is gone): no reconnect
)

// tellReconnect answers a command with the page's order to reconnect its
// stream at once.
func tellReconnect(w http.ResponseWriter, r *http.Request) {
	sse := datastar.NewSSE(w, r)
	_ = sse.MarshalAndPatchSignals(map[string]string{"conn": ConnStale})
}
