package main

import (
	"fmt"
	"io"
	"math"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/psdlearn/psdlearn/progress"
)

// Progress lines: the library reports progress.Events; the CLI prints some
// of them on stderr as "psdlearn [12.3s] message", throttled so that a long
// run prints a line every second or so, not every iteration. These are
// variables for the tests.
var (
	// progressDelay is how long a run lasts before progress lines appear.
	progressDelay = time.Second
	// progressInterval is the least time between two lines.
	progressInterval = time.Second
	// progressStep is the least share of the iteration budget between two
	// lines about iterations, when the budget is known ...
	progressStep = 0.05
	// ... unless progressHeartbeat has passed since the last line, so that
	// a slow run still shows it is alive.
	progressHeartbeat = 10 * time.Second
	// progressNow is the clock.
	progressNow = time.Now
)

// progressLine prints throttled progress lines on stderr. It is safe for
// concurrent use; its event method is a progress.Func.
type progressLine struct {
	w     io.Writer
	quiet bool
	start time.Time
	// total is the iteration budget of one solve (0: unknown). With it a
	// line shows iteration/total, the rate and the time left at that rate.
	total int
	// capped says total is only a cap, which the run may never reach (a
	// solver stops at its certificate): a line then shows the share of the
	// cap and the rate, never a time left.
	capped bool
	// hook, if set, receives every event, printed or not (tests).
	hook func(progress.Event)

	mu       sync.Mutex
	last     time.Time // when the last line was printed
	lastIter int       // the iteration of the last line printed
	seen     int       // the last iteration seen
	base     int       // the iteration and time the rate is measured from
	baseT    time.Time
	printed  bool   // a line was printed
	lastMsg  string // the message of the last event, printed or not
	lastLine string // the message of the last line printed
}

// newProgress returns the progress printer of a command: nothing under
// --quiet.
func newProgress(env *cmdEnv) *progressLine {
	p := &progressLine{w: env.stderr, quiet: env.quiet, start: progressNow()}
	cur.progress = append(cur.progress, p)
	return p
}

// withTotal sets the iteration budget (0: unknown), a count the run makes
// exactly (MEG's examples), and returns p.
func (p *progressLine) withTotal(total int) *progressLine {
	p.total, p.capped = max(total, 0), false
	return p
}

// withCap sets an iteration cap the run may stop short of (a solver's
// limit) and returns p: lines show the share of the cap, no time left.
func (p *progressLine) withCap(limit int) *progressLine {
	p.total, p.capped = max(limit, 0), true
	return p
}

// finish prints the last line of a run that ended well, marked done, when
// progress lines were printed; with the last event's message if that was
// not printed.
func (p *progressLine) finish() {
	now := progressNow()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.quiet || !p.printed {
		return
	}
	msg := "done"
	if p.lastMsg != "" && p.lastMsg != p.lastLine {
		msg += ": " + p.lastMsg
	}
	fmt.Fprintf(p.w, "psdlearn [%.1fs] %s\n", now.Sub(p.start).Seconds(), msg)
}

// printf reports a message of the command itself (no iteration).
func (p *progressLine) printf(format string, args ...any) {
	p.event(progress.Event{Objective: math.NaN(), Gap: math.NaN(), Message: fmt.Sprintf(format, args...)})
}

// event prints e's line unless the run is younger than progressDelay, a
// line was printed less than progressInterval ago, or e reports an
// iteration less than progressStep of the budget after the last line's
// (and progressHeartbeat has not passed). A count that goes down starts a
// new solve: its first event may print at once.
func (p *progressLine) event(e progress.Event) {
	now := progressNow()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.hook != nil {
		p.hook(e)
	}
	if p.quiet {
		return
	}
	p.lastMsg = finiteText(strings.TrimRight(e.Message, "\n"))
	restart := false
	if it := e.Iteration; it > 0 {
		if it < p.seen || p.baseT.IsZero() {
			p.base, p.baseT, p.lastIter, restart = it, now, 0, p.seen > 0
		}
		p.seen = it
	}
	since := now.Sub(p.last)
	switch {
	case now.Sub(p.start) <= progressDelay, since < progressInterval:
		return
	case p.total > 0 && e.Iteration > 0 && !restart && since < progressHeartbeat &&
		float64(e.Iteration-p.lastIter) < progressStep*float64(p.total):
		return
	}
	p.last = now
	if e.Iteration > 0 {
		p.lastIter = e.Iteration
	}
	msg := p.lastMsg
	p.printed, p.lastLine = true, msg
	if counts := p.counts(e.Iteration, now); counts != "" {
		msg = counts + " | " + msg
	}
	fmt.Fprintf(p.w, "psdlearn [%.1fs] %s\n", now.Sub(p.start).Seconds(), msg)
}

// counts formats "it/total (pct%), rate it/s, ETA d" for an iteration of a
// known budget, "it of at most cap (pct%), rate it/s" for a cap (the line's
// prefix shows the time elapsed); "" otherwise. The rate is measured since
// the first event of the current solve.
func (p *progressLine) counts(it int, now time.Time) string {
	if p.total <= 0 || it <= 0 {
		return ""
	}
	var b strings.Builder
	switch {
	case it > p.total:
		fmt.Fprintf(&b, "%d (budget %d)", it, p.total)
	case p.capped:
		fmt.Fprintf(&b, "%d of at most %d (%.0f%%)", it, p.total, 100*float64(it)/float64(p.total))
	default:
		fmt.Fprintf(&b, "%d/%d (%.0f%%)", it, p.total, 100*float64(it)/float64(p.total))
	}
	dt := now.Sub(p.baseT).Seconds()
	if dt > 0 && it > p.base {
		rate := float64(it-p.base) / dt
		fmt.Fprintf(&b, ", %s it/s", formatRate(rate))
		if it < p.total && !p.capped {
			fmt.Fprintf(&b, ", ETA %s", formatDuration(float64(p.total-it)/rate))
		}
	}
	return b.String()
}

// formatRate prints a rate with about three significant digits.
func formatRate(r float64) string {
	switch {
	case r >= 100:
		return fmt.Sprintf("%.0f", r)
	case r >= 10:
		return fmt.Sprintf("%.1f", r)
	}
	return fmt.Sprintf("%.2g", r)
}

// formatDuration prints seconds as 42s, 3m07s or 2h05m.
func formatDuration(s float64) string {
	if math.IsInf(s, 0) || math.IsNaN(s) || s > 99*3600 {
		return "?"
	}
	d := time.Duration(math.Round(s)) * time.Second
	switch h, m, sec := int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60; {
	case h > 0:
		return fmt.Sprintf("%dh%02dm", h, m)
	case m > 0:
		return fmt.Sprintf("%dm%02ds", m, sec)
	default:
		return fmt.Sprintf("%ds", sec)
	}
}

// nonFinite matches a NaN or infinity as fmt prints it, as a word.
var nonFinite = regexp.MustCompile(`(^|[^\pL\pN_])[+-]?(NaN|Inf)([^\pL\pN_]|$)`)

// finiteText replaces what reads as a NaN or ±Inf in a progress message by
// "n/a": the library's messages say what is not available in words, and
// this is the safety net for one that does not (a progress line never
// shows a non-finite number).
func finiteText(msg string) string {
	if !strings.Contains(msg, "NaN") && !strings.Contains(msg, "Inf") {
		return msg
	}
	for {
		loc := nonFinite.FindStringSubmatchIndex(msg)
		if loc == nil {
			return msg
		}
		// Keep the delimiters (groups 1 and 3), replace the number.
		msg = msg[:loc[3]] + "n/a" + msg[loc[6]:]
	}
}
