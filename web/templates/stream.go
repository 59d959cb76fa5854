package templates

import "strings"

// The tab's stream reconnects after any end: a clean end (a replica that
// shuts down, a proxy's HTTP/1.0 close, a load balancer's idle timeout),
// an error status (a full or restarting server) or a broken connection.
// Datastar's own retry re-sends the signals of the first request, and does
// not retry a clean end (its retry:'auto'); so each attempt here is a new
// @post, which carries the page's signals as they are now (the cursor, the
// settings moved meanwhile) in its body: an @get's address would carry
// the tab's id into proxies' logs. The page's conn signal says how the
// stream is, and the page shows it (labStream): live once an event arrives,
// reconnecting while it waits to try again (backoff from ¼ s up to 5 s,
// jittered so fifty phones do not come back in step). The server sets it
// too: stale (a command found the stream's replica gone: reconnect now,
// web/lab/relay.go) and ended (the room is gone: no reconnect). A stream
// refused 403 is not tried again (refused): the page is not this
// browser's any more (its identity cookie changed, web/tabid) or lacks a
// room's key or identity, which only loading it again can give.

// streamOpen opens the tab's stream once, a @post: Datastar retries nothing by itself (the first network
// error ends the attempt), streamWatch does. A hidden tab's stream closes
// until the tab shows again, as an @get's does by default (a @post's
// stays open unless told).
func streamOpen(url string) string {
	return "@post('" + url + "', {retry: 'never', retryMaxCount: 1, openWhenHidden: false}).catch(() => 0)"
}

// streamWatch follows the stream element's fetch events: _inflight counts
// its requests under way (a new one aborts the old one, whose end then
// comes after the new one's start), _tries the attempts since the last
// event.
func streamWatch(url string) string {
	return strings.Join([]string{
		"if (evt.detail.el !== el) return",
		"const t = evt.detail.type",
		"if (t === 'started') { $_inflight++; return }",
		"if (t === 'error' && evt.detail.argsRaw.status === '403') { $conn = 'refused'; return }",
		"if (t.startsWith('datastar-patch')) { if ($conn !== 'live') { $conn = 'live'; $_tries = 0 } return }",
		"if (t !== 'finished' || --$_inflight > 0 || $conn === 'ended' || $conn === 'refused') return",
		"$conn = 'reconnecting'",
		"setTimeout(() => { if (!$_inflight && $conn !== 'ended') " + streamOpen(url) + " }, Math.min(5000, 250 * 2 ** $_tries++) * (0.5 + Math.random()))",
	}, "; ")
}

// streamStale reconnects at once when the server says the stream's
// replica is gone.
func streamStale(url string) string {
	return "$conn === 'stale' && ($conn = 'reconnecting', " + streamOpen(url) + ")"
}
