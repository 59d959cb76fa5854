package web

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"

	"outlierlab/engine/envoyconf"
	"outlierlab/engine/scenario"
	"outlierlab/engine/settings"
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
func (s *Server) importCluster(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("preset")
	if name == "" {
		name = defaultPreset
	}
	p, ok := scenario.Lookup(name)
	if !ok {
		httpError(w, http.StatusNotFound, fmt.Sprintf("preset: there is no scenario preset called %q", truncate(name, 60)))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxImportBytes))
	if err != nil {
		if _, tooLarge := errors.AsType[*http.MaxBytesError](err); tooLarge {
			httpError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the document is larger than %d bytes", maxImportBytes))
			return
		}
		httpError(w, http.StatusBadRequest, "cannot read the document: "+err.Error())
		return
	}
	c, err := envoyconf.ParseCluster(body)
	if err != nil {
		httpError(w, http.StatusBadRequest, errorText(err))
		return
	}
	query := importQuery(p, c)
	if _, err := parseLabQuery(query); err != nil {
		httpError(w, http.StatusUnprocessableEntity, "the lab cannot show this cluster:\n"+errorText(err))
		return
	}
	http.Redirect(w, r, "/lab?"+query, http.StatusSeeOther)
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
