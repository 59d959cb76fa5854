// Package workshopday_test is a workshop day, for real: the production
// setup as processes (a 3-node NATS cluster, two outlierlab replicas,
// Debian's nginx with deploy/nginx.conf as shipped) and people in
// headless Chromium through nginx, round robin, no stickiness.
//
//   - TestWorkshopDay: every shipped plan played through by an
//     instructor (two tabs), a projector and four attendees, every page
//     checked after every move; a replica killed, both restarted, a NATS
//     node killed on the way; the recording at the end.
//   - TestWorkshopChallenge: the production plan's challenge scene:
//     three phones submit through their forms, every page shows the
//     three points and the front, follows the spotlight; the handout.
//   - TestFreeLabCommands: a free lab's slider moved 100 times, each
//     move applied.
//   - BenchmarkFollowers: 50 followers (Go SSE clients) through nginx,
//     30 instructor moves: move → every follower's event, CPU per move.
//
// The harness: deploy_test.go (processes: binaries, NATS, replicas,
// nginx), pages_test.go (the people's pages, what a page shows, the
// checks, the actions), day_test.go (the day and its checks),
// challenge_test.go, freelab_test.go, bench_test.go. Run it with
//
//	go test ./web/workshopday -run TestWorkshopDay -v -artifacts -outputdir /tmp/wd
//
// (-artifacts keeps the screenshots and the processes' logs there).
package workshopday_test

import (
	"os"
	"testing"

	"outlierlab/web/internal/browsertest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		_ = os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// needTools skips the test where nginx (or, with browser, Chromium) is
// missing, or in -short mode; in CI ($CI set) a missing program fails
// it instead: .ci/run installs both.
func needTools(t testing.TB, browser bool) {
	t.Helper()
	if testing.Short() {
		t.Skip("the workshop day runs processes and browsers: skipped in -short mode")
	}
	var missing []string
	if nginxPath() == "" {
		missing = append(missing, "nginx (apt-get install nginx)")
	}
	if browser && browsertest.FindChromium() == "" {
		missing = append(missing, "chromium (apt-get install -y chromium)")
	}
	if len(missing) == 0 {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%v not installed (.ci/run installs them)", missing)
	}
	t.Skipf("%v not installed: the workshop day through nginx is skipped", missing)
}
