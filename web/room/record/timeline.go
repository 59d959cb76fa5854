package record

// TimelineEntry is one entry of a room's recording: when (Unix ms), what
// (start, state, question, reveal, summon, lock) and the room's state
// after it (with the question, and at a reveal its histogram).
type TimelineEntry struct {
	TMs   int64  `json:"t"`
	Kind  string `json:"kind"`
	State State  `json:"state"`
	// Scene names the plan scene the room is on (web/room/scenes).
	Scene *EntryScene `json:"scene,omitempty"`
}

func WhereOf(st *State) string {
	if st.Lesson == "" {
		return "preset " + st.Preset
	}
	if st.Step != "" {
		return "lesson " + st.Lesson + " step " + st.Step
	}
	return "lesson " + st.Lesson
}

func PlayOf(st *State) string {
	if st.Playing {
		return "playing at " + SpeedWords(st.Speed)
	}
	return "paused"
}

func SpeedWords(name string) string {
	if name == "instant" {
		return "instant"
	}
	return name + "×"
}
