/*
Package challenge is a tuning challenge: a story, a battery of
scenarios each with goals the engine measures on its runs, the settings
a learner may change (the others locked), how many hidden seeds grade a
submission, and a reference solution. The files are challenges/*.md,
read like workshop plans (engine/plan).

The package is pure: it parses, runs the battery (scenario.Run through
settings.Apply) and measures the goals on the frames. Which seeds grade
a learner is the caller's secret (web/challenges derives them on the
server); `challenge -check` grades on seeds 1–50.

# A challenge file, for authors

challenges/NAME.md is YAML front matter between "---" lines, then the
story in markdown (the cluster, the fault, what is asked; no
placeholders). NAME, lower-case letters, digits and -, is its id.

	title: "The six-host search cluster and its cap"
	summary: "One line for /challenges."
	seeds: 5                 # hidden seeds a submission is graded on, 1–20
	unlocked: [max_ejection_percent, consecutive_5xx]
	start: {}                # optional: the learner's starting values (unlocked only)
	reference:               # a solution: challenge -check proves it
	  max_ejection_percent: 17
	main: [one-bad-host/eject-h5, shared-outage/max-out]   # optional: a room's scatter's axes
	scenarios:               # the battery: every submission runs each, on every seed
	  - id: one-bad-host
	    title: "h5 loses the cache at 30 s"
	    preset: search-cache
	    settings: {}         # locked settings over the preset (never an unlocked one)
	    goals:
	      - id: eject-h5     # optional: the kind, with - for _
	        kind: ejected_within
	        host: h5
	        after: 30s
	        within: 20s

Settings are the catalog's names (engine/settings: outlier_detection
fields by their Envoy names, scenario knobs). A scenario runs with the
preset, then start, then its settings, then the learner's submission
(settings.Apply's layers, Challenge.Layers).

The goal kinds (goal.go), each measured on one run's frames; times are
ticks of the run, to: end (the default) is its last frame, from
defaults to 0:

	ejected_within   host, after, within: an eject event for host in [after, after+within]
	failures_at_most from, to, max: clients' failures ≤ max % over the intervals inside the window
	max_out          from, to, max: at most max hosts ejected at every tick in the window
	not_ejected      hosts or except, from, to: none of hosts (all hosts but except) ejected at any tick in the window
	no_panic         from, to: the load balancer never in panic in the window

A key a kind does not take is refused, as is a host the run has not, a
time after the run's last frame, a deadline past it; every malformed
field is named with its line (*plan.FieldError).

`outlierlab challenge -check [-seeds 1-50]` grades every challenge's
reference, which must pass every goal on every seed, and its start (the
shipped defaults), which must fail at least one: 0 when all hold, 1 when
one does not, 2 for a malformed file. TestShippedChallenges runs it in
make test.
*/
package challenge
