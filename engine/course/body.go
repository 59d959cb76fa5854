package course

import (
	"fmt"
	"strings"
)

// The body's one block syntax: prose shown only after the prediction.
const (
	afterPredictionOpen = "::: after-prediction"
	blockClose          = ":::"
)

// BodyPart is a run of the body's markdown: shown as the page opens, or
// (AfterPrediction) only once the learner has answered the prediction.
type BodyPart struct {
	Markdown        string
	AfterPrediction bool
}

// BodyParts splits the body at its "::: after-prediction" … ":::" blocks,
// in order, the marker lines left out. Load has checked the markers.
func (l *Lesson) BodyParts() []BodyPart {
	parts, err := splitBody(l.Markdown, l.bodyLine)
	if err != nil {
		return []BodyPart{{Markdown: l.Markdown}}
	}
	return parts
}

// splitBody cuts body into parts at the block markers; first is the file
// line of the body's first line (0: count from the body). An unbalanced,
// nested, empty or unknown block is an error naming its line.
func splitBody(body string, first int) ([]BodyPart, error) {
	if first < 1 {
		first = 1
	}
	var parts []BodyPart
	var cur []string
	inBlock, openLine := false, 0
	fence := "" // the fence of the code block we are in ("```", "~~~")
	flush := func(after bool) {
		md := strings.Join(cur, "\n")
		if strings.TrimSpace(md) != "" {
			parts = append(parts, BodyPart{Markdown: md, AfterPrediction: after})
		}
		cur = nil
	}
	lines := strings.Split(body, "\n")
	for i, line := range lines {
		n := first + i
		t := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(t, fence) {
				fence = ""
			}
			cur = append(cur, line)
			continue
		}
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fence = t[:3]
			cur = append(cur, line)
			continue
		}
		if !strings.HasPrefix(t, ":::") {
			cur = append(cur, line)
			continue
		}
		switch {
		case t == afterPredictionOpen && inBlock:
			return nil, fmt.Errorf("line %d: %q inside the block opened at line %d (blocks do not nest; close it with a line %q first)", n, afterPredictionOpen, openLine, blockClose)
		case t == afterPredictionOpen:
			flush(false)
			inBlock, openLine = true, n
		case t == blockClose && !inBlock:
			return nil, fmt.Errorf("line %d: %q closes no block (open one with a line %q)", n, blockClose, afterPredictionOpen)
		case t == blockClose:
			if strings.TrimSpace(strings.Join(cur, "\n")) == "" {
				return nil, fmt.Errorf("line %d: the %q block is empty", openLine, afterPredictionOpen)
			}
			flush(true)
			inBlock = false
		default:
			return nil, fmt.Errorf("line %d: unknown block %q (the one block is %q, closed by a line %q)", n, t, afterPredictionOpen, blockClose)
		}
	}
	if inBlock {
		return nil, fmt.Errorf("line %d: %q is never closed (a line %q ends it)", openLine, afterPredictionOpen, blockClose)
	}
	flush(false)
	return parts, nil
}
