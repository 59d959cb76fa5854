package room

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"outlierlab/web/internal/roomtest"
	"outlierlab/web/internal/webtest"
	"outlierlab/web/roombus"
)

// endedWatchKV is the rooms' bucket with every watch ending before it has
// given the current value (a watch cut by the bus, a consumer lost).
type endedWatchKV struct{ jetstream.KeyValue }

func (kv endedWatchKV) Watch(ctx context.Context, keys string, opts ...jetstream.WatchOpt) (jetstream.KeyWatcher, error) {
	return endedWatcher{make(chan jetstream.KeyValueEntry)}, nil
}

type endedWatcher struct{ ch chan jetstream.KeyValueEntry }

func (w endedWatcher) Updates() <-chan jetstream.KeyValueEntry { close(w.ch); return w.ch }
func (w endedWatcher) Stop() error                             { return nil }

// refusedWatchKV refuses every watch.
type refusedWatchKV struct{ jetstream.KeyValue }

func (kv refusedWatchKV) Watch(ctx context.Context, keys string, opts ...jetstream.WatchOpt) (jetstream.KeyWatcher, error) {
	return nil, errors.New("watch refused")
}

// A hub whose watch ends before the room's state came answers every join
// at once with the reason; it used to leave them waiting out roombus.Timeout
// (5 s each) for a hub that would never be ready.
func TestHubWatchEndedEarlyAnswersAtOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		kv   func(jetstream.KeyValue) jetstream.KeyValue
		want string
	}{
		{"updates closed", func(kv jetstream.KeyValue) jetstream.KeyValue { return endedWatchKV{kv} }, "ended before its state came"},
		{"watch refused", func(kv jetstream.KeyValue) jetstream.KeyValue { return refusedWatchKV{kv} }, "cannot watch room"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := startRoomLab(t, roombus.BusOptions{}, Limits{})
			code, _ := l.CreateRoom(t, `{"preset":"search-cache"}`)
			l.Bus.KV = tc.kv(l.Bus.KV)
			for range 3 {
				start := time.Now()
				h, err := l.S.rooms.open(t.Context(), code, "")
				took := time.Since(start)
				if err == nil {
					h.release("")
					t.Fatal("open succeeded on a hub with no state")
				}
				if !strings.Contains(err.Error(), tc.want) || took > roombus.Timeout/2 {
					t.Fatalf("open: %v after %v, want %q at once", err, took, tc.want)
				}
			}
		})
	}
}

// stuckPresenceKV holds every write of the board (CODE.p.*) until release
// is closed, whatever the request's deadline: a bus that does not answer.
type stuckPresenceKV struct {
	jetstream.KeyValue
	release chan struct{}
	writes  chan string
}

func (kv stuckPresenceKV) Put(ctx context.Context, key string, value []byte) (uint64, error) {
	if strings.Contains(key, ".p.") {
		kv.writes <- key
		<-kv.release
	}
	return kv.KeyValue.Put(ctx, key, value)
}

// The board's write goes beside an attendee's stream: with the bus stuck
// on it, the follower still takes the instructor's next move (it used to
// wait in putPresence, inside the stream loop, for the bus's answer).
func TestPresenceWriteDoesNotHoldTheStream(t *testing.T) {
	t.Parallel()
	l := startRoomLab(t, roombus.BusOptions{}, Limits{})
	code, key := l.CreateRoom(t, `{"preset":"search-cache"}`)
	kv := stuckPresenceKV{l.Bus.KV, make(chan struct{}), make(chan string, 16)}
	l.Bus.KV = kv
	t.Cleanup(func() { close(kv.release) }) // before the stream's end waits for the write
	follower := roomtest.OpenStreamCtx(t, t.Context(), l.TS.URL, roomtest.Sig(roomtest.TabFollower, code, "follow", `"preset":"search-cache"`), roomtest.AttendeeCookie(t, l.TS.URL, code))
	webtest.WaitFor(t, follower, "the first redraw", roomtest.Charted)
	select {
	case <-kv.writes:
	case <-time.After(10 * time.Second):
		t.Fatal("the follower never wrote its line of the board")
	}
	present := roomtest.Sig(roomtest.TabPresenter, code, "present", `"preset":"search-cache","seq":1,"cfg":{"max_ejection_percent":34}`)
	if st, body := roomtest.Post(t, l.TS.URL, "set", present, code, key); st != 204 {
		t.Fatalf("instructor set: %d %s", st, body)
	}
	webtest.WaitFor(t, follower, "the follower's cap at 34 with the board's write stuck", roomtest.SignalPatch(`"max_ejection_percent":34`))
}
