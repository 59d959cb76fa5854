// Package challenges serves the tuning challenges alone (engine/challenge):
// /challenges lists them; /challenges/{id} tells the story, shows the
// battery and its goals, and a form of the challenge's unlocked settings
// (the others shown locked); POST /challenges/{id}/grade runs the battery
// on hidden seeds and answers goal by goal; /challenges/{id}/failure opens
// a failed goal's first failing run at the moment it failed, with the
// decision log.
//
// The hidden seeds are derived on the server from a secret (seeds.go) and
// never leave it: pages, answers and links name a run by its index among
// the seeds graded, never by its seed.
package challenges

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"outlierlab/web/httperr"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/yuin/goldmark"

	"outlierlab/engine/challenge"
	"outlierlab/engine/scenario"
	"outlierlab/engine/settings"
	"outlierlab/web/budget"
	"outlierlab/web/clientaddr"
	"outlierlab/web/page"
	"outlierlab/web/tabid"
)

// Deps are what the challenges stand on: the pages' frame, the heavy-work
// budget every grading passes, the log, the proxies whose client address
// is believed (the submission limit of a browser without a cookie), the
// clock (tests replace it) and the secret the hidden seeds derive from.
type Deps struct {
	Pages   *page.Pages
	Budget  *budget.Budget
	Log     *slog.Logger
	Proxies clientaddr.Proxies
	Now     func() time.Time
	// Secret: replicas behind one load balancer must share it, or a
	// failure link served by another replica opens another run. Empty:
	// a random one for this process.
	Secret []byte
	// Every is the least time between two submissions of one browser
	// (default 3 s).
	Every time.Duration
}

// Challenges serves the challenges.
type Challenges struct {
	Deps
	list   []challenge.Challenge
	seeds  *seedSource
	limit  *limiter
	story  map[string]string
	script []byte
	// scriptURL carries the script's digest: cached for good.
	scriptURL string
}

//go:embed challenge.js
var scriptJS []byte

// New serves cs (the shipped challenges: engine/challenge.Load of
// challenges.FS).
func New(cs []challenge.Challenge, d Deps) (*Challenges, error) {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Every <= 0 {
		d.Every = 3 * time.Second
	}
	src, err := newSeedSource(d.Secret)
	if err != nil {
		return nil, err
	}
	h := &Challenges{Deps: d, list: cs, seeds: src, limit: newLimiter(d.Every, 10000), story: map[string]string{}, script: scriptJS}
	md := goldmark.New() // CommonMark; raw HTML is dropped
	for _, c := range cs {
		var b bytes.Buffer
		if err := md.Convert([]byte(c.Story), &b); err != nil {
			return nil, fmt.Errorf("%s: the story: %w", c.ID, err)
		}
		h.story[c.ID] = b.String()
	}
	sum := sha256.Sum256(scriptJS)
	h.scriptURL = "/challenges/challenge.js?v=" + hex.EncodeToString(sum[:6])
	return h, nil
}

// Routes registers the challenges' pages.
func (h *Challenges) Routes(r chi.Router) {
	r.Get("/challenges", h.listPage)
	r.Get("/challenges/challenge.js", h.serveScript)
	r.Get("/challenges/{id}", h.challengePage)
	r.Post("/challenges/{id}/grade", h.grade)
	r.Get("/challenges/{id}/failure", h.failurePage)
}

// serveScript serves the script: cached for good at the address with its
// digest (the challenges' pages), revalidated at the bare one (the course
// page's card, which web/templates renders without knowing the digest).
func (h *Challenges) serveScript(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	etag := `"` + strings.TrimPrefix(h.scriptURL, "/challenges/challenge.js?v=") + `"`
	w.Header().Set("ETag", etag)
	if "/challenges/challenge.js?"+r.URL.RawQuery == h.scriptURL {
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		w.Header().Set("Cache-Control", "no-cache")
	}
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	_, _ = w.Write(h.script)
}

func (h *Challenges) listPage(w http.ResponseWriter, r *http.Request) {
	if len(r.URL.RawQuery) > 0 {
		h.Pages.BadRequest(w, r, httperr.Status[httperr.KindMalformed], "/challenges takes no parameters", "")
		return
	}
	v := List{Layout: h.Pages.Layout("Challenges", "challenges", false)}
	for _, c := range h.list {
		v.Items = append(v.Items, Item{ID: c.ID, Title: c.Title, Summary: c.Summary, URL: "/challenges/" + c.ID,
			Scenarios: len(c.Scenarios), Goals: c.Goals(), Seeds: c.Seeds})
	}
	h.Pages.Render(w, r, http.StatusOK, listPage(v, h.scriptURL))
}

