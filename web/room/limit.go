package room

import (
	"errors"
	"net/http"

	"outlierlab/web/httperr"
	"outlierlab/web/room/record"
)

// errTooManyGuesses: the address asked for too many codes that name no
// room lately.
var errTooManyGuesses = httperr.WithKind(httperr.KindTooMany, errors.New("too many requests for workshop codes that name no workshop from your address: try again in a minute"))

// admitCode refuses (errTooManyGuesses) a request of a room from an
// address out of guesses.
func (set *roomSet) admitCode(r *http.Request) error {
	if !set.guesses.Ready(set.clientAddr(r), set.s.lab.Now()) {
		return errTooManyGuesses
	}
	return nil
}

// missedCode counts a request for a code that names no room.
func (set *roomSet) missedCode(r *http.Request) {
	set.guesses.Allow(set.clientAddr(r), set.s.lab.Now())
}

// find is the room of code for a request, from this replica's hub or the
// bus, after admitCode; a code that names no room (errRoomNotFound)
// counts as a guess.
func (set *roomSet) find(r *http.Request, code string) (record.Record, error) {
	if err := set.admitCode(r); err != nil {
		return record.Record{}, err
	}
	rec, rev, err := set.lookup(r.Context(), code)
	if errors.Is(err, errRoomNotFound) {
		set.missedCode(r)
	}
	rec.Rev = rev
	return rec, err
}

func tooManyGuesses(w http.ResponseWriter) {
	w.Header().Set("Retry-After", "60")
	httperr.Write(w, errTooManyGuesses, httperr.KindTooMany)
}

// clientAddr is the address a request's limits count against
// (clientaddr.Proxies.Client: the peer, or the visitor behind a trusted
// proxy).
func (set *roomSet) clientAddr(r *http.Request) string { return set.s.lab.PeerAddr(r) }

// secure reports whether the browser reached the lab over https, directly
// or through a trusted proxy that says so.
func (set *roomSet) secure(r *http.Request) bool { return set.s.lab.Proxies.Secure(r) }

// origin is the lab's address as the browser sees it, for the join link.
func (set *roomSet) origin(r *http.Request) string {
	if set.secure(r) {
		return "https://" + set.s.lab.Proxies.Host(r)
	}
	return "http://" + set.s.lab.Proxies.Host(r)
}
