package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// heavyKind is one of the heaviest requests the lab allows with its
// default budget (budget.BudgetOptions), made a cache miss by n: the load
// test's -heavy clients send them in turn.
type heavyKind struct {
	name string
	req  func(base string, n int) (*http.Request, error)
}

// heavyLab is the lab's heaviest run without retries or overload: the
// longest preset (600 s) at the sliders' ends, 3.3–5 M units of work
// (1.8 M requests, 50 hosts × 600 ticks and their decision log); cap makes
// each a cache miss.
func heavyLab(cap int) string {
	return fmt.Sprintf("preset=flapping&hosts=50&rps=3000&interval=1&max_ejection_percent=%d", cap)
}

var heavyKinds = []heavyKind{
	// 7 values × 4 seeds of the heaviest run: 28 runs, about 93 M units,
	// just under the 100 M ceiling (8 values are 107 M).
	{"sweep", func(base string, n int) (*http.Request, error) {
		return http.NewRequest("GET", base+"/sweep?param=consecutive_5xx&from=1&to=7&seeds=1-4&"+heavyLab(n%100+1), nil)
	}},
	// Two heaviest runs side by side.
	{"compare", func(base string, n int) (*http.Request, error) {
		q := url.Values{"a": {heavyLab(n % 101)}, "b": {heavyLab((n + 50) % 101)}}
		return http.NewRequest("GET", base+"/compare?"+q.Encode(), nil)
	}},
	// 68 hosts over 10 h at 10 s (245 k host-ticks of the 250 k allowed),
	// 40 000 lines (3.5 MB of the 4 MiB allowed).
	{"whatif", func(base string, n int) (*http.Request, error) {
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		_ = mw.WriteField("seed", fmt.Sprint(n%1000+1))
		fw, err := mw.CreateFormFile("log", "access.log")
		if err != nil {
			return nil, err
		}
		_, _ = fw.Write(heavyLog)
		_ = mw.Close()
		req, err := http.NewRequest("POST", base+"/whatif", &b)
		if err == nil {
			req.Header.Set("Content-Type", mw.FormDataContentType())
		}
		return req, err
	}},
	// A lab page at the heaviest run (admitted to a core as a heavy page).
	{"lab", func(base string, n int) (*http.Request, error) {
		return http.NewRequest("GET", base+"/lab?"+heavyLab(n%101), nil)
	}},
}

var heavyLog = func() []byte {
	var b bytes.Buffer
	t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	const lines, hosts = 40000, 68
	for i := range lines {
		at := t0.Add(time.Duration(i) * (10*time.Hour - time.Minute) / lines)
		code := 200
		if i%9 == 8 {
			code = 503
		}
		fmt.Fprintf(&b, "[%s] \"GET / HTTP/1.1\" %d - 0 0 4 3 \"-\" \"ua\" \"id\" \"a\" \"10.0.0.%d:80\"\n", at.Format("2006-01-02T15:04:05.000Z"), code, i%hosts)
	}
	return b.Bytes()
}()

func heavyKindNames() []string {
	var out []string
	for _, k := range heavyKinds {
		out = append(out, k.name)
	}
	return out
}

func lookupHeavyKind(name string) (heavyKind, bool) {
	i := slices.IndexFunc(heavyKinds, func(k heavyKind) bool { return k.name == name })
	if i < 0 {
		return heavyKind{}, false
	}
	return heavyKinds[i], true
}

// heavyStat is what one kind of heavy request got.
type heavyStat struct {
	status map[string]int
	took   []time.Duration // of the 200s
}

// loopHeavy sends client i's heavy requests in turn until end (or ctx
// ends), reading each answer whole; a request under way at end is waited
// for, at most heavyGrace, and counted: a heavy answer may take longer
// than a short run, and a run that dropped it would report none. After a
// 503 it waits the Retry-After it was given, at most a second (a client
// that respects it, as a browser's visitor would reload; the flood of
// 503s is not what is measured).
func (lt *loadTest) loopHeavy(ctx context.Context, end time.Time, i int) {
	client := &http.Client{}
	for n := i * 7919; ctx.Err() == nil && time.Now().Before(end); n++ {
		k := lt.kinds[n%len(lt.kinds)]
		req, err := k.req(lt.base, n)
		if err != nil {
			return
		}
		start := time.Now()
		rctx, cancel := context.WithDeadline(ctx, end.Add(heavyGrace))
		res, err := client.Do(req.WithContext(rctx))
		outcome := "error"
		if err == nil {
			_, cerr := io.Copy(io.Discard, res.Body)
			res.Body.Close()
			outcome = fmt.Sprint(res.StatusCode)
			if cerr != nil {
				outcome += " cut"
			}
		}
		cancel()
		if ctx.Err() != nil {
			return // the run was stopped under it
		}
		lt.heavyDone(k.name, outcome, time.Since(start))
		if err == nil && res.StatusCode == http.StatusServiceUnavailable {
			select {
			case <-ctx.Done():
			case <-time.After(min(time.Second, time.Until(end))):
			}
		}
	}
}

// heavyGrace is how long a heavy request under way at the run's end may
// still take.
const heavyGrace = time.Minute

func (lt *loadTest) heavyDone(kind, outcome string, took time.Duration) {
	lt.heavyMu.Lock()
	defer lt.heavyMu.Unlock()
	st := lt.heavyStats[kind]
	if st == nil {
		st = &heavyStat{status: map[string]int{}}
		lt.heavyStats[kind] = st
	}
	st.status[outcome]++
	if outcome == "200" {
		st.took = append(st.took, took)
	}
}

func (lt *loadTest) heavySummary(w io.Writer) {
	if lt.heavy == 0 {
		return
	}
	lt.heavyMu.Lock()
	defer lt.heavyMu.Unlock()
	fmt.Fprintf(w, "heavy clients %d:\n", lt.heavy)
	for _, k := range lt.kinds {
		st := lt.heavyStats[k.name]
		if st == nil {
			fmt.Fprintf(w, "  %-8s none answered\n", k.name)
			continue
		}
		var parts []string
		for _, s := range slices.Sorted(func(yield func(string) bool) {
			for s := range st.status {
				if !yield(s) {
					return
				}
			}
		}) {
			parts = append(parts, fmt.Sprintf("%s ×%d", s, st.status[s]))
		}
		slices.Sort(st.took)
		p50 := time.Duration(0)
		if len(st.took) > 0 {
			p50 = st.took[len(st.took)/2]
		}
		fmt.Fprintf(w, "  %-8s %s; 200 in p50 %s\n", k.name, strings.Join(parts, ", "), p50.Round(time.Millisecond))
	}
}
