package templates

import (
	"testing"

	"outlierlab/web/view"
)

// The course's time is its lessons' minutes added up.
func TestCourseMinutes(t *testing.T) {
	ls := []view.LessonLink{{Minutes: 20}, {Minutes: 25}, {Minutes: 12}}
	if got := courseMinutes(ls); got != 57 {
		t.Errorf("courseMinutes = %d, want 57", got)
	}
	if got := courseMinutes(nil); got != 0 {
		t.Errorf("no lessons: %d, want 0", got)
	}
}
