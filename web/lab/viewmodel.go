package lab

import (
	"outlierlab/web/tabstate"
	"outlierlab/web/view"
)

// statusView is the transport bar's live part.
func statusView(snap snapshot) view.Status {
	r := snap.run
	return view.Status{
		Cursor: snap.cursor, Frames: len(r.Frames),
		Time: r.FrameTime(snap.cursor), End: r.EndTime(),
		Playing: snap.playing, Speed: snap.speed.Name, SpeedLabel: tabstate.SpeedLabel(snap.speed, false),
		Notice: snap.notice, Held: snap.held, HeldFor: heldFor(snap),
		Summary:    tabstate.SummaryLine(r, snap.cursor),
		IntervalMs: r.Config.IntervalMs,
	}
}

// heldFor is where the question a held page waits for is: the free lab
// has no prediction, so only a workshop's question holds it; a lesson page
// outside a workshop is held by its prediction alone.
func heldFor(snap snapshot) string {
	switch {
	case snap.lesson == nil:
		return "room"
	case snap.room:
		return "either"
	}
	return "prediction"
}
