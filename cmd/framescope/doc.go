// Command framescope inspects Vulkan devices and Framescope traces, and
// gates continuous integration on their performance.
//
// Each subcommand lives in a file of its own and registers itself in init.
//
// # Capturing from a running application
//
// framescope capture URL saves a Perfetto trace from an application that
// serves its live view (package live) at URL: -frames N the last N
// settled frames, -seconds S the next S seconds, -o FILE where to (the
// file is replaced only once the trace is read back whole). It exits 1
// when the application cannot be reached or refuses, printing its answer.
//
// # One trace: framescope stats
//
// framescope stats TRACE prints, for each zone (its kind and name), the
// count, mean, p50, p95, p99 and max of its durations; each frame's GPU
// and CPU totals; what was dropped, by cause; and the recorder's books.
// Where GPU zones count pipeline statistics (timeline.Work), a second
// table follows the zones': for each GPU zone name with work, how many of
// its zones were counted ("counted"), how many have no counts ("no
// counts"), and a column a statistic the trace counts, keyed as in every
// trace format (timeline.StatKey: "fragment_shader_invocations", ...),
// with its mean count per zone counted, as the time columns are per zone;
// then a line with the zones without counts by reason (timeline
// WorkMissing keys: "render_pass", "elsewhere", ...). --json gives each
// zone's "work" ("counted", "no_counts" by reason, and "mean", "max" and
// "total" by statistic, exact integers past 2^53) and the trace's "work"
// ("stats", "zones", "counted", "no_counts"). A trace whose zones carry
// no work prints as it did before zones had any.
//
// # The performance gate: framescope diff
//
// framescope diff BASE NEW compares two sides, each a trace file or a
// directory whose every trace file (Perfetto or Chrome JSON, gzipped or
// not) is one run of the application. It exits 0 when nothing regressed
// and every zone is shown unchanged (or improved), 1 when a zone
// regressed (in time, or in work: see Work) or a --budget is exceeded, 2
// on bad usage or input (an empty run among them), and 3 when it cannot
// tell: too few runs, or runs too noisy for the change at hand. A report says, for each inconclusive
// zone, about how many runs a side would decide.
//
// Runs are the unit. Frames of one run are not independent samples of the
// code's speed: each run carries an offset of its own (what else the
// machine does, clocks, caches, where memory landed), and a test on
// frames reads that offset as a change. Measured: on an H200, 3 of 9
// pairs of identical runs failed a frame-level Mann-Whitney gate; on
// lavapipe, 11 of 14. So each zone is reduced, in each run, to its
// median and its p95, and it is these per-run values that are compared
// between the sides. The frames say only how precisely a run's value is
// known: the distribution-free confidence interval of the quantile from
// order statistics (stats.QuantileSE) gives a standard error that is the
// floor of the spread between runs.
//
// A zone is its kind, its track and its name: the same name on two GPU
// queues, or on two CPU tracks, is two zones; a GPU queue's overflow lanes
// belong to the queue. Zones on one side only are listed as new or gone.
//
// # The statistics
//
// For each zone on both sides, the shift between the sides is the mean of
// the middle half of the pairwise differences of the runs' log medians
// (stats.TrimmedShift: a wild run makes a fifth of the differences and
// is trimmed away, as in the Hodges-Lehmann estimate, the median of
// them; unlike that median, moving one run moves it, so that with five
// runs a side the splits that differ from the real one by a run are not
// all as extreme as it), less the zone's margin
// log(max(1+min-effect, 1+floor/median)), over its standard error from
// the spread between runs pooled over both sides (the MAD of each run's
// distance from its side's median, no smaller than the frames'
// precision). The test is a permutation test over runs: if the code did
// not change, the runs are exchangeable between the sides, and every way
// to split them into sides of the same sizes is as likely as the real one
// (all C(n1+n2, n1) ways up to 20000; beyond, as many drawn with a fixed
// seed, fewer when the runs are many, never under 1000; at most 50 runs a
// side, which take some seconds).
// The false-alarm rate is held at --alpha over all zones at once by the
// single-step max-T procedure of Westfall and Young (1993): a zone's
// p-value is the share of splits whose largest statistic over every zone
// reaches the zone's own, so that one alpha covers the family whatever the
// correlation between zones (frame, render pass and draw move together).
// A zone regresses when that adjusted p-value is at most alpha and its
// median over runs grew by more than the minimum effect and the floor.
// Per-run p95s form a second family, tested the same way and reported;
// with --tails they gate too, alpha being split in two between the
// families (Bonferroni).
//
// "Unchanged" is a claim of its own, an equivalence test: the zone's
// statistic on BASE's runs shifted up by the minimum effect and the floor
// must be larger than NEW's, by the same permutation test at alpha (the
// lower tail, zone by zone). By the intersection-union principle, the
// whole diff is unchanged only when every zone is, with no correction.
// A zone that neither regresses nor is shown unchanged is inconclusive;
// the runs it would need come from the spread seen, with the 3/pi
// efficiency of a rank test, 80% power, and the Bonferroni level of the
// family.
//
// With n runs a side no split test can go below 1/C(2n, n): one run a
// side gives 2 splits, two give 6, three 20. When alpha is below that, the
// runs cannot tell a change from run-to-run noise, and the diff says so:
// a zone then regresses only when its median grew by more than
// --few-runs-limit (+200%) and every NEW frame is slower than every BASE
// frame by more than the minimum effect; everything else is inconclusive.
//
// # Work
//
// GPU zones of a context that counts pipeline statistics carry their work
// besides their time (timeline.Work): how many vertices, primitives and
// shader invocations each ran. diff compares them too, zone by zone (the
// same zones as the times), statistic by statistic, wherever both sides
// counted one.
//
// Runs are the unit here as well: a run's value of a statistic is the
// zone's mean count per occurrence, over the occurrences that have counts
// (for a zone that runs once a frame, its count per frame), and each side
// is its runs' median. An occurrence without counts (Work.Missing says
// why: inside a render pass, across command buffers, queries spent...)
// is left out of the mean; a zone with no counts in a run is not
// compared in that run; a statistic counted on one side only is reported
// as such, and is inconclusive (nothing says it did not change).
//
// For the same work, a GPU counts the same invocations run after run, so
// a statistic whose runs all agree on each side, and whose tolerance
// (diffWorkTolerance: the spread measured over identical runs on lavapipe
// and an H100; 0 for every statistic) is 0, is compared exactly: it
// regresses when NEW's value exceeds BASE's by more than --min-effect,
// and improves when it falls by as much; one run a side is enough.
// --floor, a duration, does not apply. Where a side's runs disagree, or
// the tolerance is not 0, the runs decide, as they do for time: a
// permutation test over the runs (max-T, on the log of the counts, over
// every such statistic of every zone together) at the gate's level, which
// the time tests then share (each family at half of --alpha). Such a
// statistic regresses or improves only beyond both --min-effect and its
// tolerance, significantly; it is unchanged only when the runs show it
// moved by less than --min-effect; otherwise it is inconclusive (exit 3
// unless something regressed), with too few runs as with a change too
// small to tell. A spread never makes "unchanged": five runs a side, all
// of NEW above all of BASE by 25%, regress though one BASE run sits 10%
// up. A work regression fails the gate (exit 1) whatever the times say;
// an improvement is reported, as a time improvement is. Every statistic
// not unchanged has a row in the text and markdown tables; the summary
// above them names the first unchanged, and --json lists all with their
// p-values.
//
// # The defaults, and why
//
// --alpha 0.05: with 5 runs a side (252 splits) the smallest p-value is
// 0.004, so 0.05 leaves the max-T room to reject; a gate that fails one
// build in twenty on the boundary of the minimum effect, and less on
// unchanged code (the lavapipe test measures it), is one a team keeps.
//
// --min-effect 3%: quiet lavapipe runs of the demo put the GPU frame
// zone's run medians within a few percent of each other (the lavapipe
// test logs it), and GPU zones on an H200 agree to 0.1%; the GPU acceptance
// asks a 5% change to be caught with 5 runs a side, so the margin must sit
// below 5%, and 3% leaves the test 2% to prove.
//
// --floor 10µs: identical runs on an H200 moved CPU spans by more than 5µs
// (record 37.0 vs 42.2µs, update 323 vs 361ns), and lavapipe's CPU spans
// move by more (the lavapipe test logs each zone's spread); 10µs is 0.06%
// of a 60 Hz frame, so no change a user feels is below it, and a 30ns
// change in a 600ns zone with 32ns timestamp ticks never counts.
//
// --few-runs-limit 200%: identical lavapipe runs with a busy neighbour
// (the rasterizer on its default threads) differed by up to +163% in the
// GPU frame zone.
//
// On lavapipe, LP_NUM_THREADS=0 keeps rasterization on one thread: with
// the default, a frame waits for its slowest thread, and a neighbour that
// deschedules one stretches the frame 2-3 times; with one thread the same
// neighbour moved it by 0 to 12% in our runs.
//
// # Outputs
//
// A plain table, sorted by severity (regressed, over budget, inconclusive,
// improved, new and gone, unchanged); where zones carry work, a second
// table of every statistic that regressed or improved (zone, statistic,
// runs, BASE's and NEW's values, change, tolerance) and of those counted
// on one side only. --markdown for a pull-request comment or job summary,
// naming the runs, the device, the driver (--driver: traces do not record
// it) and the verdict; --json with every run's values, every statistic's
// included; --html FILE with both tables and, for every zone not
// unchanged in time, the runs of both sides as box plots in inline SVG.
// framescope benchfmt writes a side's runs in the Go benchmark format
// (one line per zone and run, with each counted pipeline statistic's mean
// a metric of its own: "fragment_shader_invocations/op"), so that
// benchstat compares Framescope runs too.
//
// Names in traces and histories (zones, tracks, devices, paths, commits,
// testbeds, branches) are untrusted, and every command writes them by one
// rule per output (escape.go): text writes control, format and bidi
// characters and bytes that are not UTF-8 as Go escapes (\x1b, \u202e);
// Markdown puts each name in a code span, its fence longer than any run of
// backquotes in it, so that no link, mention or markup is made; HTML
// escapes a name as text does, then as HTML, and isolates its direction
// in <bdi>, the page always UTF-8; JSON keeps names exact.
package main
