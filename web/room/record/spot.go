package record

import (
	"math"

	"outlierlab/web/tabstate"
)

// Spot is what the instructor points at; the times are seconds. Log is
// the decision-log line it came from (web/room/spotlight), if any: the
// server has already turned it into the host and the range.
type Spot struct {
	Host string  `json:"host,omitempty"`
	From float64 `json:"from,omitempty"`
	To   float64 `json:"to,omitempty"`
	Log  string  `json:"log,omitempty"`
}

func (sp *Spot) Signal() SpotSignal {
	if sp == nil {
		return SpotSignal{}
	}
	out := SpotSignal{Host: sp.Host, Log: sp.Log}
	if sp.To > 0 {
		out.FromMs, out.ToMs = int64(math.Round(sp.From*1000)), int64(math.Round(sp.To*1000))
		out.From, out.To = tabstate.FormatMs(out.FromMs), tabstate.FormatMs(out.ToMs)
	}
	return out
}

// SpotSignal is the spotlight as the page's charts name things: the host,
// and the range as x-axis labels ("40 s"); empty strings clear it. The
// decision log matches its lines against the range in milliseconds
// (fromMs < a line's time ≤ toMs: a line at 40 s speaks of the interval
// that ended then) and against log, the line clicked.
type SpotSignal struct {
	Host   string `json:"host"`
	From   string `json:"from"`
	To     string `json:"to"`
	FromMs int64  `json:"fromMs"`
	ToMs   int64  `json:"toMs"`
	Log    string `json:"log"`
}
