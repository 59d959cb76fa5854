package roombus

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// What the bus holds of any one room is bounded (issue 34: no single
// attendee can deny a workshop).
//
// The rooms' bucket is one stream of MaxBucket bytes that refuses what
// does not fit (DiscardNew): once 21 270 rooms made by a script filled it,
// no room could write, not even to replace its own key with a longer
// value. The rooms count how full it is (Usage) and stop making new ones
// well before it is full (web/room: half of it), so that the rooms already
// running always have room to write. A room nobody has used yet is created
// with a TTL of its own, shorter than the bucket's (KeyTTL, JetStream's
// per-message TTL, NATS 2.11 and later): its first use puts the key again
// without one (KeepKey), and any write does the same, so the bucket's TTL
// applies from then on.
//
// The recordings are one stream that drops its oldest entries when full
// (DiscardOld): one room appending 1 734 entries a second pushed every
// other room's recording out in about a minute. Each room's subject keeps
// at most RoomEntries entries (the stream's MaxMsgsPerSubject): a room past
// it loses its own oldest, never another room's.

const (
	// RoomEntries is how many entries a room's recording keeps by default:
	// a busy three-hour workshop writes a few thousand (a slider dragged
	// for a second is some ten); at about 1.5 KB each, 5 000 are some
	// 7 MiB, under a quarter of the recordings' 32 MiB.
	RoomEntries = 5000
	// limitMarkerTTL is how long a key that expired leaves its marker
	// (watches see the expiry as a delete).
	limitMarkerTTL = time.Minute
	// ttlHeader is JetStream's per-message TTL header.
	ttlHeader = "Nats-TTL"
)

// allowKeyTTL opens the bucket's stream and lets its keys carry a TTL of
// their own (AllowMsgTTL): a bucket made before it could is changed (a
// stream's message TTLs can be turned on, never off). A NATS server
// older than 2.11 cannot: keyTTL is false, and new rooms live the
// bucket's TTL.
func (b *Bus) allowKeyTTL(ctx context.Context) (st jetstream.Stream, keyTTL bool, err error) {
	st, err = b.JS.Stream(ctx, "KV_"+RoomBucket)
	if err != nil {
		return nil, false, err
	}
	cfg := st.CachedInfo().Config
	if cfg.AllowMsgTTL {
		return st, true, nil
	}
	cfg.AllowMsgTTL, cfg.SubjectDeleteMarkerTTL = true, limitMarkerTTL
	if _, uerr := b.JS.UpdateStream(ctx, cfg); uerr != nil {
		b.log.Warn("room bus: the NATS server cannot give a key a TTL of its own (NATS 2.11 and later can): rooms nobody uses live as long as the others",
			"bucket", RoomBucket, "err", uerr)
		return st, false, nil
	}
	b.log.Info("room bus: the rooms' bucket now gives keys a TTL of their own (rooms nobody uses expire sooner)", "bucket", RoomBucket)
	return st, true, nil
}

// boundRoomEntries makes the recordings' stream keep at most n entries a
// room: one made before it did is changed.
func (b *Bus) boundRoomEntries(ctx context.Context, tl jetstream.Stream, n int) (jetstream.Stream, error) {
	cfg := tl.CachedInfo().Config
	if cfg.MaxMsgsPerSubject == int64(n) {
		return tl, nil
	}
	was := cfg.MaxMsgsPerSubject
	cfg.MaxMsgsPerSubject = int64(n)
	if _, err := b.JS.UpdateStream(ctx, cfg); err != nil {
		return nil, fmt.Errorf("cannot bound each room's recording to %d entries: %w", n, err)
	}
	b.log.Info("room bus: each room's recording keeps its latest entries only", "stream", TimelineStream, "entries", n, "was", was)
	return b.JS.Stream(ctx, TimelineStream)
}

// KeyTTL says whether a key may be created with a TTL of its own
// (jetstream.KeyTTL).
func (b *Bus) KeyTTL() bool { return b.keyTTL }

// Usage is how many bytes the rooms' bucket holds, and how many it takes
// (its stream's MaxBytes: an operator may have raised it).
func (b *Bus) Usage(ctx context.Context) (used, limit int64, err error) {
	st, err := Retry(ctx, b, func(ctx context.Context) (jetstream.KeyValueStatus, error) { return b.bucket.Status(ctx) })
	if err != nil {
		return 0, 0, err
	}
	used = int64(st.Bytes())
	limit = MaxBucket
	if ks, ok := st.(*jetstream.KeyValueBucketStatus); ok && ks.StreamInfo().Config.MaxBytes > 0 {
		limit = ks.StreamInfo().Config.MaxBytes
	}
	return used, limit, nil
}

// KeepKey puts key again without its own TTL if its value still has one
// (it was created with KeyTTL and not written since), so that the bucket's
// TTL applies from now. It answers the value and the revision it found
// (0 for a key not there) and whether it put it again; a write in between
// (which has no TTL either) is no error.
func (b *Bus) KeepKey(ctx context.Context, key string) (value []byte, rev uint64, kept bool, err error) {
	m, err := Retry(ctx, b, func(ctx context.Context) (*jetstream.RawStreamMsg, error) {
		return b.roomStream.GetLastMsgForSubject(ctx, "$KV."+RoomBucket+"."+key)
	})
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, 0, false, nil
	}
	if err != nil {
		return nil, 0, false, err
	}
	if op := m.Header.Get("KV-Operation"); op != "" || m.Header.Get("Nats-Marker-Reason") != "" {
		return nil, 0, false, nil // deleted, purged or expired
	}
	if m.Header.Get(ttlHeader) == "" {
		return m.Data, m.Sequence, false, nil
	}
	_, err = b.KV.Update(ctx, key, m.Data, m.Sequence)
	if errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		return m.Data, m.Sequence, false, nil
	}
	if err != nil {
		return nil, 0, false, err
	}
	return m.Data, m.Sequence, true, nil
}

// Full reports whether err is a stream refusing a write for want of room
// (its MaxBytes, or the server's store): the rooms' bucket or the
// recordings' stream is full.
func Full(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "maximum bytes") || strings.Contains(msg, "insufficient resources") ||
		strings.Contains(msg, "maximum messages")
}
