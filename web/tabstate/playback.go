package tabstate

import "time"

// Playback is where a tab's cursor is and how it moves, as a value: while
// playing, the cursor is Anchor + (now − AnchorAt) × Speed, stopped at the
// run's end and, when playback started at or before it, at Hold (the
// frames before a prediction's or a room question's moment; 0: none).
// Playback is arithmetic, not a goroutine: a stream that reconnects, a
// second stream on the tab, a room's follower on another replica and a
// recording's tail all compute the same cursor from the same value.
type Playback struct {
	Anchor   int       // cursor when playback last (re)started or stopped
	AnchorAt time.Time // when playback started from Anchor
	Playing  bool
	Speed    Speed
	Hold     int
}

// CursorAt is the number of frames (of a run of frames) revealed at now.
func (p Playback) CursorAt(now time.Time, frames int) int {
	if !p.Playing {
		return min(p.Anchor, frames)
	}
	c := frames
	if p.Speed.FPS > 0 {
		k := int(now.Sub(p.AnchorAt).Seconds() * p.Speed.FPS)
		c = min(frames, p.Anchor+max(k, 0))
	}
	if p.Holding() {
		c = min(c, p.Hold)
	}
	return c
}

// Holding reports whether playback from the anchor stops at the hold.
func (p Playback) Holding() bool { return p.Hold > 0 && p.Anchor <= p.Hold }

// Held reports whether the cursor waits at the hold.
func (p Playback) Held(now time.Time, frames int) bool {
	return p.Holding() && p.CursorAt(now, frames) >= p.Hold
}

// IsPlaying is playing, not yet at the end and not held.
func (p Playback) IsPlaying(now time.Time, frames int) bool {
	return p.Playing && p.CursorAt(now, frames) < frames && !p.Held(now, frames)
}

// NextFrameAt is when the cursor moves next while playing.
func (p Playback) NextFrameAt(now time.Time) time.Time {
	k := int(now.Sub(p.AnchorAt).Seconds()*p.Speed.FPS) + 1
	return p.AnchorAt.Add(time.Duration(float64(k) / p.Speed.FPS * float64(time.Second)))
}

// At is playback stopped or re-anchored at cursor c at now: no move
// (step, scrub, a jump) goes past the hold.
func (p Playback) At(c int, now time.Time, frames int) Playback {
	p.Anchor = min(max(c, 0), frames)
	if p.Hold > 0 {
		p.Anchor = min(p.Anchor, p.Hold)
	}
	p.AnchorAt = now
	return p
}

// Speed is a playback speed in frames (detector intervals) per second;
// 0 means instant: play jumps to the end.
type Speed struct {
	Name string
	FPS  float64
}

// Speeds are the speeds a tab may play at, slowest first.
var Speeds = []Speed{
	{"1", 1},
	{"4", 4},
	{"16", 16},
	{"instant", 0},
}

// LookupSpeed is the speed named name.
func LookupSpeed(name string) (Speed, bool) {
	for _, s := range Speeds {
		if s.Name == name {
			return s, true
		}
	}
	return Speed{}, false
}
