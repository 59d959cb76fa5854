package lab

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The lab's own metrics: its streams, and how long a command waits for
// its tab's redraw.
var (
	metricRedraw = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "outlierlab_command_redraw_seconds",
		Help:    "From a command's arrival to the next frame its tab's stream sends.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
	})
	metricStreams = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "outlierlab_streams_open",
		Help: "Tab streams (Server-Sent Events) open now.",
	})
)

// Collectors are the lab's metrics, for the server's registry.
func Collectors() []prometheus.Collector {
	return []prometheus.Collector{metricRedraw, metricStreams}
}

// maxPendingRedraws bounds the commands waiting for their redraw: a tab
// that posts and never streams must not grow the map.
const maxPendingRedraws = 10000

// redraws times each command to the next frame its tab's stream sends.
type redraws struct {
	mu      sync.Mutex
	pending map[string]time.Time // tab → arrival of its oldest unredrawn command
}

func newRedraws() *redraws { return &redraws{pending: map[string]time.Time{}} }

// commandArrived marks a tab's command; the tab's next frame ends it.
// Marked before the command applies: its answer (a redraw, or a notice
// for a bad value) is what the stream sends next.
func (m *redraws) commandArrived(tab string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	if len(m.pending) >= maxPendingRedraws {
		// Tabs that post without a stream (scripts, closed tabs) never
		// redraw: forget what waited longer than any redraw would.
		for t, at := range m.pending {
			if now.Sub(at) > pendingRedrawMax {
				delete(m.pending, t)
			}
		}
	}
	if _, ok := m.pending[tab]; !ok && len(m.pending) < maxPendingRedraws {
		m.pending[tab] = now
	}
}

// pendingRedrawMax is how long a command's redraw is waited for.
const pendingRedrawMax = 30 * time.Second

// forget drops a tab's clock (its stream closed).
func (m *redraws) forget(tab string) {
	m.mu.Lock()
	delete(m.pending, tab)
	m.mu.Unlock()
}

// redrawn stops a tab's clock: its stream sent a frame.
func (m *redraws) redrawn(tab string) {
	m.mu.Lock()
	t, ok := m.pending[tab]
	delete(m.pending, tab)
	m.mu.Unlock()
	if ok {
		metricRedraw.Observe(time.Since(t).Seconds())
	}
}

// streamOpened logs and counts a tab's stream; call the function it
// returns when the stream ends: defer s.streamOpened(r, tab)().
func (s *Lab) streamOpened(r *http.Request, tab string) func() {
	start := time.Now()
	metricStreams.Inc()
	// The tab id is the tab's bearer token: the log names a hash of it,
	// enough to pair an open with its close.
	ref := TabRef(tab)
	s.Log.Info("stream open", "tab", ref, "path", r.URL.Path)
	return func() {
		metricStreams.Dec()
		s.redraws.forget(tab)
		s.Log.Info("stream close", "tab", ref, "duration", time.Since(start))
	}
}

// TabRef is how the log names a tab: 8 hex digits of a hash of its id.
func TabRef(tab string) string {
	sum := sha256.Sum256([]byte(tab))
	return hex.EncodeToString(sum[:4])
}
