/*
Package course is the lessons' machinery: it loads the lesson files
(markdown with YAML front matter, package lessons), validates them
strictly, builds each lesson's run from its preset and settings, decides
its "Try this" checks against the engine's frames, and resolves the live
numbers in its prose.

It is pure: it reads only the fs.FS it is given and renders no HTML (the
web layer turns the markdown into a page), so the same lessons and checks
run in the browser, in `go test` and in `outlierlab lessons -check`.

A lesson file is markdown with YAML front matter, read strictly (an unknown
or repeated key is an error naming the file):

	---
	id: cap                      # = the file name without .md; the page is /lessons/cap
	title: "The cap that ejects nothing"
	summary: "One line for the index page."
	order: 3                     # unique across files
	minutes: 10
	goals: ["…", "…"]            # learning goals, stated up front
	preset: search-cache         # a scenario.Presets() name
	seed: 1                      # optional; 0 or absent means 1
	start:                       # settings the lesson opens with, over the preset:
	  max_ejection_percent: "10" #   outlier_detection fields by Envoy name, and
	  hosts: "6"                 #   scenario knobs (scenario.Knobs()), values as typed
	controls: [max_ejection_percent, always_eject_one_host, hosts]
	compare_strip: true          # optional: show the Envoy-and-gRPC strip (a lesson that reads it)
	steps:                       # "Try this", in order
	  - id: cap-34
	    text: "Drag the cap to 34 and step to 80 s."   # markdown; placeholders allowed
	    charts: [chart-lanes, chart-clients]           # what the step is about: the lab's charts
	                             #   (Charts), its key chart first, the one the text
	                             #   asks the learner to look at; required
	    controls: [max_ejection_percent]               # optional: the controls it is about, each
	                             #   one the page shows (ControlNames); the page shows
	                             #   these while the step is current, the rest folded
	    preset: bad-deploy       # optional: the step loads another preset, and
	                             #   its settings lie over that preset alone
	    settings:                # what the learner should end up with, over start
	      max_ejection_percent: "34"
	    check: {kind: ejected, host: h5, at: 40s}      # see Check
	  - id: look
	    text: "Play to the end and watch the log."
	    charts: [chart-lanes]
	    check: {kind: event, event: overflow, host: h5, at: 40s}
	    passes_before: "looking step: the overflow is there at the start"
	                             # optional, with a reason: the check may hold before
	                             #   the step (see "Before a step" below)
	predict:                     # asked before the key moment
	  before_step: cap-34        # a step id
	  pause_at: 30s              # optional: where the page pauses to ask
	  question: "…"
	  choices: ["…", "…"]
	  answer: 1                  # index into choices (the page shuffles them: ChoiceOrder)
	  reveal: "…"                # placeholders allowed
	quiz:                        # 2 or 3 questions
	  - {question: "…", choices: ["…", "…"], answer: 0, explain: "…"}
	ending:                      # what the lesson taught (Ending; lessons -check wants one)
	  settings: [{name: max_ejection_percent, default: "10"}]   # a default must be Envoy's
	  stats: [ejections_overflow]                               # names a stat check reads
	  rule: "…"
	  exercise: {text: "…", settings: [max_ejection_percent]}   # offered beside hosts and rps
	---
	Markdown body, with {{placeholders}}.

	::: after-prediction
	Prose that gives the prediction's answer away: hidden until the learner
	has answered (Lesson.Markdown says how it shows).
	:::

Every step stands alone: its settings are the lesson's start with the
step's settings laid over it, never the previous step's, so the page can
jump to any step (Settings, Scenario, RunLesson). A step with its own preset
starts from that preset as it is (StartSettings).

# Before a step

A step's check must pass with the settings the step leads to, and fail in
every state the learner can be in before doing it, on the step's scenario:
the lesson's start, the scenario a step's button loads (up to this step),
and what each earlier step leads to (Before), each read over the whole run.
So a step cannot tick before its own action, even after an earlier step
that already gives the same outcome ("cap 34" ejects h5 just as "cap 17"
does: the cap-17 step must check the setting too, {kind: setting}). A step
about looking, whose check holds from the start, says why with
passes_before. `outlierlab lessons -check -seeds 1-50` (and TestEveryCheck,
in make test) proves all of it on seeds 1 to 50, and the sweep (below) on
thousands: a lesson's claims hold for any seed, not only the one its page
runs; a claim that holds only usually says "usually", or shows the
learner's run's own number.

# Checks

A Check is data: either {all: [...]} / {any: [...]} of other checks, or a
kind with its parameters. Times are durations ("40s", "1m30s") or "end".
Each kind is one entry of the kinds table (kinds.go): its parameters
([x]: optional), its time and its band, its own rule, its evaluation.

	ejected        host, at                  host ejected after the tick at `at`
	not_ejected    [host], at | from/to      not ejected (any host if none named) at the tick(s)
	ejected_hosts  at, min/max               how many hosts are ejected after the tick
	event          event, [host], [detector], at | from/to, [min/max]
	                                         events (eject|detect|overflow|uneject) at the exact
	                                         time or with from ≤ time ≤ to; default "at least one"
	stat           name, at | from/to, min/max
	                                         an outlier_detection stat (ejections_overflow…) or a
	                                         cluster stat (lb_healthy_panic, upstream_rq_retry…),
	                                         its value at a tick or its increase over a window
	clients        name, [at | from/to], min/max
	                                         a clients metric (below) over the intervals inside
	                                         the window (default: the whole run)
	success_rate   is | name+min/max, at | from/to
	                                         the gate (ran, too_few_hosts, too_few_hosts_with_volume)
	                                         or a pass metric (below), at a tick or at every tick
	                                         of a window
	host           host, name, at, min/max   a host metric (below) at the tick
	share          host, [at | from/to], min/max
	                                         the host's share of attempts, in percent
	panic          at | from/to              the cluster was in panic in the interval(s)
	no_panic       at | from/to              … and was not
	setting        name, min/max | is        a setting in effect (the names of start and
	                                         settings): a number (durations in seconds) within
	                                         min/max, or another value equal to is ("true");
	                                         decided at once: the learner's own action

A check with min or max may also say thin_margin: "why, with the numbers"
(see Margins).

Evaluate(check, run, cursorMs) reads only the frames up to the cursor (and
the run's settings, for setting checks: on the page, the learner's own): a
check that needs a later frame is "not yet" (Decided false) and
NeedsCursorMs says where the learner must step.

# Margins

A ranged check that passes on seeds 1 to 50 may still pass by a hair.
From 30 seeds on (MarginMinRuns), Report adds one line per ranged check of
a step's intended state (not inside an any, not a setting check): the
values it saw over the seeds and the closest run's distance to each
bound, its margin. A margin under the floor, a quarter of the values'
spread over the seeds, fails the line: with n = 50 the runs span about
4.5 standard deviations of a normal-like quantity, so a bound a quarter
of that span beyond the closest run is about 3.3σ from the mean, crossed
by a new seed a few times in ten thousand (margin.go). A bound a tenth of
the runs or more sit on exactly is the quantity's own edge (five failures
before a five-in-a-row ejection; a count every seed gives) and has no
floor. A check whose bound must stay close (a quantity with two modes, a
count of rare events that may be zero) says why in thin_margin, and its
margin is printed, not failed. Workshop plans' stated bands and expected
choices get the same lines (engine/plan).

# The sweep

Fifty seeds prove little about a claim that fails once in a hundred
runs. The sweep (SweepLessons, sweep.go; `outlierlab lessons -check
-sweep -seeds 1-2000`, make claims) runs every check over as many seeds as
asked and keeps, instead of the lines, one Claim per check and state (the
seeds it failed on) and one Spread per ranged check (each run's value;
its quantiles; how far each bound lies from the mean). A claim must hold on
every seed swept, and a bound must be crossed by no run and, under a
normal fit of the runs, by fewer than one in ten thousand (SweepRare),
unless it is the quantity's edge or says thin_margin. A number that cannot
be held so is the learner's run's own (a placeholder), not a fact.

# Metrics

One table (metric.go) names every quantity a check bounds or a placeholder
prints, with one unit, so a name means the same number in both:

	settings              hosts, interval (s), k, cap_pct (%), cap_first (%: the share
	                      the first ejection makes), cap_admits (hosts the cap lets out
	                      at once), sr_bound, sr_needed:N, setting:NAME
	the success-rate      mean (%), threshold (%), stdev, hosts_with_volume, gate
	  pass at a tick      (a success_rate check's name: the numbers)
	the cluster at a tick tick (its time, "40 s"), ejected, ejected_count, cap_next (%),
	                      panic, healthy, healthy_pct (%), stat:NAME
	a host at a tick      success_rate (%), requests, failures, multiplier, num_ejections,
	                      returns_in_s (s), consecutive_5xx, attempts,
	                      local_success_rate (%), local_requests (a host check's name)
	clients over a window failure_pct (%), retry_pct (%), requests, failures, retries,
	                      retry_overflow, no_healthy, p99_ms (ms), p50_ms (ms): sums,
	                      shares of requests, the worst interval's latency (a clients
	                      check's name)
	a host over a window  share:HOST (%), first_eject_at:HOST (its first ejection's
	                      time in the window, "31.2 s", or "none")

A host's rate is -1 when it served nothing: a check compares that number,
prose shows a dash. The placeholders once called failures (a percentage,
while a check's failures counted), p99, rate and returns_in are
failure_pct, p99_ms, success_rate and returns_in_s.

# Placeholders

	{{name}} {{name:arg}} {{name@40s}} {{name:arg@40s}} {{name@30s-300s}} {{name@30s-end}} {{name@30s-now}}

Every metric is a placeholder. Without a time it follows the cursor (the
last tick shown, or the intervals shown so far), and so does a window
ending in "now"; with a fixed time (or a window with a fixed end) it shows
Dash until the cursor reaches that time, so a number never gives away what
the learner has not played yet, and that time's value from then on.
Numbers are written without their unit ("{{failure_pct}}%"), except
seconds ("{{returns_in_s:h5}}" reads "90 s").

Body, Expand and ExpandFunc resolve them; what cannot be resolved (before the
first tick, a host the host count removed) shows as Dash.
*/
package course
