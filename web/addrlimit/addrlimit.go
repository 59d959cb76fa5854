// Package addrlimit rate-limits by client address: new tabs, commands,
// guesses at workshop codes, a room's streams per address.
package addrlimit

import (
	"net/netip"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Limiter rate-limits by client address: a token bucket per address,
// forgotten once it has refilled, the map bounded.
type Limiter struct {
	mu    sync.Mutex
	every rate.Limit
	burst int
	by    map[string]*addrBucket
}

type addrBucket struct {
	lim *rate.Limiter
}

// maxLimitedAddrs bounds the addresses remembered.
const maxLimitedAddrs = 10000

// New is a limiter of burst at once, then perMinute a minute.
func New(perMinute, burst int) *Limiter { return NewPer(perMinute, time.Minute, burst) }

// NewPer is a limiter of burst at once, then n every per (new rooms: a
// few an hour).
func NewPer(n int, per time.Duration, burst int) *Limiter {
	return &Limiter{every: rate.Limit(float64(n) / per.Seconds()), burst: burst, by: map[string]*addrBucket{}}
}

// Allow takes a token from addr's bucket, if there is one. An address
// new to a table full of addresses still being limited is refused: the
// table never forgets an address before its bucket has refilled (issue
// 34: 10 050 other addresses used to clear it, and an exhausted address
// had a fresh burst).
func (l *Limiter) Allow(addr string, now time.Time) bool {
	key := Key(addr)
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.by[key]
	if b == nil {
		if len(l.by) >= maxLimitedAddrs {
			l.prune(now)
		}
		if len(l.by) >= maxLimitedAddrs {
			return false
		}
		b = &addrBucket{lim: rate.NewLimiter(l.every, l.burst)}
		l.by[key] = b
	}
	return b.lim.AllowN(now, 1)
}

// Ready reports whether addr's bucket has a token, taking none.
func (l *Limiter) Ready(addr string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.by[Key(addr)]
	return b == nil || b.lim.TokensAt(now) >= 1
}

// prune forgets the addresses that have nothing left to remember: their
// bucket is full again (a new one would start the same).
func (l *Limiter) prune(now time.Time) {
	for a, b := range l.by {
		if b.lim.TokensAt(now) >= float64(l.burst) {
			delete(l.by, a)
		}
	}
}

// Key is the key an address is limited under: an IPv6 address by its /64
// (one subscriber's network: a host picks any address in it, so counting
// each address alone counts nothing), anything else as it is. A key may
// carry a suffix after a space ("ADDR CODE": an address in one room).
func Key(addr string) string {
	host, rest, _ := strings.Cut(addr, " ")
	ip, err := netip.ParseAddr(host)
	if err != nil || !ip.Is6() || ip.Is4In6() {
		return addr
	}
	p, _ := ip.Prefix(64)
	if rest != "" {
		return p.String() + " " + rest
	}
	return p.String()
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
