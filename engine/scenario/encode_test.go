package scenario

import (
	"fmt"
	"strings"
	"testing"
)

// The text output's last line gives the retries as a share of requests
// and the retry overflows, so the two worlds of max_retries can be told
// apart from the command line.
func TestWriteTextRetries(t *testing.T) {
	sc := retune(t, BadDeploy, map[string]string{"duration": "60s"})
	res := mustRun(t, sc, BadDeploy.Outlier, 1)
	var b strings.Builder
	if err := WriteText(&b, res); err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	want := fmt.Sprintf("; %d retries (%.2f%% of requests), %d retry overflows;", s.Retries, 100*float64(s.Retries)/float64(s.Requests), s.RetryOverflow)
	if s.Retries == 0 || s.RetryOverflow == 0 || !strings.Contains(b.String(), want) {
		t.Errorf("last line lacks %q:\n%s", want, b.String()[strings.LastIndex(strings.TrimSpace(b.String()), "\n")+1:])
	}
}
