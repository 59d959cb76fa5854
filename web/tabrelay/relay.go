// Package tabrelay carries a tab's command to the replica that holds the
// tab's stream, over the room bus (NATS request/reply).
//
// A tab's session lives in the memory of the replica its stream is on: a
// command is applied there, and the stream wakes and redraws. Behind a
// round-robin balancer a command lands on any replica; one that does not
// hold the tab's stream forwards it here, on the tab's own subject, and
// writes back the holder's answer as if it had served it. The embedded bus
// does this on one machine too. No holder (the tab's replica is gone, or
// the bus is) is an answer of its own: the caller decides what the page
// is told.
package tabrelay

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// Bus is what the relay needs of the room bus: its connection, once it is
// open (roombus.Bus).
type Bus interface {
	Ready() bool
	Conn() *nats.Conn
	WaitReady(ctx context.Context) error
}

// Relay subscribes this replica to the tabs whose streams it holds, and
// forwards commands for other tabs to their holders.
type Relay struct {
	bus Bus
	log *slog.Logger
	// Timeout bounds a forwarded command: the holder builds the run of new
	// settings before it answers (a heavy one, under the budget, takes a
	// few seconds).
	Timeout time.Duration

	mu   sync.Mutex
	held map[string]*hold // by subject
	// waiting is set while a goroutine waits for the bus to subscribe the
	// tabs held before it opened.
	waiting bool
}

// hold is one tab's subscription, shared by its streams on this replica.
type hold struct {
	n     int
	sub   *nats.Subscription
	serve http.Handler
}

// New is a relay over bus.
func New(bus Bus, log *slog.Logger) *Relay {
	if log == nil {
		log = slog.Default()
	}
	return &Relay{bus: bus, log: log, Timeout: 10 * time.Second, held: map[string]*hold{}}
}

// subject is a tab's subject: a digest of its id, so that the bus never
// carries the id itself (it is the tab's only credential).
func subject(tab string) string {
	sum := sha256.Sum256([]byte("outlierlab tab " + tab))
	return "outlierlab.tab." + hex.EncodeToString(sum[:16])
}

// Hold answers the tab's forwarded commands with serve while the caller
// (a stream) runs: release undoes it. A tab with several streams here is
// subscribed once.
func (r *Relay) Hold(tab string, serve http.Handler) (release func()) {
	subj := subject(tab)
	r.mu.Lock()
	h := r.held[subj]
	if h == nil {
		h = &hold{serve: serve}
		r.held[subj] = h
		r.subscribeLocked(subj, h)
	}
	h.n++
	r.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			r.mu.Lock()
			if h.n--; h.n > 0 {
				r.mu.Unlock()
				return
			}
			delete(r.held, subj)
			sub := h.sub
			r.mu.Unlock()
			if sub == nil {
				return
			}
			// The server has dropped the subscription when release
			// returns (as Hold flushes its subscribe): a command another
			// replica forwards just after finds no responder and is
			// served there (ErrNoHolder), rather than reaching this
			// subscription on its way out, unanswered until the
			// forward's timeout (TestNoHolder in CI).
			_ = sub.Unsubscribe()
			if err := r.bus.Conn().FlushTimeout(r.Timeout); err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
				r.log.Warn("tab relay: flush", "err", err)
			}
		})
	}
}

// subscribeLocked subscribes h, or, while the bus is not open yet, has it
// subscribed once it is. Callers hold mu.
func (r *Relay) subscribeLocked(subj string, h *hold) {
	if !r.bus.Ready() {
		if !r.waiting {
			r.waiting = true
			go r.subscribeWhenReady()
		}
		return
	}
	sub, err := r.bus.Conn().Subscribe(subj, func(m *nats.Msg) { r.answer(h, m) })
	if err != nil {
		r.log.Warn("tab relay: subscribe", "err", err)
		return
	}
	// The subscription is on the server before the stream serves: a
	// command sent the moment the page shows its first redraw finds it.
	if err := r.bus.Conn().Flush(); err != nil {
		r.log.Warn("tab relay: flush", "err", err)
	}
	h.sub = sub
}

// subscribeWhenReady subscribes the tabs held while the bus was not open.
func (r *Relay) subscribeWhenReady() {
	err := r.bus.WaitReady(context.Background())
	r.mu.Lock()
	defer r.mu.Unlock()
	r.waiting = false
	if err != nil {
		return
	}
	for subj, h := range r.held {
		if h.sub == nil {
			r.subscribeLocked(subj, h)
		}
	}
}

