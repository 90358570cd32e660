package bench

import (
	"context"
	"runtime"
	"testing"

	"github.com/psdlearn/psdlearn/engine"
)

func TestParseStatus(t *testing.T) {
	for _, tc := range []struct {
		name     string
		in       string
		rss, hwm uint64
		ok       bool
	}{
		{"linux", "Name:\tbench\nVmPeak:\t  3060 kB\nVmHWM:\t    1744 kB\nVmRSS:\t    1700 kB\nThreads:\t1\n", 1700, 1744, true},
		{"missing hwm", "VmRSS:\t 1700 kB\n", 0, 0, false},
		{"bad unit", "VmRSS:\t 1700 MB\nVmHWM:\t 1800 kB\n", 0, 0, false},
		{"bad number", "VmRSS:\t 17x0 kB\nVmHWM:\t 1800 kB\n", 0, 0, false},
	} {
		rss, hwm, err := parseStatus([]byte(tc.in))
		if (err == nil) != tc.ok || rss != tc.rss || hwm != tc.hwm {
			t.Errorf("%s: got rss %d, hwm %d, err %v; want %d, %d, ok %v", tc.name, rss, hwm, err, tc.rss, tc.hwm, tc.ok)
		}
	}
}

// TestPeakRSSCountsTouchedMemory runs a case that allocates and writes
// 200 MiB (pure Go, no C) and checks that the measured peak resident set
// exceeds the baseline by at least 150 MiB, while a case that allocates
// nothing stays within a few MiB of its baseline. The Go heap figure must
// see the 200 MiB too.
func TestPeakRSSCountsTouchedMemory(t *testing.T) {
	if _, ok := startPeakRSS(); !ok {
		t.Skip("peak RSS unsupported here (no writable /proc/self/clear_refs)")
	}
	const size = 200 << 20
	var sink int
	alloc := Case{Name: "alloc", Size: size, Setup: func(engine.Backend) (func(context.Context) (Outcome, error), error) {
		return func(context.Context) (Outcome, error) {
			buf := make([]byte, size)
			for i := 0; i < len(buf); i += 4096 {
				buf[i] = byte(i>>12) | 1
			}
			s := 0
			for i := 0; i < len(buf); i += 4096 {
				s += int(buf[i])
			}
			sink += s
			runtime.KeepAlive(buf)
			return Outcome{}, nil
		}, nil
	}}
	idle := Case{Name: "idle", Size: 1, Setup: func(engine.Backend) (func(context.Context) (Outcome, error), error) {
		return func(context.Context) (Outcome, error) { return Outcome{}, nil }, nil
	}}
	b, err := engine.Get("go")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), "mem", []Case{alloc, idle}, Options{Backends: []engine.Backend{b}, Runs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 {
		t.Fatalf("%d results, want 2", len(res))
	}
	a, i := res[0], res[1]
	t.Logf("alloc: peak RSS %.1f MiB, base %.1f MiB, peak heap %.1f MiB; idle: peak RSS %.1f MiB, base %.1f MiB", a.PeakRSSMB, a.BaseRSSMB, a.PeakHeapMB, i.PeakRSSMB, i.BaseRSSMB)
	if a.Error != "" || !(a.BaseRSSMB > 0) || a.PeakRSSMB-a.BaseRSSMB < 150 {
		t.Errorf("alloc: peak RSS %.1f MiB over base %.1f MiB, want ≥ 150 MiB more (error %q)", a.PeakRSSMB, a.BaseRSSMB, a.Error)
	}
	if a.PeakHeapMB < 150 {
		t.Errorf("alloc: peak Go heap %.1f MiB, want ≥ 150", a.PeakHeapMB)
	}
	if i.Error != "" || !(i.BaseRSSMB > 0) || i.PeakRSSMB-i.BaseRSSMB > 16 {
		t.Errorf("idle: peak RSS %.1f MiB over base %.1f MiB, want < 16 MiB more", i.PeakRSSMB, i.BaseRSSMB)
	}
}

// TestCaseFilter checks Options.Case: a substring of the name or the
// detail, ignoring case.
func TestCaseFilter(t *testing.T) {
	c := Case{Name: "frobmetric", Detail: "letters rows:10500,4500,5000"}
	for _, tc := range []struct {
		sub  string
		want bool
	}{{"", true}, {"frob", true}, {"LETTERS", true}, {"boost", false}, {"wine", false}} {
		if got := c.matches(tc.sub); got != tc.want {
			t.Errorf("matches(%q) = %v, want %v", tc.sub, got, tc.want)
		}
	}
}
