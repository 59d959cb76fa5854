//go:build !race

package webtest

const RaceEnabled = false
