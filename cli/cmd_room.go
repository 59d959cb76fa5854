package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"outlierlab/web/room/recording"
)

// runRoom is `outlierlab room replay FILE`: a workshop's recording (the
// JSON /r/CODE/recording.json exports) as text, one line per entry.
func runRoom(args []string, stdout, stderr io.Writer) int {
	if len(args) != 2 || args[0] != "replay" {
		fmt.Fprintln(stderr, "usage: outlierlab room replay FILE (a workshop's recording.json; - for stdin)")
		return 2
	}
	var in io.Reader = os.Stdin
	if args[1] != "-" {
		f, err := os.Open(args[1])
		if err != nil {
			fmt.Fprintf(stderr, "outlierlab room replay: %v\n", err)
			return 2
		}
		defer f.Close()
		in = f
	}
	var rec struct {
		Room    string            `json:"room"`
		Entries []json.RawMessage `json:"entries"`
	}
	if err := json.NewDecoder(io.LimitReader(in, 64<<20)).Decode(&rec); err != nil {
		fmt.Fprintf(stderr, "outlierlab room replay: %s: not a workshop recording: %v\n", args[1], err)
		return 2
	}
	fmt.Fprintf(stdout, "workshop %s: %d entries\n", rec.Room, len(rec.Entries))
	var t0 int64
	for i, raw := range rec.Entries {
		var head struct {
			T    int64  `json:"t"`
			Kind string `json:"kind"`
		}
		what, err := recording.DescribeEntry(raw)
		if err != nil || json.Unmarshal(raw, &head) != nil {
			fmt.Fprintf(stderr, "outlierlab room replay: entry %d: not a timeline entry: %v\n", i+1, err)
			return 2
		}
		if i == 0 {
			t0 = head.T
		}
		d := time.Duration(head.T-t0) * time.Millisecond
		fmt.Fprintf(stdout, "%02d:%02d  %-8s %s\n", int(d.Minutes()), int(d.Seconds())%60, head.Kind, what)
	}
	return 0
}
