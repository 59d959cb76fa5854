package tools

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"outlierlab/engine/envoyconf"
	"outlierlab/engine/scenario"
	"outlierlab/engine/settings"
	"outlierlab/engine/sim"
	"outlierlab/web/httperr"
	"outlierlab/web/tabstate"
)

// MaxImportBytes bounds a pasted cluster or DestinationRule.
const MaxImportBytes = 256 << 10

// Import is POST /lab/import?preset=NAME[&name=CLUSTER]. The body
// is one document, told from its content (envoyconf.DetectDocument): an
// Envoy cluster (whole, or its outlier_detection block) or an Istio
// DestinationRule, YAML or JSON, read by envoyconf.ParseCluster as Envoy
// (or istiod) reads it; Envoy's admin /config_dump, in which name chooses
// the cluster (needless when it has one); or Envoy's /clusters?format=json,
// whose host count becomes the lab's hosts. The answer is 303 to the lab
// permalink that runs the preset with it: every setting the document
// gives that differs from the preset's own. A document Envoy or istiod
// would refuse, or none the lab reads, is 400, each problem naming its
// field; a valid one the lab cannot show (a value beyond a control's span,
// a setting with no control) is 422, naming it.
//
// The lab's "Paste your cluster" form posts the same route, url-encoded
// (fields cluster, name, clusters and preset): the cluster's config in
// cluster, Envoy's /clusters in clusters, either may be left empty. With
// JavaScript it goes through Datastar, which is answered with a stream
// that loads the cluster into the tab (importStream); without, with the
// 303, or a page that names the problems above the form again
// (importFormPage).
func (s *Tools) Import(w http.ResponseWriter, r *http.Request) {
	req, err := readImport(w, r)
	if err != nil {
		httperr.Write(w, err, httperr.KindMalformed)
		return
	}
	imp := importDoc(req)
	switch {
	case req.form && r.Header.Get("Datastar-Request") == "true":
		s.importStream(w, r, imp)
	case imp.err == nil:
		http.Redirect(w, r, "/lab?"+imp.query, http.StatusSeeOther)
	case req.form:
		s.importFormPage(w, r, req, imp)
	default:
		httperr.Write(w, httperr.WithKind(imp.kind, imp.err), imp.kind)
	}
}

// importRequest is what a post to /lab/import holds.
type importRequest struct {
	preset string
	// name chooses the cluster in a config dump or /clusters.
	name string
	// doc is the cluster field (or the body), clusters the form's
	// /clusters?format=json.
	doc, clusters []byte
	// form: the lab's form posted it (url-encoded, with a cluster or
	// clusters field).
	form bool
	// mesh is the clients (a mesh's pods) and rps (the traffic they
	// share) the request gives, by setting name: the run becomes a mesh
	// of that many proxies, each with the imported config.
	mesh map[string]string
}

// maxClusterName bounds name: Envoy's names are short, and an error
// quotes it back.
const maxClusterName = 512

// readImport reads the body: the document itself, or the lab form's
// fields. A body of any other type that parses as a form without a
// cluster or clusters field (curl --data-binary sends YAML as a form) is
// the document.
func readImport(w http.ResponseWriter, r *http.Request) (importRequest, error) {
	req := importRequest{preset: r.URL.Query().Get("preset"), name: r.URL.Query().Get("name")}
	// A form's encoding may triple the documents' size.
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 3*MaxImportBytes))
	if err != nil {
		if _, tooLarge := errors.AsType[*http.MaxBytesError](err); tooLarge {
			return req, httperr.WithKind(httperr.KindTooLarge, fmt.Errorf("the document is larger than %d bytes", MaxImportBytes))
		}
		return req, httperr.WithKind(httperr.KindMalformed, errors.New("cannot read the document: "+err.Error()))
	}
	req.doc = body
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct == "application/x-www-form-urlencoded" {
		if q, err := url.ParseQuery(string(body)); err == nil && (q.Has("cluster") || q.Has("clusters")) {
			req.form, req.doc, req.clusters = true, []byte(q.Get("cluster")), []byte(q.Get("clusters"))
			if p := q.Get("preset"); p != "" {
				req.preset = p
			}
			if n := q.Get("name"); n != "" {
				req.name = n
			}
		}
	}
	req.name = strings.TrimSpace(req.name)
	if err := req.readMesh(r.URL.Query(), body); err != nil {
		return req, err
	}
	if req.preset == "" {
		req.preset = tabstate.DefaultPreset
	}
	for _, f := range []struct {
		field string
		doc   []byte
	}{{"cluster", req.doc}, {"clusters", req.clusters}} {
		if len(f.doc) > MaxImportBytes {
			return req, httperr.WithKind(httperr.KindTooLarge, fmt.Errorf("%s: the document is larger than %d bytes", f.field, MaxImportBytes))
		}
	}
	if len(req.name) > maxClusterName {
		return req, httperr.WithKind(httperr.KindMalformed, fmt.Errorf("name: is longer than %d bytes (allowed a cluster's name)", maxClusterName))
	}
	return req, nil
}