// find is the challenge of the route's {id}, or a 404 page answered.
func (h *Challenges) find(w http.ResponseWriter, r *http.Request) (*challenge.Challenge, bool) {
	c, ok := challenge.ByID(h.list, chi.URLParam(r, "id"))
	if !ok {
		h.Pages.NotFound(w, r, "challenge")
	}
	return c, ok
}

func (h *Challenges) challengePage(w http.ResponseWriter, r *http.Request) {
	c, ok := h.find(w, r)
	if !ok {
		return
	}
	if len(r.URL.RawQuery) > 0 {
		h.Pages.BadRequest(w, r, httperr.Status[httperr.KindMalformed], "/challenges/"+c.ID+" takes no parameters: change the settings in its form", "")
		return
	}
	// The browser's identity bounds its submissions (one every few
	// seconds), whatever address it comes from.
	tabid.Ensure(w, r, h.Proxies.Secure(r))
	h.Pages.Render(w, r, http.StatusOK, challengePage(h.pageView(c, nil, nil), h.scriptURL))
}

// pageView is the challenge's page with sub's values in its form (the
// start's when nil) and a result, if any.
func (h *Challenges) pageView(c *challenge.Challenge, sub challenge.Submission, res *Result) Page {
	v := Page{Layout: h.Pages.Layout(c.Title, "challenges", false), ID: c.ID, Title: c.Title, Summary: c.Summary,
		StoryHTML: h.story[c.ID], Seeds: c.Seeds, GradeURL: "/challenges/" + c.ID + "/grade", ScriptURL: h.scriptURL, Result: res}
	first := &c.Scenarios[0]
	values := effective(c, first, sub)
	for _, name := range c.Unlocked {
		v.Unlocked = append(v.Unlocked, field(name, values[name]))
	}
	if res != nil {
		for i := range v.Unlocked {
			v.Unlocked[i].Invalid = res.Problem != "" && strings.Contains(res.Problem, v.Unlocked[i].Name+":")
		}
	}
	// The locked settings a learner would reach for: the other
	// outlier_detection fields, as the first scenario has them.
	for _, name := range settings.Names(settings.OutlierField) {
		if !slices.Contains(c.Unlocked, name) {
			v.Locked = append(v.Locked, field(name, values[name]))
		}
	}
	for i := range c.Scenarios {
		s := &c.Scenarios[i]
		sv := ScenarioView{ID: s.ID, Title: s.Title, Preset: s.Preset, LabURL: labURL(c, s, sub, 0)}
		for _, g := range s.Goals {
			sv.Goals = append(sv.Goals, g.Words())
		}
		v.Scenarios = append(v.Scenarios, sv)
	}
	v.LabURL = v.Scenarios[0].LabURL
	return v
}

// effective is every setting's value in a scenario's run with sub.
func effective(c *challenge.Challenge, s *challenge.Scenario, sub challenge.Submission) map[string]string {
	p, _ := scenario.Lookup(s.Preset)
	sc, cfg, err := settings.Apply(p, c.Layers(s, sub)...)
	if err != nil { // a refused submission: show the start's values
		sc, cfg, _ = settings.Apply(p, c.Layers(s, nil)...)
	}
	return settings.Values(sc, cfg)
}

func field(name, value string) Field {
	s, _ := settings.Lookup(name)
	return Field{Name: name, Value: value, Unit: s.Unit, Allowed: s.Allowed(), Help: s.Help, Kind: string(s.Kind), Choices: s.Choices}
}

// labURL opens a scenario in the free lab with the challenge's settings
// and sub, at atMs (0: the start). The lab runs its own public seed, not
// a hidden one.
func labURL(c *challenge.Challenge, s *challenge.Scenario, sub challenge.Submission, atMs int64) string {
	q := url.Values{"preset": {s.Preset}}
	for k, v := range c.Settings(s, sub) {
		q.Set(k, v)
	}
	if atMs > 0 {
		q.Set("t", strconv.FormatFloat(float64(atMs)/1000, 'f', -1, 64))
	}
	return "/lab?" + q.Encode()
}
