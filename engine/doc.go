// Package engine is a re-implementation of Envoy's passive outlier detector
// (source/common/upstream/outlier_detection_impl.cc). It is pure: time comes
// from a Clock, randomness from a Random, and nothing here does I/O or starts
// goroutines, so every run is reproducible from its inputs.
//
// How outlierlab resolves the subtle cases of Envoy's detector
// (shared/docs/envoy-semantics.md §11), each as the current code does:
//
//  1. Both consecutive detectors trip on one 503: gateway is processed first,
//     then 5xx (PutHTTPResponseCode). If gateway ejects, the 5xx event finds
//     the host ejected and is dropped without a stat or counter reset.
//  2. An overflowed consecutive detection still counts detected_* and
//     overflow and resets the counter (onConsecutive).
//  3. Envoy posts consecutive events to the main thread; outlierlab, like
//     Envoy's unit tests, runs them at once, so a queued event never races a
//     tick. The "already ejected" branch still exists for case 1.
//  4. A host failing every third request, evenly spaced, never reaches
//     consecutive_5xx (each success resets the counter); the same share of
//     independent failures does, within seconds at a few hundred requests a
//     second. A 500 resets the gateway streak.
//  5. All hosts ejected: SR skips every host, consecutive events are dropped,
//     unejections proceed (panic routing lives in engine/sim).
//  6. Removing an ejected host gives back its ejections_active slot; a
//     re-added host is a new monitor with zeroed state (RemoveHost/AddHost).
//  7. Zero hosts: the tick runs and finds nothing.
//  8. Hosts added mid-interval start with empty buckets, raise N at once and
//     are judged on their partial interval at the next tick.
//     9–10. Runtime changes are not modelled: a config change rebuilds the run
//     from t = 0, as a CDS update rebuilds the cluster.
//  11. Success rate and failure percentage in one tick can eject one host
//     twice (no "already ejected" check in ejectHost, as in Envoy release
//     builds): ejections_active ends one too high after the uneject. This is
//     reproduced, not fixed; the lab warns when both are enforced.
//  12. A host unejected at a tick takes part in that tick's statistics with
//     the bucket it filled while ejected (the uneject runs in the same pass
//     as the bucket swap, before processRates).
//  13. Active HC success unejects mid-interval (ActiveHealthCheck).
//  15. σ = 0 (one valid host, or all equal) ejects nobody: the test is sr < thr.
//  16. Jitter is drawn on every enforced ejection (and degradation) into one
//     field, added after the max_ejection_time cap.
//
// Same-timestamp order: callers record completions before the tick of the
// same millisecond (the replay format does steps in file order).
//
// # The gRPC dialect
//
// NewDialectDetector(DialectGRPC, ...) reads the same Config the way grpc-go
// does (gRFC A50; grpc-go's outlier_detection_experimental balancer,
// internal/xds/balancer/outlierdetection/balancer.go, fed by its xDS
// translation in xdsresource/unmarshal_cds.go). grpc.go holds those rules,
// one function per grpc-go function; the Envoy code above only dispatches.
// conformance/grpcgo checks them against the real grpc-go balancer. In
// short: success rate runs unless enforcing_success_rate is 0, failure
// percentage only when enforcing_failure_percentage is non-zero, and the
// consecutive, local-origin, jitter, always-eject-one, degraded and
// active-health-check fields are ignored (Config.GRPCIgnoredFields); any
// non-OK RPC is a failure; the cap refuses when 100·ejected/hosts ≥ max,
// counting only hosts already ejected; failure percentage compares with >;
// detection runs before unejection; the multiplier has no cap and decays by
// one per tick the host is not ejected; a host returns at the first tick
// strictly after ejection time + min(base·multiplier, max(base, max)),
// computed in nanoseconds from the proto's durations (Config's *SubMsNs
// keep what Envoy truncates), wrapping past 2⁶³ ns as Go's time.Duration
// does (G5).
//
// "Strictly after" depends on the clock (GRPCClock). grpc-go stamps an
// ejection with its sweep's start (timerStartTime) and re-arms the timer
// with afterFunc(interval) only after the sweep, so on a real clock each
// sweep starts a little later than a whole number of intervals after the
// stamp and the strict test holds at the sweep the ejection time ends on:
// GRPCRealClock, the default and what the lab's runs use, returns a host
// there, as Envoy's <= does. GRPCExactClock is a fake clock (synctest, the
// unit tests that call the sweep by hand), where a deadline that falls on
// a sweep keeps the host one interval more; replay uses it unless a trace
// says "clock": "real", since the recorded grpc-go traces were taken on it.
//
// The config is read as the dialect's client reads the proto. Under
// gRPC that is grpc-go's xDS client (envoyconf.ParseJSONGRPC,
// ApplyFieldsGRPC): no protoc-gen-validate, and outlierConfigFromCluster
// refuses only durations that are invalid or negative and
// max_ejection_percent, enforcing_success_rate,
// failure_percentage_threshold or enforcing_failure_percentage above 100.
// So a max_ejection_time below base_ejection_time (the cap is max(base,
// max)), 0s durations, durations below 1 ms (kept to the nanosecond) and
// any value of a field grpc-go does not read are taken and run as grpc-go
// runs them; envoyconf.GRPCNotes says, field by field, what Envoy would
// have refused and what grpc-go does instead (replay's notes, the lab's
// lint panel), and the lab's Envoy/gRPC strip shows no Envoy run of a
// cluster Envoy would not load. A 0s interval (sweeps back to back) is
// replayed, whose ticks are the trace's, but not simulated (sim.New).
//
// Where grpc-go's bookkeeping slips, the dialect does what grpc-go does:
//
//	G1. Success rate and failure percentage flag the same host in one tick
//	    and the cap admits both: ejectEndpoint runs twice (it has no "already
//	    ejected" check), so the multiplier grows by 2 and numEndpointsEjected
//	    by 2, while the single unejection gives back 1. The leaked slot
//	    counts against max_ejection_percent for the rest of the run, so it
//	    later refuses an ejection the cap would otherwise allow. Modelled, as
//	    Envoy's own double ejection is (case 11); conformance/grpcgo
//	    reproduces it on the real balancer.
//	G2. An ejected host that still gets traffic (it cannot in grpc-go's round
//	    robin, which skips ejected subchannels) is a candidate again and can
//	    be re-ejected: a new timestamp and multiplier +1.
//	G3. Removing an ejected host does not give back its slot
//	    (UpdateClientConnState deletes the endpoint only).
//	G4. A request volume of 0 makes a host without calls a candidate with
//	    rate 0/0 = NaN: the success-rate mean is then NaN and that pass
//	    ejects nobody; failure percentage only passes over that host.
//	G5. base_ejection_time × multiplier past 2⁶³ ns (292 years) wraps
//	    negative in time.Duration, so min(·, max) is negative and the host
//	    is due at once (grpcEjectionDurationNs).
package engine