// Headers the relay itself sets on a forwarded request and its answer.
const (
	hdrMethod = "Outlierlab-Method"
	hdrPath   = "Outlierlab-Path"
	hdrRemote = "Outlierlab-Remote-Addr"
	hdrHost   = "Outlierlab-Host"
	hdrStatus = "Outlierlab-Status"
)

// forwarded marks a request that came over the relay: its holder serves
// it here, never forwards it again.
type forwardedKey struct{}

// Forwarded reports whether r came over the relay.
func Forwarded(r *http.Request) bool { return r.Context().Value(forwardedKey{}) != nil }

// ErrNoHolder means no replica holds the tab's stream (none answered), or the
// bus is not open.
var ErrNoHolder = errors.New("no replica holds the tab's stream")

// Forward sends req, whose body was read as body, to the replica that
// holds tab's stream and writes that replica's answer to w. It returns
// ErrNoHolder, and writes nothing, when there is none.
func (r *Relay) Forward(w http.ResponseWriter, req *http.Request, tab string, body []byte) error {
	if !r.bus.Ready() {
		// A replica just started (or its bus reconnecting): a moment's wait,
		// not a lost command.
		ctx, cancel := context.WithTimeout(req.Context(), 2*time.Second)
		err := r.bus.WaitReady(ctx)
		cancel()
		if err != nil {
			return ErrNoHolder
		}
	}
	m := nats.NewMsg(subject(tab))
	for k, v := range req.Header {
		m.Header[k] = v
	}
	m.Header.Set(hdrMethod, req.Method)
	m.Header.Set(hdrPath, req.URL.RequestURI()) // the query too: some commands take their value there
	m.Header.Set(hdrRemote, req.RemoteAddr)
	m.Header.Set(hdrHost, req.Host)
	m.Data = body
	ctx, cancel := context.WithTimeout(req.Context(), r.Timeout)
	defer cancel()
	reply, err := r.bus.Conn().RequestMsgWithContext(ctx, m)
	if errors.Is(err, nats.ErrNoResponders) || errors.Is(err, nats.ErrConnectionClosed) || errors.Is(err, nats.ErrConnectionReconnecting) {
		return ErrNoHolder
	}
	if err != nil {
		return err
	}
	status, _ := strconv.Atoi(reply.Header.Get(hdrStatus))
	if status == 0 {
		status = http.StatusOK
	}
	for k, v := range reply.Header {
		if k != hdrStatus {
			w.Header()[k] = v
		}
	}
	w.WriteHeader(status)
	_, _ = w.Write(reply.Data)
	return nil
}

// answer serves a forwarded command with h's handler and replies with
// what it wrote.
func (r *Relay) answer(h *hold, m *nats.Msg) {
	ctx, cancel := context.WithTimeout(context.WithValue(context.Background(), forwardedKey{}, true), r.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, m.Header.Get(hdrMethod), m.Header.Get(hdrPath), bytes.NewReader(m.Data))
	if err != nil {
		r.log.Warn("tab relay: a forwarded request that is not one", "err", err)
		return
	}
	for k, v := range m.Header {
		switch k {
		case hdrMethod, hdrPath, hdrRemote, hdrHost:
		default:
			req.Header[k] = v
		}
	}
	req.RemoteAddr, req.Host = m.Header.Get(hdrRemote), m.Header.Get(hdrHost)
	rec := &recorder{header: http.Header{}}
	h.serve.ServeHTTP(rec, req)
	out := nats.NewMsg(m.Reply)
	for k, v := range rec.header {
		out.Header[k] = v
	}
	out.Header.Set(hdrStatus, strconv.Itoa(rec.statusOr200()))
	out.Data = rec.body.Bytes()
	if err := m.RespondMsg(out); err != nil {
		r.log.Warn("tab relay: reply", "err", err)
	}
}

// recorder is the answer a forwarded command's handler writes, kept to be
// sent back; it flushes (a Datastar answer's events) into its buffer.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (rc *recorder) Header() http.Header { return rc.header }
func (rc *recorder) WriteHeader(code int) {
	if rc.status == 0 {
		rc.status = code
	}
}
func (rc *recorder) Write(p []byte) (int, error) {
	rc.WriteHeader(http.StatusOK)
	return rc.body.Write(p)
}
func (rc *recorder) Flush() {}
func (rc *recorder) statusOr200() int {
	if rc.status == 0 {
		return http.StatusOK
	}
	return rc.status
}
