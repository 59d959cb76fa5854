package tabstate

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The run cache's and the engine's counters: the process's (one lab
// serves per process); each Server registers them (RunCollectors) in its
// own registry.
var (
	metricCacheHits   = counter("outlierlab_run_cache_hits_total", "Run cache lookups that found the run.")
	metricCacheMisses = counter("outlierlab_run_cache_misses_total", "Run cache lookups that had to run the engine.")
	metricRuns        = counter("outlierlab_runs_computed_total", "Engine runs computed: the lab's, compare's, each run of a sweep and each what-if replay (including ones that failed).")
	metricRunSeconds  = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "outlierlab_run_duration_seconds",
		Help:    "How long one engine run took, inputs to frames.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
	})
)

// counter is a counter named name, described by help.
func counter(name, help string) prometheus.Counter {
	return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
}

// RunCollectors are the counters above, for a registry.
func RunCollectors() []prometheus.Collector {
	return []prometheus.Collector{metricCacheHits, metricCacheMisses, metricRuns, metricRunSeconds}
}

// ObserveRun times one engine run, the lab's or a heavy page's (a
// what-if replay): defer ObserveRun()().
func ObserveRun() func() {
	start := time.Now()
	return func() {
		metricRuns.Inc()
		metricRunSeconds.Observe(time.Since(start).Seconds())
	}
}

// cacheLookup counts a run cache lookup as a hit or a miss.
func cacheLookup(hit bool) {
	if hit {
		metricCacheHits.Inc()
	} else {
		metricCacheMisses.Inc()
	}
}

// CountRun counts one engine run whose time is not the lab's to take (a
// sweep's runs go in parallel inside the engine's workers).
func CountRun() { metricRuns.Inc() }
