package tools

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/a-h/templ"

	"outlierlab/web/httperr"
	"outlierlab/web/page"
	"outlierlab/web/tabstate"
	"outlierlab/web/templates"
	"outlierlab/web/view"
)

// /whatif: "what would outlier detection have done last night?" An access
// log (Envoy's default format, Istio's, JSON lines), uploaded or pasted,
// with an optional cluster config, replayed through the detector by
// engine/whatif; the page shows the events in the replay format, the lines
// that did not parse with their numbers, what a log cannot show, and the
// lab's charts for that traffic.

const (
	// MaxWhatifBytes bounds an upload (log and config together): larger
	// is 413. Some 20 000 lines of Envoy's default format.
	MaxWhatifBytes = 4 << 20
	// maxWhatifFrames bounds the intervals a replay draws: an hour at 1 s,
	// ten at Envoy's 10 s. A log spanning more is refused before it runs.
	maxWhatifFrames = 3600
)

// whatifForm is what a post gives.
type whatifForm struct {
	log, events     []byte
	config, cluster string
	seed            uint64
}

// sampleLog is a log to try the page with (testdata/whatif/envoy.log, a
// copy, since embed reads only this package's files): six hosts of
// "search", one answering five 503s in a row at 20 s.
//
//go:embed whatif_sample.log
var sampleLog string

// whatifPage handles GET /whatif: the form; ?sample=envoy fills the log
// box with the sample log, so a visitor without a log of their own can
// press Replay (issue 38: the page offered no log to try).
func (s *Tools) whatifPage(w http.ResponseWriter, r *http.Request) {
	err := page.OnlyParams(r.URL.RawQuery, "the what-if page", "sample")
	sample := r.URL.Query().Get("sample")
	if err == nil && r.URL.Query().Has("sample") && sample != "envoy" {
		err = &httperr.FieldError{Field: "sample", Msg: fmt.Sprintf("%q is not a sample log (allowed: envoy)", httperr.Truncate(sample, 40))}
	}
	if err != nil {
		s.pages.BadRequest(w, r, httperr.Status[httperr.KindMalformed], r.URL.Path, httperr.Text(err))
		return
	}
	v := s.whatifView(whatifForm{seed: tabstate.DefaultSeed})
	if sample == "envoy" {
		v.LogText = sampleLog
	}
	s.pages.Render(w, r, http.StatusOK, templates.WhatifPage(v))
}

func (s *Tools) whatifView(f whatifForm) view.Whatif {
	return view.Whatif{Layout: s.pages.Layout("What if: replay an access log", "lab", true),
		Config: f.config, Cluster: f.cluster, Seed: strconv.FormatUint(f.seed, 10),
		MaxBytes: fmt.Sprintf("%d MiB", MaxWhatifBytes>>20)}
}

// whatifPost handles POST /whatif: the form again with every problem
// named by its field (log, config, cluster, seed) — a 400, or a 422 for a
// replay past the budget — or the replay, admitted by the budget (a 503
// when the lab is busy) and made on a streamed page with its progress.
func (s *Tools) whatifPost(w http.ResponseWriter, r *http.Request) {
	f, kind, err := readWhatifForm(w, r)
	var rp *replayPlan
	if err == nil {
		kind = httperr.KindMalformed
		if rp, err = planReplay(f); err == nil {
			if err = s.replayWork(rp); err != nil {
				kind = httperr.KindOverBudget
			}
		}
	}
	if err != nil {
		v := s.whatifView(f)
		v.Problems = strings.Split(httperr.Text(err), "\n")
		s.pages.Render(w, r, httperr.Status[kind], templates.WhatifPage(v))
		return
	}
	v := s.whatifView(f)
	s.heavy(w, r, 1, v.Layout, fmt.Sprintf("Replaying %d requests on %d hosts", rp.plan.Requests, rp.plan.Hosts), func(p *page.Progress) (templ.Component, error) {
		res, err := rp.run(p)
		if err != nil {
			return nil, err
		}
		v.Result = res
		return templates.WhatifContent(v), nil
	})
}

// readWhatifForm reads a multipart or url-encoded post, at most
// MaxWhatifBytes of it (413 past that).
func readWhatifForm(w http.ResponseWriter, r *http.Request) (whatifForm, httperr.Kind, error) {
	f := whatifForm{seed: tabstate.DefaultSeed}
	tooLarge := &httperr.FieldError{Field: "log", Msg: fmt.Sprintf("the upload is larger than %d MiB (allowed up to %d bytes: a shorter stretch of the log)", MaxWhatifBytes>>20, MaxWhatifBytes)}
	if r.ContentLength > MaxWhatifBytes {
		return f, httperr.KindTooLarge, tooLarge
	}
	r.Body = http.MaxBytesReader(w, r.Body, MaxWhatifBytes)
	values, files, err := readWhatifParts(r)
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok || strings.Contains(err.Error(), "request body too large") {
			return f, httperr.KindTooLarge, tooLarge
		}
		return f, httperr.KindMalformed, &httperr.FieldError{Msg: "cannot read the form: " + err.Error()}
	}
	f.config, f.cluster = values.Get("config"), strings.TrimSpace(values.Get("cluster"))
	var errs []error
	if v := strings.TrimSpace(values.Get("seed")); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || n < 1 {
			errs = append(errs, &httperr.FieldError{Field: "seed", Msg: fmt.Sprintf("%q is not a seed (allowed a whole number from 1)", httperr.Truncate(v, 40))})
		} else {
			f.seed = n
		}
	}
	if f.events = files["events"]; len(bytes.TrimSpace(f.events)) == 0 {
		f.events = []byte(values.Get("events_text"))
	}
	if f.log = files["log"]; len(bytes.TrimSpace(f.log)) == 0 {
		f.log = []byte(values.Get("log_text"))
	}
	if len(bytes.TrimSpace(f.log)) == 0 {
		err = &httperr.FieldError{Field: "log", Msg: "is empty (upload an access log, or paste its lines)"}
	}
	return f, httperr.KindMalformed, errors.Join(append(errs, err)...)
}

// maxWhatifParts bounds the parts of a what-if form (it has six fields).
const maxWhatifParts = 100

// readWhatifParts reads the form's values (the body's, then the query's,
// as Request.FormValue has them) and its files' bytes by field name (the
// first file of each). A multipart form is read part by part as it
// streams in, each part into memory: the body is bounded already
// (MaxWhatifBytes). multipart's own parser (ParseMultipartForm) writes a
// file over its memory limit to os.TempDir(), which a container whose
// root is read-only cannot write: a 2 MiB log was a 400 there (issue 34).
func readWhatifParts(r *http.Request) (url.Values, map[string][]byte, error) {
	mr, err := r.MultipartReader()
	if errors.Is(err, http.ErrNotMultipart) {
		if err := r.ParseForm(); err != nil {
			return nil, nil, err
		}
		return r.Form, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	values, files := url.Values{}, map[string][]byte{}
	for n := 0; ; n++ {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		if n >= maxWhatifParts {
			return nil, nil, fmt.Errorf("more than %d parts (the form has six fields)", maxWhatifParts)
		}
		b, err := io.ReadAll(p)
		if err != nil {
			return nil, nil, err
		}
		name := p.FormName()
		switch {
		case name == "":
		case p.FileName() != "":
			if _, ok := files[name]; !ok {
				files[name] = b
			}
		default:
			values.Add(name, string(b))
		}
	}
	for k, vs := range r.URL.Query() {
		values[k] = append(values[k], vs...)
	}
	return values, files, nil
}
