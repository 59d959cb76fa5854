package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"

	"github.com/a-h/templ"
	"github.com/starfederation/datastar-go/datastar"

	"outlierlab/engine"
	"outlierlab/engine/envoyconf"
	"outlierlab/engine/lint"
	"outlierlab/engine/scenario"
	"outlierlab/web/csp"
	"outlierlab/web/httperr"
	"outlierlab/web/page"
	"outlierlab/web/tabstate"
	"outlierlab/web/templates"
	"outlierlab/web/view"
)

// The free lab's what-if tools, under the lab: "Paste your cluster" (the
// form posts /lab/import), what lint says about the settings shown (POST
// /lab/lint, redone as the settings change), a sweep and a log replay.

// importStream answers the lab's form (through Datastar): a document with
// problems shows them in the form's result; a good one sets the page's
// controls to the imported cluster's values and presses the hidden apply
// button, which posts the set command as a slider does, so the tab reruns
// with the cluster in place (its stream redraws and moves the address to
// the permalink), and the result lists the settings it changed and the
// import's notes.
func (s *Tools) importStream(w http.ResponseWriter, r *http.Request, imp imported) {
	sse := datastar.NewSSE(w, r)
	res := importResultView(imp)
	if imp.err == nil {
		run, err := s.runs.Get(imp.link.Inputs())
		if err != nil {
			res = view.ImportResult{Problems: strings.Split(httperr.Text(err), "\n")}
		} else {
			b, _ := json.Marshal(tabstate.InputSignals{Preset: run.Preset, Cfg: tabstate.ControlSignals(run, nil)})
			if sse.PatchSignals(b) != nil {
				return
			}
		}
	}
	if patchTempl(sse, templates.ImportResult(res)) != nil || len(res.Problems) > 0 {
		return
	}
	_ = csp.Run(sse, "document.getElementById('btn-import-apply').click()")
}

func patchTempl(sse *datastar.ServerSentEventGenerator, c templ.Component) error {
	var b bytes.Buffer
	if err := c.Render(context.Background(), &b); err != nil {
		return err
	}
	return sse.PatchElements(b.String())
}

// importResultView says what an import did, or what is wrong with it.
func importResultView(imp imported) view.ImportResult {
	if imp.err != nil {
		return view.ImportResult{Problems: strings.Split(imp.err.Error(), "\n")}
	}
	c := imp.cluster
	v := view.ImportResult{Source: sourceWords(c.Source, imp.where), Name: c.Name, Notes: c.Notes, Link: "/lab?" + imp.query}
	for i := range tabstate.Controls {
		ctl := &tabstate.Controls[i]
		if val, ok := imp.link.Values[ctl.Name]; ok {
			v.Changed = append(v.Changed, ctl.Name+" = "+ctl.EnvoyValue(val))
		}
	}
	if imp.envoy != nil {
		if c.Source == "" {
			v.Source, v.Name = "Envoy's /clusters", imp.envoy.Name
		}
		v.Envoy, v.Ejected = envoyNowWords(imp.envoy)
		v.Notes = append(slices.Clone(v.Notes), envoyHostNotes(imp.envoy)...)
	}
	return v
}

// envoyHostNotes says what of /clusters' hosts the lab leaves out: it
// runs one priority of equal hosts, all healthy at its second 0.
func envoyHostNotes(ac *envoyconf.AdminCluster) []string {
	var failover, activeHC, degraded int
	lo, hi := uint32(math.MaxUint32), uint32(0)
	for _, h := range ac.Hosts {
		if h.Priority > 0 {
			failover++
		}
		if h.FailedActiveHC {
			activeHC++
		}
		if h.DegradedByOutlier {
			degraded++
		}
		lo, hi = min(lo, h.Weight), max(hi, h.Weight)
	}
	var notes []string
	if failover > 0 {
		notes = append(notes, fmt.Sprintf("/clusters: %d of the %d hosts %s at a priority above 0 (failover); the lab runs every host at one priority", failover, len(ac.Hosts), tabstate.Plural(failover, "is", "are")))
	}
	if lo < hi {
		notes = append(notes, fmt.Sprintf("/clusters: the hosts' weights differ (%d to %d); the lab weighs every host the same", lo, hi))
	}
	if activeHC > 0 {
		notes = append(notes, fmt.Sprintf("/clusters: %d %s failed Envoy's active health check; the lab starts %s healthy", activeHC, tabstate.Plural(activeHC, "host had", "hosts had"), tabstate.Plural(activeHC, "it", "them")))
	}
	if degraded > 0 {
		notes = append(notes, fmt.Sprintf("/clusters: %d %s degraded by outlier detection (failed_degraded_outlier_detection); the lab starts %s in rotation", degraded, tabstate.Plural(degraded, "host was", "hosts were"), tabstate.Plural(degraded, "it", "them")))
	}
	return notes
}

