// Package addrlimit rate-limits by client address: new tabs, commands,
// guesses at workshop codes, a room's streams per address.
package addrlimit

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// addrLimiter rate-limits by client address: a token bucket per address,
// forgotten some minutes after its last use, the map bounded.
type Limiter struct {
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

func New(perMinute, burst int) *Limiter {
	return &Limiter{every: rate.Limit(float64(perMinute) / 60), burst: burst, by: map[string]*addrBucket{}}
}

// allow takes a token from addr's bucket, if there is one.
func (l *Limiter) Allow(addr string, now time.Time) bool {
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
func (l *Limiter) Ready(addr string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.by[addr]
	return b == nil || b.lim.TokensAt(now) >= 1
}

// prune forgets the addresses unused for addrForget, or all of them if
// that is not enough (a flood from as many addresses gains little: each
// new one starts with one burst).
func (l *Limiter) prune(now time.Time) {
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
