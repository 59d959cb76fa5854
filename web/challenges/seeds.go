package challenges

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"strconv"
	"sync"
	"time"
)

// seedSource derives a challenge's hidden seeds: HMAC-SHA256 of the
// server's secret over the challenge's id and the seed's index. Without
// the secret they cannot be told from the runs' index; with it, every
// replica derives the same ones, so a failure link opens the run graded.
type seedSource struct{ secret []byte }

func newSeedSource(secret []byte) (*seedSource, error) {
	if len(secret) == 0 {
		secret = make([]byte, 32)
		if _, err := rand.Read(secret); err != nil {
			return nil, err
		}
	}
	return &seedSource{secret: secret}, nil
}

// seeds are the n hidden seeds of challenge id, each non-zero.
func (s *seedSource) seeds(id string, n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		m := hmac.New(sha256.New, s.secret)
		m.Write([]byte(id + "/" + strconv.Itoa(i)))
		out[i] = binary.BigEndian.Uint64(m.Sum(nil)) | 1
	}
	return out
}

// limiter admits one submission per key every gap: a key is a browser's
// identity (or, without one, its client address). It forgets keys whose
// gap has passed once it holds max of them.
type limiter struct {
	mu   sync.Mutex
	gap  time.Duration
	max  int
	last map[string]time.Time
}

func newLimiter(gap time.Duration, max int) *limiter {
	return &limiter{gap: gap, max: max, last: map[string]time.Time{}}
}

// allow admits key at now, or says how long it must wait.
func (l *limiter) allow(key string, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if t, ok := l.last[key]; ok && now.Sub(t) < l.gap {
		return false, l.gap - now.Sub(t)
	}
	if len(l.last) >= l.max {
		for k, t := range l.last {
			if now.Sub(t) >= l.gap {
				delete(l.last, k)
			}
		}
		if len(l.last) >= l.max {
			return false, l.gap
		}
	}
	l.last[key] = now
	return true, 0
}
