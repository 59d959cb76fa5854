package web

import (
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"
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
