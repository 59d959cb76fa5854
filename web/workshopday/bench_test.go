package workshopday_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"outlierlab/web/tabid"
)

// BenchmarkFollowers: a room through nginx in the production setup, 50
// followers (Go SSE clients, each with its own identity and gzip, as a
// browser asks) and 30 instructor moves (the cap slider, as the
// instructor's page posts it), each waited for on every follower. One op
// is the 30 moves. It reports the latency from a move's post to each
// follower's event (p50, p99, the slowest), and the CPU every process of
// the deployment (replicas, NATS, nginx) used per move.
//
//	go test ./web/workshopday -run '^$' -bench Followers -benchtime 1x
func BenchmarkFollowers(b *testing.B) {
	needTools(b, false)
	const followers, moves = 50, 30
	d := startDeployment(b, b.TempDir())
	room := newBenchRoom(b, d.Base)
	events := make(chan followerEvent, followers*4)
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	for i := range followers {
		go room.follow(ctx, fmt.Sprintf("bench-follower-%09d", i), events)
	}
	// Every follower has the room's first redraw (the cap at 10).
	room.await(b, events, followers, "10", time.Now(), 30*time.Second)

	var lat []time.Duration
	cpu0 := d.cpuSeconds()
	seq, value := 0, 10
	b.ResetTimer()
	for range b.N {
		for range moves {
			value = value%80 + 11 // 11–90, never the last
			seq++
			sent := time.Now()
			room.move(b, seq, value)
			lat = append(lat, room.await(b, events, followers, strconv.Itoa(value), sent, 10*time.Second)...)
		}
	}
	b.StopTimer()
	n := float64(b.N * moves)
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
	b.ReportMetric((d.cpuSeconds()-cpu0)/n, "cpu-s/move")
	b.ReportMetric(0, "ns/op") // the op is 30 moves waited for: its time says nothing more
}

// benchRoom is a room made through nginx, with its instructor's key.
type benchRoom struct {
	base, code, key string
}

type followerEvent struct {
	tab, value string
	at         time.Time
}

func newBenchRoom(b *testing.B, base string) *benchRoom {
	b.Helper()
	req, _ := http.NewRequest("POST", base+"/rooms", strings.NewReader(`{"preset":"search-cache"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer res.Body.Close()
	var room struct{ Code, Key string }
	if body, _ := io.ReadAll(res.Body); res.StatusCode != 201 || json.Unmarshal(body, &room) != nil {
		b.Fatalf("POST /rooms through nginx: %d %s", res.StatusCode, body)
	}
	return &benchRoom{base: base, code: room.Code, key: room.Key}
}

// follow is one follower: it takes an identity from the room's page (its
// cookie), then reads its stream, reconnecting as a browser does, and
// sends each cap value it is shown.
func (r *benchRoom) follow(ctx context.Context, name string, out chan<- followerEvent) {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	if res, err := c.Get(r.base + "/r/" + r.code); err == nil {
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	// Its tab, issued for the browser identity the page gave it (web/tabid).
	u, _ := url.Parse(r.base)
	browser := ""
	for _, ck := range jar.Cookies(u) {
		if ck.Name == tabid.Cookie {
			browser = ck.Value
		}
	}
	tab := tabid.For(browser, name)
	signals := `{"tab":"` + tab + `","room":"` + r.code + `","roomRole":"follow","follow":true,"preset":"search-cache"}`
	last := ""
	for ctx.Err() == nil {
		req, _ := http.NewRequestWithContext(ctx, "POST", r.base+"/lab/stream", strings.NewReader(signals))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Datastar-Request", "true")
		res, err := c.Do(req)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			line := sc.Text()
			if !strings.HasPrefix(line, "data: signals ") {
				continue
			}
			_, v, ok := strings.Cut(line, `"max_ejection_percent":`)
			if !ok {
				continue
			}
			v = strings.TrimRight(strings.SplitN(v, ",", 2)[0], "}")
			if v != last {
				last = v
				select {
				case out <- followerEvent{tab: tab, value: v, at: time.Now()}:
				case <-ctx.Done():
				}
			}
		}
		res.Body.Close()
	}
}

// instructorBrowser is the instructor's browser identity (web/tabid).
const instructorBrowser = "00000000000000000000000000000001"

// move posts the instructor's cap, as its page does.
func (r *benchRoom) move(b *testing.B, seq, value int) {
	b.Helper()
	body := `{"tab":"` + tabid.For(instructorBrowser, "bench-instructor-0000001") + `","room":"` + r.code + `","roomRole":"present","preset":"search-cache","seq":` + strconv.Itoa(seq) +
		`,"cfg":{"max_ejection_percent":` + strconv.Itoa(value) + `}}`
	req, _ := http.NewRequest("POST", r.base+"/lab/cmd/set", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Datastar-Request", "true")
	req.Header.Set("Origin", r.base)
	req.AddCookie(&http.Cookie{Name: "olab_key_" + r.code, Value: r.key})
	req.AddCookie(&http.Cookie{Name: tabid.Cookie, Value: instructorBrowser})
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode/100 != 2 {
		b.Fatalf("the instructor's move through nginx: %d", res.StatusCode)
	}
}

// await waits until n followers were shown value, and returns how long
// after sent each was; it fails the benchmark after within, naming how
// many had it.
func (r *benchRoom) await(b *testing.B, events <-chan followerEvent, n int, value string, sent time.Time, within time.Duration) []time.Duration {
	b.Helper()
	seen := map[string]bool{}
	var out []time.Duration
	timer := time.NewTimer(time.Until(sent.Add(within)))
	defer timer.Stop()
	for len(seen) < n {
		select {
		case e := <-events:
			if e.value != value || seen[e.tab] {
				continue
			}
			seen[e.tab] = true
			out = append(out, e.at.Sub(sent))
		case <-timer.C:
			b.Fatalf("cap %s: %d of %d followers had it within %v of the move", value, len(seen), n, within)
		}
	}
	return out
}