// meshSpans are what an import's clients and rps may be: the settings'
// ranges (sim.MaxClients; the rps knob's).
var meshSpans = map[string]httperr.Span{"clients": {Lo: 1, Hi: sim.MaxClients, Unit: "clients"}, "rps": {Lo: 1, Hi: 100000, Unit: "req/s"}}

// readMesh reads clients and rps from the query, or the lab form's fields
// of those names; each out of its range is a 400 naming it.
func (req *importRequest) readMesh(query url.Values, body []byte) error {
	var form url.Values
	if req.form {
		form, _ = url.ParseQuery(string(body))
	}
	for _, name := range []string{"clients", "rps"} {
		v := query.Get(name)
		if form.Has(name) {
			v = form.Get(name)
		}
		if strings.TrimSpace(v) == "" {
			continue
		}
		n, err := httperr.Number(name, v, meshSpans[name])
		if err == nil && name == "clients" && n != math.Trunc(n) {
			err = &httperr.FieldError{Field: name, Msg: fmt.Sprintf("%s is not a whole number (allowed %s)", httperr.MessageNumber(n), meshSpans[name])}
		}
		if err != nil {
			return httperr.WithKind(httperr.KindMalformed, err)
		}
		if req.mesh == nil {
			req.mesh = map[string]string{}
		}
		req.mesh[name] = strconv.FormatFloat(n, 'f', -1, 64)
	}
	return nil
}

// imported is a document read for the lab: its cluster and the lab query
// that runs it, or the error with its status.
type imported struct {
	preset scenario.Preset
	// cluster is the cluster's config; its Source is "" when only
	// /clusters was given.
	cluster envoyconf.Cluster
	// where names the config dump's list the cluster came from ("" for a
	// cluster document).
	where string
	// envoy is the cluster as Envoy's /clusters reported it, when given.
	envoy *envoyconf.AdminCluster
	query string
	link  tabstate.LabLink
	kind  httperr.Kind // err's
	err   error
}

// importDoc reads the request's documents for its preset: 404 for an
// unknown preset, 400 for a document Envoy or istiod refuses or none the
// lab reads, 422 for one the lab's controls cannot show.
func importDoc(req importRequest) imported {
	p, ok := scenario.Lookup(req.preset)
	if !ok {
		return imported{kind: httperr.KindNotFound, err: tabstate.UnknownPreset("preset", req.preset)}
	}
	bad := func(err error) imported {
		return imported{preset: p, kind: httperr.KindMalformed, err: errors.New(strings.Join(errLines(err), "\n"))}
	}
	imp := imported{preset: p}
	config, kind, clusters, err := sortDocuments(req)
	if err != nil {
		return bad(err)
	}
	set := map[string]string{}
	if config != nil {
		if imp.cluster, imp.where, err = readConfig(config, kind, req.name, clusters == nil); err != nil {
			return bad(err)
		}
		set = imp.cluster.Settings()
	}
	if clusters != nil {
		if imp.envoy, err = readAdminClusters(clusters, req.name, imp.cluster.Name); err != nil {
			return bad(err)
		}
		set["hosts"] = strconv.Itoa(len(imp.envoy.Hosts))
	}
	maps.Copy(set, req.mesh)
	imp.query = importQuery(p, set)
	if imp.link, err = tabstate.ParseLabQuery(imp.query); err != nil {
		imp.kind, imp.err = httperr.KindBadValue, errors.New("the lab cannot show this cluster:\n"+httperr.Text(err))
	}
	return imp
}

