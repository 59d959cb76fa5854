package cli

import (
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"
)

func TestRunCompareAndSweep(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		out, err string
	}{
		{"compare text", []string{"-scenario", "search-cache", "-compare", "max_ejection_percent=34", "-format", "text"}, 0,
			"B ejects h5 4 times, A never.\n  Clients: 5.00% → 0.74% failures.", ""},
		{"compare over -set", []string{"-scenario", "search-cache", "-set", "max_ejection_percent=34", "-compare", "max_ejection_percent=10", "-format", "text"}, 0,
			"B sets max_ejection_percent to 10 (A: 34).\n  A ejects h5 4 times, B never.", ""},
		{"compare csv", []string{"-scenario", "search-cache", "-compare", "max_ejection_percent=34", "-format", "csv"}, 0, "ejections:h5,0,4\n", ""},
		{"compare bad value", []string{"-scenario", "search-cache", "-compare", "max_ejection_percent=134"}, 2, "", "B: max_ejection_percent: 134 is out of range (allowed 0–100"},
		{"compare bad pair", []string{"-scenario", "search-cache", "-compare", "34"}, 2, "", `-compare: "34": want name=value`},
		{"sweep text, seeds as a band", []string{"-scenario", "search-cache", "-sweep", "max_ejection_percent=10:20:10", "-seeds", "1-5", "-format", "text"}, 0,
			"20                    0.74 (0.73–0.74)", ""},
		{"sweep bad range", []string{"-scenario", "search-cache", "-sweep", "max_ejection_percent=10:0:1", "-format", "csv"}, 2, "", "-sweep max_ejection_percent=10:0:1: to 0 is below from 10"},
		{"sweep bad value", []string{"-scenario", "search-cache", "-sweep", "max_ejection_percent=90:110:10", "-format", "csv"}, 2, "", "max_ejection_percent=110: max_ejection_percent: 110 is out of range"},
		{"sweep and -set of the same", []string{"-scenario", "search-cache", "-set", "max_ejection_percent=3", "-sweep", "max_ejection_percent=0:10:10", "-format", "csv"}, 2, "", "the sweep sets it"},
		{"sweep bad seeds", []string{"-scenario", "search-cache", "-sweep", "max_ejection_percent=0:10:10", "-seeds", "5-1"}, 2, "", "-seeds:"},
		{"seeds without sweep", []string{"-scenario", "search-cache", "-seeds", "1-5"}, 2, "", "-seeds goes with -sweep"},
		{"both", []string{"-scenario", "search-cache", "-compare", "a=1", "-sweep", "b=1:2:1"}, 2, "", "do not go together"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runCLI(tc.args...)
			if code != tc.code || !strings.Contains(out, tc.out) || !strings.Contains(errs, tc.err) {
				t.Fatalf("exit %d (want %d)\nstdout %s\nstderr %s\nwant %q / %q", code, tc.code, out, errs, tc.out, tc.err)
			}
		})
	}
}

func TestRunSweepCSVAndJSON(t *testing.T) {
	t.Parallel()
	code, out, errs := runCLI("-scenario", "search-cache", "-sweep", "max_ejection_percent=0:100:1", "-format", "csv")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(rows) != 102 || rows[0][0] != "max_ejection_percent" || rows[0][2] != "failure_pct" {
		t.Fatalf("%d rows, %v: %v", len(rows), err, rows[0])
	}
	// The cap admits one host of six from 17% (100·1/6 = 16.7).
	if rows[17][0] != "16" || rows[17][4] != "0" || rows[18][0] != "17" || rows[18][4] != "4" {
		t.Errorf("rows 16–17: %v %v", rows[17], rows[18])
	}
	code, out, errs = runCLI("-scenario", "search-cache", "-sweep", "max_ejection_percent=10,34", "-seeds", "1,2", "-format", "json")
	var sw struct {
		Points []struct {
			Value     string `json:"value"`
			Seed      uint64 `json:"seed"`
			Ejections int    `json:"ejections"`
		} `json:"points"`
		Bands []struct {
			Value string `json:"value"`
		} `json:"bands"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &sw) != nil || len(sw.Points) != 4 || len(sw.Bands) != 2 || sw.Points[3].Value != "34" || sw.Points[3].Seed != 2 {
		t.Errorf("json: exit %d %s\n%+v", code, errs, sw)
	}
}
