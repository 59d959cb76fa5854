package workshopday_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestFreeLabCommands: one free lab page through nginx (round robin over
// the two replicas: its commands land on either, its stream on one);
// its cap slider moved 100 times as a person does (the value set, an
// input event), each move waited for; each must apply: the page's
// Envoy YAML, which the stream draws from the tab's session, says the
// new value. 100 of 100.
func TestFreeLabCommands(t *testing.T) {
	needTools(t, true)
	d := startDeployment(t, t.ArtifactDir())
	p := newPage(t, startBrowser(t, 1280, 720), "free-lab", "lab", 1280, 720, 5*time.Minute, true)
	if err := p.navigate(d.Base, "/lab?preset=search-cache"); err != nil {
		t.Fatal(err)
	}
	if err := p.shows(want{Preset: "search-cache", YAML: yamlCap("10")}, time.Now().Add(loadWithin)); err != nil {
		t.Fatalf("%s: the free lab through nginx: %v", p, err)
	}
	const moves, giveUp = 100, 10
	applied, lost := 0, []string{}
	for i := range moves {
		v := strconv.Itoa(i*37%100 + 1) // every value 1–100 once, each unlike the last
		start := time.Now()
		if _, err := eval[string](p, `(() => { const el = document.getElementById('c-max_ejection_percent');
			el.value = '`+v+`'; el.dispatchEvent(new Event('input', {bubbles: true})); return el.value; })()`); err != nil {
			t.Fatalf("move %d: %v", i+1, err)
		}
		if err := p.shows(want{YAML: yamlCap(v)}, start.Add(followWithin)); err != nil {
			opened, ended, _ := p.streams()
			lost = append(lost, "move "+strconv.Itoa(i+1)+" to "+v+": "+strings.ReplaceAll(err.Error(), "\n", " ")+" (streams: "+strconv.Itoa(opened)+" opened, "+strconv.Itoa(ended)+" ended)")
			if len(lost) == giveUp {
				t.Errorf("stopped after %d lost moves: %d of %d applied; lost:\n\t%s\n%s", giveUp, applied, i+1, strings.Join(lost, "\n\t"), where(d))
				return
			}
			continue
		}
		applied++
	}
	if applied != moves {
		t.Errorf("%d of %d slider moves applied within %v each; lost:\n\t%s\n%s", applied, moves, followWithin, strings.Join(lost, "\n\t"), where(d))
	}
}

// yamlCap matches the YAML's cap at v (not at v0, v5…).
func yamlCap(v string) string { return `max_ejection_percent: ` + v + `(?![0-9.])` }

// where says where the page's commands and stream went, from the
// replicas' logs.
func where(d *deployment) string {
	return fmt.Sprintf("the replicas answered POST /lab/cmd/set: %s; the page's stream opened on %s", d.requests("/lab/cmd/set"), d.streamOpens())
}
