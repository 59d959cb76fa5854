// Package tools serves the pages that check a config beyond one run of the
// lab: /compare, /sweep and /whatif (an access log, and Envoy's own event
// log beside it, replayed).
package tools

import (
	"log/slog"
	"net/http"

	"github.com/a-h/templ"
	"github.com/go-chi/chi/v5"

	"outlierlab/web/budget"
	"outlierlab/web/memo"
	"outlierlab/web/page"
	"outlierlab/web/tabstate"
	"outlierlab/web/view"
)

// Tools serves the pages that check a config beyond one run of the lab:
// two runs side by side (/compare), a setting swept over seeds (/sweep),
// an access log replayed (/whatif). Each is heavy work, admitted by the
// budget and answered as a progress page.
type Tools struct {
	pages  *page.Pages
	runs   *tabstate.RunCache
	budget *budget.Budget
	log    *slog.Logger
	// maxBody bounds a lint request's body (the lab's command limit).
	maxBody int64
	// sweeps keeps recent sweeps by their address, so a reload or a room
	// of attendees opening one link runs it once.
	sweeps *memo.Cache[string, sweepEntry]
}

// NewTools is the tools' pages over the lab's run cache and the budget;
// maxBody bounds a lint request's body.
func NewTools(pages *page.Pages, runs *tabstate.RunCache, b *budget.Budget, log *slog.Logger, maxBody int64) *Tools {
	return &Tools{pages: pages, runs: runs, budget: b, log: log, maxBody: maxBody, sweeps: memo.New[string, sweepEntry](16)}
}

// heavy admits a page's heavy work on cores and streams it as a progress
// page (page.Work); past the budget's queue it is a 503 with Retry-After.
func (s *Tools) heavy(w http.ResponseWriter, r *http.Request, cores int, l view.Layout, title string, work func(*page.Progress) (templ.Component, error)) {
	release, err := s.budget.Admit(r.Context(), cores)
	if err != nil {
		budget.Refuse(w, err)
		return
	}
	defer release()
	s.pages.Work(w, r, l, title, work)
}

// Routes registers the tools' pages.
func (s *Tools) Routes(r chi.Router) {
	r.Get("/compare", s.comparePage)
	r.Get("/sweep", s.sweepPage)
	r.Get("/whatif", s.whatifPage)
	r.Post("/whatif", s.whatifPost)
	// The lab page's own tools: paste a cluster, lint the tab's settings.
	r.Post("/lab/import", s.Import)
	r.Post("/lab/lint", s.Lint)
}
