package scenario

import "outlierlab/engine"

// NewRateFrame is the short form of a success-rate pass that frames carry,
// for packages that build frames from their own traffic (engine/whatif).
func NewRateFrame(p engine.RatePass) RateFrame { return newRateFrame(p) }
