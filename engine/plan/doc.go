/*
Package plan is workshop plans: an instructor's workshop prepared at home
and run in a room. A plan is a markdown file with YAML front matter, like
a lesson (package lessons, engine/course): a title, a length, and scenes;
each scene says what the room shows, what the instructor says, and what
the room is asked, with the answer the author expects. Like a lesson's
claims, the answers are proved against the engine before class:
`outlierlab plan -check` (Report) runs every scene on seeds 1–50.

It is pure, like course: it reads the bytes or the fs.FS it is given and
renders no HTML. The shipped plans are package plans (plans/*.md); `serve
-plans DIR` loads an instructor's own (LoadDir).

	---
	title: "Outlier detection in 15 minutes"
	summary: "One line for the list of plans."
	minutes: 15                  # the workshop's length; the scenes add up to at most this
	scenes:
	  - id: cap-34               # lower-case letters, digits and -; unique in the plan
	    title: "Raise the cap"   # what the projector and the attendees see
	    minutes: 3               # the scene's time
	    lesson: cap              # a lesson and a step of it (step: "" or absent: the
	    step: cap-34             #   lesson's start), or instead preset: search-cache
	    settings:                # optional, over the step's (or preset's) settings:
	      hosts: "6"             #   outlier_detection fields and scenario knobs by name
	    inject: [h3@60s]         # optional: faults injected, HOST@TIME
	    cursor: 30s              # where the scene opens, paused ("end": the last frame);
	                             #   or play: {from: 30s, to: 90s} (to may be end)
	    spotlight: {host: h5, from: 30s, to: 60s}   # optional: a host, a range or both
	    explore_minutes: 2       # optional: the "explore on your own" timer
	    notes: |                 # the instructor's, shown only on the present page
	      With h3 failing too, {{failure_pct@30s-end = 1.5..2.5}}% fail.
	    question:                # optional: the room's kinds
	      kind: out              # ejected (host, at), out (at) or choice (at, text, choices)
	      at: 40s                # the moment asked about: after the cursor; the room holds
	                             #   before it until the reveal
	      answer: "1"            # what you expect: yes/no, a number of hosts, a choice's text
	---
	The instructor's overview (markdown, no placeholders).

A choice question names, for each choice, the check (course.Check: the
lessons' check kinds) that holds on the run when it is the right one; the
engine's answer is the one choice whose check holds on the whole run, and
a run where none or several hold is a failure of the plan:

	question:
	  kind: choice
	  at: 50s
	  text: "At 50 s most hosts are ejected. Where does the traffic go?"
	  choices:
	    - {text: "Only to the hosts still in", check: {kind: no_panic, at: 50s}}
	    - {text: "To every host, ejected or not", check: {kind: panic, at: 50s}}
	  answer: "To every host, ejected or not"

A scene may be a tuning challenge (challenges/*.md, engine/challenge):
its attendees tune the challenge's unlocked settings on their own pages,
submit, and the room ranks them on a leaderboard. The scene still names
the run the projector opens (a preset or a lesson step: usually the
challenge's first scenario's preset); `plan` and `plan -check` refuse an
id that is no challenge (CheckChallenges):

  - id: tune-it
    title: "Your turn: tune the cap"
    minutes: 10
    preset: search-cache
    challenge: search-cap

The ejected and out questions are read off the first frame at or after
`at` (AnswerAt), the frame the room reveals; the room words them itself
("Is h5 ejected at 40 s?"), so they take no text.

# Notes and their numbers

A number the notes give about the run is a lesson placeholder
({{threshold@40s}}: the present page shows the room's own value), or a
stated number, a placeholder with the value the notes commit to:
{{ejected_count@40s = 1}} (exactly, as the placeholder prints it) or
{{failure_pct@30s-end = 0.6..1}} (a band, inclusive). Notes are read
over the whole run (the instructor may speak ahead of the room). `plan
-check` fails when, on some seed, a stated number is not what the run
shows or a placeholder does not resolve, and when the notes write a
number as plain text (Literals: a number outside placeholders and code,
checked by nothing): a number about the run is a placeholder, stated or
live ({{tick@40s}} writes a moment, a tick of the run), and a formula's
constants go in code (`100 × (0 + 1) / 6`). On 30 seeds or more, each stated
band and each ranged check of a choice question's expected answer also
gets a margin line: how close the closest seed came to each bound, held
to the lessons' floor (engine/course, "Margins"). `plan -check -sweep
-seeds 1-2000` (Sweep) holds them over thousands of seeds, as the
lessons' sweep does (engine/course, "The sweep").

# Errors

Parse reports every bad field of a file, not only the first, each as a
*FieldError naming the file, the line and the field's path:

	plans/demo.md:14: scenes[1] (cap-34).question.host: "h6" is not a host of this run (allowed h0–h5)

Times and hosts are checked against the scene's run before anything runs
(its host count and its last frame, from its settings); what needs the run
itself (the answer, the numbers) is Report's, on each seed.
*/
package plan
