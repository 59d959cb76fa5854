package page

import (
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/a-h/templ"

	"outlierlab/web/httperr"
	"outlierlab/web/templates"
	"outlierlab/web/view"
)

// Work answers a request whose content takes a while — a sweep, a
// compare, a what-if replay, each admitted by the budget first: the
// page's frame and a progress bar go out at once, the bar moves as the
// work reports, and the content follows in the same response when the
// work is done (web/static/css hides the bar once anything follows it). The
// status, 200, is sent first, so a handler finds every input error
// before (it plans, checks the budget and is admitted); an error of the
// work itself is shown in the page. Every write moves the write deadline
// on, so work longer than the server's WriteTimeout is not cut at it,
// and the response is never silent for long.
func (p *Pages) Work(w http.ResponseWriter, r *http.Request, l view.Layout, title string, work func(pr *Progress) (templ.Component, error)) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // a proxy passes the progress on as it comes
	rc := http.NewResponseController(w)
	body := templ.ComponentFunc(func(ctx context.Context, tw io.Writer) error {
		pr := &Progress{w: tw, rc: rc, every: progressEvery}
		pr.start(title)
		content, err := work(pr)
		pr.end()
		if ctx.Err() != nil {
			return ctx.Err() // the visitor left: nobody reads the rest
		}
		if err != nil {
			return templates.WorkFailed(title, httperr.Shown(w, err, httperr.KindInternal)).Render(ctx, tw)
		}
		return content.Render(ctx, tw)
	})
	w.WriteHeader(http.StatusOK)
	if err := templates.Page(l).Render(templ.WithChildren(r.Context(), body), w); err != nil && r.Context().Err() == nil {
		p.log.Error("render", "path", r.URL.Path, "err", err)
	}
}

// progressEvery is the least time between two of the bar's steps; the
// write deadline moves by progressDeadline at each.
const (
	progressEvery    = 250 * time.Millisecond
	progressDeadline = 30 * time.Second
)

// Progress is a work page's bar: each step is a paragraph with a
// <progress>, of which web/static/css shows the last.
type Progress struct {
	mu    sync.Mutex
	w     io.Writer
	rc    *http.ResponseController
	every time.Duration
	last  time.Time
	ended bool
}

func (p *Progress) start(title string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, _ = io.WriteString(p.w, `<div class="work" role="status" aria-live="polite"><h1>`+html.EscapeString(title)+`</h1>`)
	p.writeLocked(`<p class="work-step"><progress></progress> starting…</p>`)
}

// Step reports done of total, in unit ("runs"); steps closer than every
// to the last one are dropped, but for the last.
func (p *Progress) Step(done, total int, unit string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ended || (done < total && time.Since(p.last) < p.every) {
		return
	}
	pct := 0
	if total > 0 {
		pct = 100 * done / total
	}
	p.writeLocked(fmt.Sprintf(`<p class="work-step"><progress max="%d" value="%d">%d%%</progress> %d of %d %s</p>`,
		total, done, pct, done, total, html.EscapeString(unit)))
}

// Phase reports a step without a count ("drawing the charts").
func (p *Progress) Phase(what string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.ended {
		p.writeLocked(`<p class="work-step"><progress></progress> ` + html.EscapeString(what) + `</p>`)
	}
}

// end closes the bar: later steps (a straggling worker) are dropped.
func (p *Progress) end() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ended = true
	_ = p.rc.SetWriteDeadline(time.Now().Add(progressDeadline))
	_, _ = io.WriteString(p.w, "</div>\n")
}

// writeLocked writes a step, flushes it to the visitor and moves the
// write deadline on. Callers hold mu.
func (p *Progress) writeLocked(s string) {
	p.last = time.Now()
	_ = p.rc.SetWriteDeadline(p.last.Add(progressDeadline))
	_, _ = io.WriteString(p.w, s+"\n")
	if f, ok := p.w.(interface{ Flush() error }); ok {
		_ = f.Flush()
	}
}
