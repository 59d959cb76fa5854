package room

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"outlierlab/web/httperr"
	"outlierlab/web/roombus"
)

// What the rooms may take of the bus every workshop shares (issue 34: no
// single attendee can deny a workshop).
//
// New rooms. POST /rooms was open to anyone and -max-rooms counts only the
// rooms a replica serves now: 21 270 rooms from 400 addresses filled the
// 32 MiB bucket in 38.6 s, and then no workshop could write, the rooms
// already running included (the bucket refuses what does not fit, even a
// key's new value). Now an address makes at most Limits.RoomsPerHour rooms
// an hour (429), and the deployment makes new rooms only while the bucket
// is less than newRoomsShare full (503 naming it): the rest is the running
// rooms' own, for their moves, answers and boards. A room nobody uses
// expires after Limits.UnusedTTL (its key's own TTL, roombus.KeepKey), so
// a burst of rooms made by a script gives its room back within the hour.
//
// A room's changes. One key holder moved its spotlight 1 734 times a
// second and its room's recording pushed every other room's out of the
// shared stream. The bus keeps at most roombus.RoomEntries entries of a
// room (its oldest go), and the key holder's changes through the rooms'
// API are limited per room (changesBurst at once, then changesPerSecond a
// second: 429 naming it); the instructor tab's moves, which the room must
// follow whatever their pace, are all published, and recorded at that
// pace (recording.Timeline: the last of a drag is never lost).

const (
	// newRoomsShare is the share of the rooms' bucket (in percent) past
	// which no new room is made.
	newRoomsShare = 50
	// changesPerSecond and changesBurst bound a room's changes through the
	// rooms' API (spotlight, scene, question, reveal, lock, summon,
	// explore), per replica: a click is one, and no instructor clicks 100
	// times in a second.
	changesPerSecond, changesBurst = 20, 100
	// fullFor is how long a bucket found too full for new rooms is
	// believed without asking again.
	fullFor = time.Second
	// maxUsed bounds the rooms a replica remembers as used.
	maxUsed = 20000
)

// quota is what a replica knows of the bucket's room for new rooms, and
// which rooms it has seen used (their key without a TTL of its own).
type quota struct {
	mu        sync.Mutex
	fullUntil time.Time
	fullErr   error
	usedRooms map[string]bool
}

func (q *quota) used(code string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.usedRooms[code]
}

func (q *quota) markUsed(code string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.usedRooms == nil || len(q.usedRooms) >= maxUsed {
		q.usedRooms = map[string]bool{} // asking the bus again costs a read a room
	}
	q.usedRooms[code] = true
}

// errNewRooms is a new room refused by the deployment's limit.
var errNewRooms = errors.New("new workshops are refused")

// admitRoom refuses a new room (errNewRooms, 503) while the rooms' bucket
// is newRoomsShare full or more.
func (set *roomSet) admitRoom(ctx context.Context) error {
	now := time.Now()
	set.quota.mu.Lock()
	if now.Before(set.quota.fullUntil) {
		err := set.quota.fullErr
		set.quota.mu.Unlock()
		return err
	}
	set.quota.mu.Unlock()
	used, limit, err := set.bus.Usage(ctx)
	if err != nil {
		return busErr(err)
	}
	if used*100 < limit*newRoomsShare {
		return nil
	}
	err = httperr.WithKind(httperr.KindFull, fmt.Errorf(
		"%w for now: the room bus holds %s of the %s every workshop shares, and new workshops stop at %d%% of it so that the workshops running can always write; a workshop nobody uses expires after %v: try again later",
		errNewRooms, mib(used), mib(limit), newRoomsShare, set.lim.UnusedTTL))
	set.quota.mu.Lock()
	set.quota.fullUntil, set.quota.fullErr = now.Add(fullFor), err
	set.quota.mu.Unlock()
	set.log.Warn("room: new workshops refused: the rooms' bucket is past its share for new rooms",
		"bytes", used, "of", limit, "share", newRoomsShare)
	return err
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// keepRoom is a room's first use by an attendee (a new identity for it,
// its page opened): the room's key loses its own TTL, and the bucket's
// applies from now. Once per room and replica; a failure is logged, and
// the next new identity tries again.
func (set *roomSet) keepRoom(ctx context.Context, code string) {
	if set.quota.used(code) {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, roombus.Timeout)
	defer cancel()
	if _, _, _, err := set.bus.KeepKey(ctx, code); err != nil {
		set.log.Warn("room bus: cannot keep a room in its first use (it expires as a room nobody used)", "room", code, "err", err)
		return
	}
	set.quota.markUsed(code)
}

// tooManyRooms answers a creation from an address past RoomsPerHour.
func tooManyRooms(w http.ResponseWriter, perHour int) {
	every := time.Hour / time.Duration(perHour)
	w.Header().Set("Retry-After", strconv.Itoa(int(every.Seconds())))
	httperr.Write(w, httperr.Errorf(httperr.KindTooMany,
		"too many new workshops from your address (allowed %d an hour): try again in %v, or use one of the workshops you made", perHour, every.Round(time.Second)), httperr.KindTooMany)
}

// tooManyChanges answers a key holder's change of a room past the room's
// rate.
func tooManyChanges(w http.ResponseWriter, code string) {
	w.Header().Set("Retry-After", "1")
	httperr.Write(w, httperr.Errorf(httperr.KindTooMany,
		"too many changes to workshop %s (allowed %d at once, then %d a second): try again in a second", code, changesBurst, changesPerSecond), httperr.KindTooMany)
}
