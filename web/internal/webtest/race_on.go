//go:build race

package webtest

// RaceEnabled: the race detector makes a test's goroutines 5–10× slower;
// the heaviest tests scale their load down (never their checks).
const RaceEnabled = true
