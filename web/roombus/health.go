package roombus

import (
	"context"
	"errors"
	"fmt"
	"time"

	"outlierlab/web/httperr"
)

// Whether the bus answers now (issue 33, item 7). A whole-NATS outage
// used to cost every room write its deadline (5–7 s, then a 500 "context
// deadline exceeded"), /healthz?ready said 200 throughout, and once NATS
// was back a replica's watches came back when nats.go noticed, or never:
// the first move after it reached 9 of 20 followers, or none.
//
// Now the bus knows it is down from the connection itself: nats.go says
// at once when it is lost (the server closed it, or two pings of busPing
// went unanswered), and a call made meanwhile is refused at once
// (ErrDown, KindUnavailable: 503 with Retry-After); one in flight ends
// when it goes. Nothing is queued for later: with no reconnect buffer, a
// write the bus cannot take now is refused, never sent once it is back.
// JetStream not answering while the connection stands is found by
// probing it (the rooms' bucket's info) once a call timed out or the
// connection came back: a second or two of silence is a stream's leader
// election, which calls wait out as before; busSilent of it is the bus
// down.
//
// The bus is back when, after that, JetStream answers a probe; until then
// the replica is not ready (Health). Every watch then starts again from
// the revision after its last (a server restarted lost their consumers),
// and Back's channel wakes the rooms' hubs, which read their rooms again
// and wake their streams.

// ErrDown is what a call answers while the bus is down (errors.Is).
var ErrDown = errors.New("the room bus is down")

// downError is ErrDown with why, of kind KindUnavailable.
type downError struct{ why string }

func (e *downError) Error() string {
	return "the room bus is down (" + e.why + "): try again in a few seconds"
}
func (e *downError) Is(target error) bool { return target == ErrDown }

func down(why string) error {
	return httperr.WithKind(httperr.KindUnavailable, &downError{why: why})
}

const (
	// busPing is how often the connection is pinged; two pings
	// unanswered and it is lost (a network that drops packets rather
	// than closing the connection).
	busPing = 5 * time.Second
	// busProbe bounds one probe of JetStream, busProbeEvery is the pause
	// between probes while it does not answer.
	busProbe      = time.Second
	busProbeEvery = 250 * time.Millisecond
	// busSilent is how long JetStream may not answer, the connection up,
	// before the bus is down: longer than a stream's leader election
	// (a NATS node gone), which the calls wait out.
	busSilent = 10 * time.Second
	// ReconnectGrace is how long after the connection is lost a call
	// waits for nats.go to reconnect before it is refused: one NATS
	// server of a cluster gone, the client is on another within a few
	// milliseconds (tens under load), and an attendee's answer sent just
	// then was a 503 (TestBusCluster3 in CI). A whole bus down costs a
	// call this much at most, once: then calls are refused at once.
	// Two seconds: a reconnect took over one under CI's load.
	ReconnectGrace = 2 * time.Second
)

// Health is nil while the bus is open and answers (the readiness of
// /healthz?ready); else why not: ErrNotReady before it is open, ErrDown
// while it is down, and once the connection is back until JetStream
// answers again.
func (b *Bus) Health() error {
	if err := b.refuse(); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.wasDown {
		return down("NATS is back, JetStream not answering yet")
	}
	return nil
}

// refuse is why a call is refused at once: the bus not open, its
// connection lost, or JetStream silent for busSilent. A connection back
// whose JetStream has not answered yet is tried: a NATS server gone, a
// replica reconnects to another whose streams may be electing leaders,
// which the call waits out.
func (b *Bus) refuse() error {
	if !b.Ready() {
		if err := b.Err(); err != nil {
			return fmt.Errorf("%w (%v)", ErrNotReady, err)
		}
		return ErrNotReady
	}
	if err := errNoConn(b.nc); err != nil {
		return down(err.Error())
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.silent {
		return down(fmt.Sprintf("JetStream has not answered for %v", busSilent))
	}
	return nil
}

// refuseAfterGrace is refuse, but a call made within ReconnectGrace
// of the connection's loss first waits for nats.go to reconnect and for
// the bus to hear of it (or ctx to end): nats.go reports the connection
// up before its reconnect callback has run, so the bus's state still says
// "reconnecting" for a moment after IsConnected (TestBusCluster3 in CI
// at load 8).
func (b *Bus) refuseAfterGrace(ctx context.Context) error {
	for {
		err := b.refuse()
		if err == nil || b.nc == nil || b.nc.IsClosed() {
			return err
		}
		b.mu.Lock()
		left := ReconnectGrace - time.Since(b.lostAt)
		b.mu.Unlock()
		if left <= 0 {
			return err
		}
		t := time.NewTimer(min(left, 20*time.Millisecond))
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

func connState(s string) string {
	switch s {
	case "RECONNECTING":
		return "reconnecting"
	case "CLOSED":
		return "closed"
	case "CONNECTING":
		return "connecting"
	}
	return s
}

// Back is a channel closed when the bus is next back after being down
// (the connection lost, or JetStream silent), once JetStream answers.
func (b *Bus) Back() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.back
}

// wentDown is a channel closed when the bus next goes down.
func (b *Bus) wentDown() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.downCh
}

// lost marks the connection lost: calls in flight end, and the next
// answer of JetStream is a return.
func (b *Bus) lost() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.wasDown = true
	b.lostAt = time.Now()
	b.goDownLocked()
}

func (b *Bus) goDownLocked() {
	select {
	case <-b.downCh:
	default:
		close(b.downCh)
	}
}

// suspect starts probing JetStream (a call timed out, or the connection
// came back), unless a probe runs already.
func (b *Bus) suspect() {
	if !b.Ready() {
		return // the open loop probes it
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.probing {
		return
	}
	b.probing = true
	go b.probe()
}

// probe asks JetStream about the rooms' bucket (its stream's info, which
// the replica may ask since it opens the bucket) until it answers, the
// connection is lost (the reconnect probes again) or the bus closes;
// JetStream silent for busSilent is the bus down.
func (b *Bus) probe() {
	var since time.Time // the first failed probe
	for {
		ctx, cancel := context.WithTimeout(b.ctx, busProbe)
		_, err := b.bucket.Status(ctx)
		cancel()
		b.mu.Lock()
		if err == nil {
			back := b.wasDown || b.silent
			b.probing, b.wasDown, b.silent = false, false, false
			if back {
				close(b.back)
				b.back = make(chan struct{})
				select {
				case <-b.downCh:
					b.downCh = make(chan struct{})
				default:
				}
				close(b.moved) // every watch starts again
				b.moved = make(chan struct{})
			}
			b.mu.Unlock()
			if back {
				b.log.Info("room bus: back (JetStream answers): rooms read again, watches start again")
			}
			return
		}
		if since.IsZero() {
			since = time.Now()
		}
		if !b.silent && time.Since(since) >= busSilent && b.nc.IsConnected() {
			b.silent = true
			b.goDownLocked()
			b.log.Warn("room bus: down: JetStream does not answer", "for", time.Since(since).Round(time.Millisecond).String(), "err", err)
		}
		if b.ctx.Err() != nil || !b.nc.IsConnected() {
			b.probing = false
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
		t := time.NewTimer(busProbeEvery)
		select {
		case <-b.ctx.Done():
			t.Stop()
		case <-t.C:
		}
	}
}