// sortDocuments tells the request's documents apart by their content: the
// cluster's config (a cluster document or a config dump, as kind says)
// and Envoy's /clusters, either nil when not given. The cluster field may hold either
// when the form's clusters field is empty; nothing is guessed: a document
// of no known kind is an error naming the kinds, and each field's error
// names it.
func sortDocuments(req importRequest) (config []byte, kind envoyconf.DocumentKind, clusters []byte, err error) {
	fieldErr := func(field string, err error) error { return fmt.Errorf("%s: %w", field, err) }
	if len(bytes.TrimSpace(req.clusters)) > 0 {
		kind, err := envoyconf.DetectDocument(req.clusters)
		if err != nil {
			return nil, 0, nil, fieldErr("clusters", err)
		}
		if kind != envoyconf.DocAdminClusters {
			return nil, 0, nil, fieldErr("clusters", fmt.Errorf("is %s, not Envoy's /clusters?format=json (the cluster's config goes in the cluster field)", kind))
		}
		clusters = req.clusters
		if len(bytes.TrimSpace(req.doc)) == 0 {
			return nil, 0, clusters, nil
		}
	}
	kind, err = envoyconf.DetectDocument(req.doc)
	switch {
	case errors.Is(err, envoyconf.ErrEmpty) && !req.form:
		return nil, 0, nil, fmt.Errorf("the body: %w", err)
	case err != nil:
		return nil, 0, nil, fieldErr("cluster", err)
	case kind == envoyconf.DocUnknown:
		// ParseCluster's own errors follow: a typo of a field is named
		// with the field it may be.
		_, perr := envoyconf.ParseCluster(req.doc)
		return nil, 0, nil, errors.Join(fieldErr("cluster", envoyconf.UnknownDocument(req.doc)), perr)
	case kind == envoyconf.DocAdminClusters && clusters != nil:
		return nil, 0, nil, fieldErr("cluster", errors.New("is Envoy's /clusters?format=json, and so is clusters: give the cluster's config (a cluster or a /config_dump) in cluster"))
	case kind == envoyconf.DocAdminClusters:
		return nil, 0, req.doc, nil
	}
	return req.doc, kind, clusters, nil
}

// readConfig reads the cluster's config: a config dump's cluster chosen by
// name, or a cluster document. A name given with a cluster document and
// no /clusters must be that cluster's: it chooses nothing, and a name
// that differs says the wrong document was pasted.
func readConfig(doc []byte, kind envoyconf.DocumentKind, name string, nameIsOurs bool) (envoyconf.Cluster, string, error) {
	if kind == envoyconf.DocConfigDump {
		d, err := envoyconf.ParseConfigDump(doc, name)
		if errors.Is(err, envoyconf.ErrClusterName) {
			err = fmt.Errorf("name: %w", err)
		}
		if err != nil {
			return envoyconf.Cluster{}, "", err
		}
		note := "read from the config dump's " + d.Where
		if d.VersionInfo != "" {
			note += " (version_info " + d.VersionInfo + ")"
		}
		d.Notes = append([]string{note}, d.Notes...)
		return d.Cluster, d.Where, nil
	}
	c, err := envoyconf.ParseCluster(doc)
	if err == nil && name != "" && nameIsOurs && name != c.Name {
		err = &httperr.FieldError{Field: "name",
			Msg: fmt.Sprintf("%q is not the pasted cluster's name (allowed %q, or nothing: name chooses a cluster in a /config_dump or /clusters)", httperr.Truncate(name, 80), c.Name)}
	}
	return c, "", err
}

// readAdminClusters reads Envoy's /clusters for the cluster named name,
// else the config's (its name), else the one it lists. An error about the
// name is name's when it was given or nothing else could choose.
func readAdminClusters(doc []byte, name, configName string) (*envoyconf.AdminCluster, error) {
	field, pick := "name", name
	if pick == "" && configName != "" {
		field, pick = "clusters", configName
	}
	ac, err := envoyconf.ParseAdminClusters(doc, pick)
	switch {
	case err == nil:
		return ac, nil
	case errors.Is(err, envoyconf.ErrClusterName) && field == "clusters":
		return nil, fmt.Errorf("clusters: has no cluster named as the imported one (name chooses another): %w", err)
	case errors.Is(err, envoyconf.ErrClusterName):
		return nil, fmt.Errorf("name: %w", err)
	}
	return nil, fmt.Errorf("clusters: %w", err)
}

// errLines is an error as the lines of a 4xx answer, each naming its
// field: httperr.Text's, but a prefix that wraps an error ("clusters: ",
// a config dump's "configs[1].static_clusters[0].cluster: ") goes on each
// of its lines, where Text would keep only the field errors inside.
func errLines(err error) []string {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []string
		for _, e := range j.Unwrap() {
			out = append(out, errLines(e)...)
		}
		return out
	}
	if inner := errors.Unwrap(err); inner != nil {
		if prefix, ok := strings.CutSuffix(err.Error(), inner.Error()); ok && prefix != "" {
			out := errLines(inner)
			for i := range out {
				out[i] = prefix + out[i]
			}
			return out
		}
		// Text would keep only the error inside, and lose what this one
		// says of it.
		return strings.Split(err.Error(), "\n")
	}
	return strings.Split(httperr.Text(err), "\n")
}

// importQuery is the lab query of the preset run with the imported
// settings: the preset, then each setting whose value differs from the
// preset's own, by name.
func importQuery(p scenario.Preset, set map[string]string) string {
	sc := p.Scenario()
	q := url.Values{}
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
