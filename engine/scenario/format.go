package scenario

import "outlierlab/engine/explain"

// Seconds writes a time in milliseconds as seconds, without the unit, as
// the decision log and the text output print times (explain.Seconds: "40",
// "0.25", "20.1", "239.96").
func Seconds(ms int64) string { return explain.Seconds(ms) }
