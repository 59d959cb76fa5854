package web

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"slices"

	"outlierlab/engine/envoyconf"
	"outlierlab/engine/scenario"
	"outlierlab/engine/settings"
	"outlierlab/web/httperr"
	"outlierlab/web/tabstate"
)

// maxImportBytes bounds a pasted cluster or DestinationRule.
const maxImportBytes = 256 << 10

// importCluster is POST /lab/import?preset=NAME. The body is an Envoy
// cluster (whole, or its outlier_detection block) or an Istio
// DestinationRule, YAML or JSON, read by envoyconf.ParseCluster as Envoy
// (or istiod) reads it. The answer is 303 to the lab permalink that runs
// the preset with it: every setting the document gives that differs from
// the preset's own. A document Envoy or istiod would refuse is 400, each
// problem naming its field; a valid one the lab cannot show (a value
// beyond a control's span, a setting with no control) is 422, naming it.
//
// The lab's "Paste your cluster" form posts the same route, url-encoded
// (fields cluster and preset): with JavaScript, through Datastar, which
// is answered with a stream that loads the cluster into the tab
// (importStream); without, with the 303, or a page that names the
// problems above the form again (importFormPage).
func (s *Lab) importCluster(w http.ResponseWriter, r *http.Request) {
	req, err := readImport(w, r)
	if err != nil {
		httperr.Plain(w, httperr.Status[httperr.KindOf(err, httperr.KindMalformed)], httperr.Text(err))
		return
	}
	imp := importDoc(req.preset, req.doc)
	switch {
	case req.form && r.Header.Get("Datastar-Request") == "true":
		s.importStream(w, r, imp)
	case imp.err == nil:
		http.Redirect(w, r, "/lab?"+imp.query, http.StatusSeeOther)
	case req.form:
		s.importFormPage(w, r, req, imp)
	default:
		httperr.Plain(w, imp.status, imp.err.Error())
	}
}

// importRequest is what a post to /lab/import holds.
type importRequest struct {
	preset string
	doc    []byte
	// form: the lab's form posted it (url-encoded, with a cluster field).
	form bool
}

// readImport reads the body: the document itself, or the lab form's
// fields. A body of any other type that parses as a form without a
// cluster field (curl --data-binary sends YAML as a form) is the document.
func readImport(w http.ResponseWriter, r *http.Request) (importRequest, error) {
	req := importRequest{preset: r.URL.Query().Get("preset")}
	// A form's encoding may triple the document's size.
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 3*maxImportBytes))
	if err != nil {
		if _, tooLarge := errors.AsType[*http.MaxBytesError](err); tooLarge {
			return req, httperr.WithKind(httperr.KindTooLarge, fmt.Errorf("the document is larger than %d bytes", maxImportBytes))
		}
		return req, httperr.WithKind(httperr.KindMalformed, errors.New("cannot read the document: "+err.Error()))
	}
	req.doc = body
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct == "application/x-www-form-urlencoded" {
		if q, err := url.ParseQuery(string(body)); err == nil && q.Has("cluster") {
			req.form, req.doc = true, []byte(q.Get("cluster"))
			if p := q.Get("preset"); p != "" {
				req.preset = p
			}
		}
	}
	if req.preset == "" {
		req.preset = tabstate.DefaultPreset
	}
	if len(req.doc) > maxImportBytes {
		return req, httperr.WithKind(httperr.KindTooLarge, fmt.Errorf("the document is larger than %d bytes", maxImportBytes))
	}
	return req, nil
}

// imported is a document read for the lab: its cluster and the lab query
// that runs it, or the error with its status.
type imported struct {
	preset  scenario.Preset
	cluster envoyconf.Cluster
	query   string
	link    tabstate.LabLink
	status  int
	err     error
}

// importDoc reads a document for the preset: 404 for an unknown preset,
// 400 for a document Envoy or istiod refuses, 422 for one the lab's
// controls cannot show.
func importDoc(name string, doc []byte) imported {
	p, ok := scenario.Lookup(name)
	if !ok {
		return imported{status: http.StatusNotFound, err: tabstate.UnknownPreset("preset", name)}
	}
	c, err := envoyconf.ParseCluster(doc)
	if err != nil {
		return imported{preset: p, status: http.StatusBadRequest, err: errors.New(httperr.Text(err))}
	}
	imp := imported{preset: p, cluster: c, query: importQuery(p, c)}
	if imp.link, err = tabstate.ParseLabQuery(imp.query); err != nil {
		return imported{preset: p, cluster: c, status: http.StatusUnprocessableEntity, err: errors.New("the lab cannot show this cluster:\n" + httperr.Text(err))}
	}
	return imp
}

// importQuery is the lab query of the preset run with the imported
// cluster: the preset, then each of the cluster's settings whose value
// differs from the preset's own, by name.
func importQuery(p scenario.Preset, c envoyconf.Cluster) string {
	sc := p.Scenario()
	q := url.Values{}
	set := c.Settings()
	for _, name := range slices.Sorted(maps.Keys(set)) {
		if own, ok := settings.Value(sc, sc.Outlier, name); ok && own == set[name] {
			continue
		}
		q.Set(name, set[name])
	}
	query := "preset=" + url.QueryEscape(p.Name)
	if len(q) > 0 {
		query += "&" + q.Encode()
	}
	return query
}
