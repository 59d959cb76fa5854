// Package lessonwalk holds the walk through the course in a browser: every
// lesson played as a learner plays it, with the mouse, and the first one
// with the keyboard alone (issue 38's acceptance). It has no code but its
// tests; it is a package of its own so that its minute of Chromium runs
// beside the web package's tests, not inside them (CI runs packages two
// at a time).
package lessonwalk