// envoyNowWords says what Envoy's /clusters reported of the cluster: its
// hosts, which were ejected then, each with its success rate. The lab's
// run starts at its own second 0 with every host in rotation, so the
// words say that the run does not take up Envoy's state.
func envoyNowWords(ac *envoyconf.AdminCluster) (string, []string) {
	var ejected []string
	for _, h := range ac.Hosts {
		if !h.Ejected {
			continue
		}
		rate := "no success rate at Envoy's last interval (too few requests, or none)"
		if h.SuccessRate != nil {
			rate = "success rate " + httperr.FormatNumber(math.Round(*h.SuccessRate*100)/100) + "% at Envoy's last interval"
		}
		ejected = append(ejected, h.Address+": "+rate)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Envoy's /clusters lists %d hosts in %q; ", len(ac.Hosts), ac.Name)
	switch len(ejected) {
	case 0:
		b.WriteString("none was ejected (failed_outlier_check) when it was asked")
	case 1:
		b.WriteString("1 was ejected (failed_outlier_check) when it was asked")
	default:
		fmt.Fprintf(&b, "%d were ejected (failed_outlier_check) when it was asked", len(ejected))
	}
	if t := ac.SuccessRateEjectionThreshold; t != nil {
		fmt.Fprintf(&b, "; its success-rate ejection threshold at the last interval was %s%%", httperr.FormatNumber(math.Round(*t*100)/100))
	}
	b.WriteString(". The lab runs that many hosts, starting fresh with every host in rotation: it does not resume Envoy's ejections.")
	return b.String(), ejected
}

// sourceWords names the document a cluster came from: where is the config
// dump's list, "" for a cluster document.
func sourceWords(src envoyconf.Source, where string) string {
	if where != "" {
		return "the /config_dump's cluster"
	}
	switch src {
	case envoyconf.SourceEnvoyCluster:
		return "an Envoy cluster"
	case envoyconf.SourceDestinationRule:
		return "an Istio DestinationRule"
	}
	return "an outlier_detection block"
}

// importFormPage is the lab form's answer without JavaScript when the
// document has problems: the problems, and the form with the document.
func (s *Tools) importFormPage(w http.ResponseWriter, r *http.Request, req importRequest, imp imported) {
	v := view.ImportPage{Layout: s.pages.Layout("Paste your cluster", "lab", false), Preset: req.preset,
		Presets: page.PresetLinks(req.preset), Document: string(req.doc), Name: req.name, Clusters: string(req.clusters), Result: importResultView(imp)}
	s.pages.Render(w, r, httperr.Status[imp.kind], templates.ImportPage(v))
}

// lintSignals are the signals the lint panel posts: the tab's inputs.
type lintSignals struct {
	Preset string                     `json:"preset"`
	Cfg    map[string]json.RawMessage `json:"cfg"`
	Inject string                     `json:"inject"`
}

// Lint handles POST /lab/lint: what engine/lint says about the page's
// settings on its preset's cluster (hosts, request rate, panic threshold),
// as a patch of the lint panel.
func (s *Tools) Lint(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.maxBody))
	if err != nil {
		httperr.Write(w, httperr.WithKind(httperr.KindTooLarge, fmt.Errorf("request body is larger than %d bytes", s.maxBody)), httperr.KindTooLarge)
		return
	}
	var sig lintSignals
	if err := json.Unmarshal(body, &sig); err != nil {
		httperr.Write(w, httperr.WithKind(httperr.KindMalformed, fmt.Errorf("body: not a JSON object of signals: %w", err)), httperr.KindMalformed)
		return
	}
	_ = patchTempl(datastar.NewSSE(w, r), templates.LintBody(lintView(sig)))
}

// lintView reads the settings as the lab does (the preset, the controls,
// the injected faults) and runs lint over the config and the cluster.
func lintView(sig lintSignals) view.LintPanel {
	preset := sig.Preset
	if preset == "" {
		preset = tabstate.DefaultPreset
	}
	p, ok := scenario.Lookup(preset)
	if !ok {
		return view.LintPanel{Problem: tabstate.UnknownPreset("preset", preset).Error()}
	}
	vals, err := tabstate.ParseControlValues(sig.Cfg)
	in := tabstate.Inputs{Preset: p.Name}.With(vals)
	if err == nil && sig.Inject != "" {
		in.Inject, err = tabstate.NormalInject(sig.Inject)
	}
	if err != nil {
		return view.LintPanel{Problem: httperr.Text(err)}
	}
	return LintOf(p, in)
}

// LintOf is lint's findings on the inputs in of preset p, over the
// config and the cluster they make: the lab page draws them with the
// page, and the panel posts for them again as the settings change.
func LintOf(p scenario.Preset, in tabstate.Inputs) view.LintPanel {
	sc, cfg, err := tabstate.ApplyInputs(p, in)
	if err != nil {
		return view.LintPanel{Problem: httperr.Text(err)}
	}
	cl := lint.Cluster{Hosts: sc.Cluster.Hosts, RPS: sc.Cluster.RPS, PanicThreshold: float64(sc.Cluster.HealthyPanicThreshold), Clients: sc.Cluster.ClientCount()}
	v := view.LintPanel{Cluster: fmt.Sprintf("%d hosts, %s requests/s, panic below %s%% healthy", cl.Hosts, httperr.FormatNumber(cl.RPS), httperr.FormatNumber(cl.PanicThreshold))}
	if sc.Cluster.Dialect == engine.DialectGRPC {
		// The gRPC dialect took the block as grpc-go's xDS client does:
		// say what Envoy alone would refuse in it, and what grpc-go does
		// instead. lint's arithmetic is Envoy's detector's (its cap, its
		// consecutive detectors, min(base·backoff, max)); under gRPC it
		// would state rules grpc-go does not follow, so it is left out.
		for _, fe := range envoyconf.GRPCNotes(cfg) {
			v.Findings = append(v.Findings, view.LintFinding{Severity: lint.Warning.String(), Field: fe.Field,
				Message: strings.TrimPrefix(fe.Error(), fe.Field+": ")})
		}
		v.Findings = append(v.Findings, view.LintFinding{Severity: lint.Info.String(), Field: "dialect",
			Message: "lint checks a block against Envoy's detector (outlier_detection_impl.cc); grpc-go's differs (gRFC A50: its own cap, no consecutive detectors, ejections capped at max(base_ejection_time, max_ejection_time)), so lint's findings are not shown under gRPC."})
		return v
	}
	for _, f := range lint.Check(cfg, cl) {
		v.Findings = append(v.Findings, view.LintFinding{Severity: f.Severity.String(), Field: f.Field, Message: f.Message})
	}
	return v
}
