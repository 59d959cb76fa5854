package web

import (
	"errors"
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"outlierlab/web/httperr"
)

// addrLimiter rate-limits by client address: a token bucket per address,
// forgotten some minutes after its last use, the map bounded.
type addrLimiter struct {
	mu    sync.Mutex
	every rate.Limit
	burst int
	by    map[string]*addrBucket
}

type addrBucket struct {
	lim  *rate.Limiter
	seen time.Time
}

// maxLimitedAddrs bounds the addresses remembered; addrForget is how long
// an unused one is kept (long enough for its bucket to refill).
const (
	maxLimitedAddrs = 10000
	addrForget      = 10 * time.Minute
)

func newAddrLimiter(perMinute, burst int) *addrLimiter {
	return &addrLimiter{every: rate.Limit(float64(perMinute) / 60), burst: burst, by: map[string]*addrBucket{}}
}

// allow takes a token from addr's bucket, if there is one.
func (l *addrLimiter) allow(addr string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.by[addr]
	if b == nil {
		if len(l.by) >= maxLimitedAddrs {
			l.prune(now)
		}
		b = &addrBucket{lim: rate.NewLimiter(l.every, l.burst)}
		l.by[addr] = b
	}
	b.seen = now
	return b.lim.AllowN(now, 1)
}

// ready reports whether addr's bucket has a token, taking none.
func (l *addrLimiter) ready(addr string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.by[addr]
	return b == nil || b.lim.TokensAt(now) >= 1
}

// prune forgets the addresses unused for addrForget, or all of them if
// that is not enough (a flood from as many addresses gains little: each
// new one starts with one burst).
func (l *addrLimiter) prune(now time.Time) {
	for a, b := range l.by {
		if now.Sub(b.seen) > addrForget {
			delete(l.by, a)
		}
	}
	if len(l.by) >= maxLimitedAddrs {
		clear(l.by)
	}
}

// Guessing codes (issue 19, defect 7). Room pages were limited, the room
// API was not, and its 404 against 200, 400 or 403 told which codes are
// live: one connection found one of 500 rooms among 30^6 codes in about
// 750 s. Now every request of a room (its pages, its API, a stream or a
// command that names it) whose code is no room takes a token from the
// address's guesses bucket (JoinsPerMinute, JoinBurst), and while that is
// empty every request of a room from the address is refused (429) before
// the code is looked up, live or not: the refusal tells nothing, and the
// guesses go at a minute's rate. A class makes no such requests, so its
// bucket stays full; someone guessing behind the class's NAT slows the
// class's room API for a minute (as they could its page loads already).

// errTooManyGuesses: the address asked for too many codes that name no
// room lately.
var errTooManyGuesses = httperr.WithKind(httperr.KindTooMany, errors.New("too many requests for workshop codes that name no workshop from your address: try again in a minute"))

// admitCode refuses (errTooManyGuesses) a request of a room from an
// address out of guesses.
func (set *roomSet) admitCode(r *http.Request) error {
	if !set.guesses.ready(set.clientAddr(r), set.s.now()) {
		return errTooManyGuesses
	}
	return nil
}

// missedCode counts a request for a code that names no room.
func (set *roomSet) missedCode(r *http.Request) {
	set.guesses.allow(set.clientAddr(r), set.s.now())
}

// find is the room of code for a request, from this replica's hub or the
// bus, after admitCode; a code that names no room (errRoomNotFound)
// counts as a guess.
func (set *roomSet) find(r *http.Request, code string) (roomRecord, error) {
	if err := set.admitCode(r); err != nil {
		return roomRecord{}, err
	}
	rec, _, err := set.lookup(r.Context(), code)
	if errors.Is(err, errRoomNotFound) {
		set.missedCode(r)
	}
	return rec, err
}

func tooManyGuesses(w http.ResponseWriter) {
	w.Header().Set("Retry-After", "60")
	httperr.Plain(w, http.StatusTooManyRequests, errTooManyGuesses.Error())
}

// clientAddr is the address a request's limits count against
// (clientaddr.Proxies.Client: the peer, or the visitor behind a trusted
// proxy).
func (set *roomSet) clientAddr(r *http.Request) string { return set.s.peerAddr(r) }

// secure reports whether the browser reached the lab over https, directly
// or through a trusted proxy that says so.
func (set *roomSet) secure(r *http.Request) bool { return set.s.proxies.Secure(r) }

// origin is the lab's address as the browser sees it, for the join link.
func (set *roomSet) origin(r *http.Request) string {
	if set.secure(r) {
		return "https://" + set.s.proxies.Host(r)
	}
	return "http://" + set.s.proxies.Host(r)
}
