package main

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/psdlearn/psdlearn/progress"
)

// TestProgressThrottle feeds progress events on a fake clock and checks
// which lines are printed: nothing in the first second, at most one line a
// second, with a known budget at most one per 5% of it (or a 10 s
// heartbeat), a new solve at once, nothing under --quiet; lines about
// iterations of a known budget show it/total, it/s and the ETA.
func TestProgressThrottle(t *testing.T) {
	var now time.Time
	oldNow := progressNow
	progressNow = func() time.Time { return now }
	defer func() { progressNow = oldNow }()
	t0 := time.Unix(1_000_000, 0)

	type ev struct {
		ms int // time since the start
		it int // iteration (0: a message without one)
	}
	// every returns events each step ms from ms0 to ms1, the iteration
	// advancing by dit per event from it0 (dit 0: no iteration).
	every := func(ms0, ms1, step, it0, dit int) []ev {
		var out []ev
		for ms, it := ms0, it0; ms <= ms1; ms, it = ms+step, it+dit {
			out = append(out, ev{ms, it})
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		total  int
		quiet  bool
		events []ev
		want   []string // one substring per printed line, in order
	}{
		{name: "nothing in the first second", events: every(100, 1000, 100, 0, 0)},
		{name: "one line a second", events: every(100, 3500, 100, 0, 0),
			want: []string{"[1.1s] message at 1100", "[2.1s] message at 2100", "[3.1s] message at 3100"}},
		{name: "iterations without a budget: one a second, no counts", events: every(100, 2500, 100, 1, 1),
			want: []string{"[1.1s] message at 1100", "[2.1s] message at 2100"}},
		{name: "fast iterations: one a second", total: 1000, events: every(100, 2500, 100, 10, 10),
			want: []string{"110/1000 (11%)", "210/1000 (21%)"}},
		{name: "slow iterations: one per 5% of the budget", total: 1000, events: every(100, 12000, 100, 1, 1),
			want: []string{"11/1000 (1%)", "61/1000 (6%), 10.0 it/s, ETA 1m34s", "111/1000 (11%), 10.0 it/s, ETA 1m29s"}},
		{name: "heartbeat every 10 s", total: 1_000_000, events: every(100, 12000, 100, 1, 1),
			want: []string{"11/1000000", "111/1000000"}},
		{name: "a new solve prints at once", total: 1000, events: append(every(100, 1500, 100, 1, 1), every(2600, 2700, 100, 1, 1)...),
			want: []string{"11/1000", "1/1000 (0%) |"}},
		{name: "beyond the budget", total: 10, events: every(1100, 1100, 100, 20, 1),
			want: []string{"20 (budget 10) |"}},
		{name: "quiet", quiet: true, events: every(100, 5000, 100, 1, 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var errb bytes.Buffer
			now = t0
			p := newProgress(&cmdEnv{stderr: &errb, quiet: tc.quiet}).withTotal(tc.total)
			hooked := 0
			p.hook = func(progress.Event) { hooked++ }
			for _, e := range tc.events {
				now = t0.Add(time.Duration(e.ms) * time.Millisecond)
				p.event(progress.Event{Iteration: e.it, Objective: math.NaN(), Gap: math.NaN(), Message: "message at " + strconv.Itoa(e.ms)})
			}
			if hooked != len(tc.events) {
				t.Errorf("hook saw %d of %d events", hooked, len(tc.events))
			}
			got := strings.Split(strings.TrimRight(errb.String(), "\n"), "\n")
			if errb.Len() == 0 {
				got = nil
			}
			if len(got) != len(tc.want) {
				t.Fatalf("%d lines, want %d:\n%s", len(got), len(tc.want), errb.String())
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(got[i], "psdlearn [") || !strings.Contains(got[i], w) {
					t.Errorf("line %d %q does not contain %q", i, got[i], w)
				}
			}
		})
	}
}

// TestProgressFormats checks the rate and duration formats of the counts.
func TestProgressFormats(t *testing.T) {
	for _, tc := range []struct {
		s    float64
		want string
	}{{0, "0s"}, {42.4, "42s"}, {187, "3m07s"}, {7500, "2h05m"}, {math.Inf(1), "?"}, {1e9, "?"}} {
		if got := formatDuration(tc.s); got != tc.want {
			t.Errorf("formatDuration(%v) = %q, want %q", tc.s, got, tc.want)
		}
	}
	for _, tc := range []struct {
		r    float64
		want string
	}{{1234.5, "1234"}, {35.24, "35.2"}, {2.345, "2.3"}, {0.0123, "0.012"}} {
		if got := formatRate(tc.r); got != tc.want {
			t.Errorf("formatRate(%v) = %q, want %q", tc.r, got, tc.want)
		}
	}
}
