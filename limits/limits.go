// Package limits holds psdlearn's memory budget: the largest amount of memory
// a run may be estimated to need before the algorithms allocate anything that
// grows with the data (D×D matrices, N×N kernels, per-step histories).
//
// A hostile or mistaken input — a LIBSVM file of 1.2 KB with one feature index
// at 4,194,304, a step count of 2·10⁹ — describes in a few bytes a run that
// needs terabytes; without a check the Go runtime dies with "fatal error: out
// of memory", which no caller can recover from. Every algorithm entry point
// estimates its memory from N, D and its options and calls Check first, so
// such a run is refused with an error that names the estimate, the limit and
// how to raise it.
//
// The limit is, in order of precedence:
//
//  1. the value given to SetMaxMemory (the psdlearn command's --max-memory
//     flag sets it);
//  2. the environment variable PSDLEARN_MAX_MEMORY, a byte count such as
//     "8GiB", "500MB" or "1e9";
//  3. DefaultMaxMemory: half of the machine's memory (MemTotal of
//     /proc/meminfo), or of the data-segment limit (ulimit -d) or of the
//     address space left under ulimit -v when lower; 8 GiB where none of
//     them can be read. It is computed once, at the first use.
//
// The value "0" (flag or variable) means the default; "unlimited" turns the
// check off. Estimates are deliberately rough upper bounds on the dominant
// allocations, not exact figures.
package limits

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/psdlearn/psdlearn/errs"
)

// EnvMaxMemory is the environment variable that sets the memory limit.
const EnvMaxMemory = "PSDLEARN_MAX_MEMORY"

// Unlimited turns the memory check off when given to SetMaxMemory.
const Unlimited int64 = math.MaxInt64

// fallbackMaxMemory is the limit where the machine's memory cannot be read.
const fallbackMaxMemory int64 = 8 << 30

// ErrMemory is wrapped by every error about a run whose estimated memory
// exceeds the limit.
var ErrMemory = errs.New("estimated memory exceeds the limit", errs.ErrResource)

var override atomic.Int64 // 0: none

// SetMaxMemory sets the memory limit in bytes for the whole process and
// returns the previous override (0 if there was none). n = 0 removes the
// override (PSDLEARN_MAX_MEMORY or the default applies again); Unlimited
// turns the check off. A negative n is treated as 0.
func SetMaxMemory(n int64) (prev int64) {
	return override.Swap(max(n, 0))
}

// MaxMemory returns the memory limit in bytes that Check applies, and an
// error if PSDLEARN_MAX_MEMORY is set to something that is not a byte count.
func MaxMemory() (int64, error) {
	if n := override.Load(); n > 0 {
		return n, nil
	}
	if s := strings.TrimSpace(os.Getenv(EnvMaxMemory)); s != "" {
		n, err := ParseBytes(s)
		if err != nil {
			return 0, fmt.Errorf("$%s: %w", EnvMaxMemory, err)
		}
		if n > 0 {
			return n, nil
		}
	}
	return DefaultMaxMemory(), nil
}

var (
	defaultOnce sync.Once
	defaultMax  int64
)

// DefaultMaxMemory returns the default limit: half of the smallest of the
// machine's total memory, the process's data limit and the address space
// left under its address-space limit, or 8 GiB when none of them can be
// read.
func DefaultMaxMemory() int64 {
	defaultOnce.Do(func() {
		avail := systemMemory()
		if avail <= 0 {
			defaultMax = fallbackMaxMemory
			return
		}
		defaultMax = avail / 2
	})
	return defaultMax
}

// ParseBytes parses a byte count: a non-negative number (decimal or with an
// exponent, "1e9") with an optional unit B, K/KB (10³), M/MB, G/GB, T/TB, or
// KiB (2¹⁰), MiB, GiB, TiB, case-insensitive; or "unlimited" (Unlimited).
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if strings.EqualFold(t, "unlimited") {
		return Unlimited, nil
	}
	i := len(t)
	for i > 0 && (t[i-1] >= 'a' && t[i-1] <= 'z' || t[i-1] >= 'A' && t[i-1] <= 'Z') {
		i--
	}
	num, unit := strings.TrimSpace(t[:i]), strings.ToLower(t[i:])
	// An exponent "1e9" ends in a digit, so the loop above leaves it whole.
	mult := 1.0
	switch unit {
	case "", "b":
	case "k", "kb":
		mult = 1e3
	case "m", "mb":
		mult = 1e6
	case "g", "gb":
		mult = 1e9
	case "t", "tb":
		mult = 1e12
	case "kib":
		mult = 1 << 10
	case "mib":
		mult = 1 << 20
	case "gib":
		mult = 1 << 30
	case "tib":
		mult = 1 << 40
	default:
		return 0, fmt.Errorf("limits: %q: unknown unit %q (want B, KB, MB, GB, TB, KiB, MiB, GiB, TiB or unlimited)", s, t[i:])
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || !(v >= 0) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("limits: %q is not a byte count (want e.g. 8GiB, 500MB, 1e9 or unlimited)", s)
	}
	b := v * mult
	if b >= math.MaxInt64 {
		return Unlimited, nil
	}
	return int64(b), nil
}

// FormatBytes formats a byte count with a binary unit, e.g. "140.7 TiB".
func FormatBytes(b float64) string {
	switch {
	case math.IsNaN(b):
		return "an unknown amount"
	case math.IsInf(b, 1) || b >= math.MaxInt64:
		return "more than 8 EiB"
	case b < 1<<10:
		return fmt.Sprintf("%.0f B", b)
	}
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	u := -1
	for b >= 1<<10 && u < len(units)-1 {
		b /= 1 << 10
		u++
	}
	return fmt.Sprintf("%.1f %s", b, units[u])
}

// Words returns the bytes of n float64 values, computed in floating point so
// that products of large dimensions cannot overflow; negative factors count
// as zero.
func Words(factors ...int) float64 {
	b := 8.0
	for _, f := range factors {
		b *= float64(max(f, 0))
	}
	return b
}

// Check returns an error wrapping ErrMemory when the estimate exceeds the
// limit (or when PSDLEARN_MAX_MEMORY is malformed). what names the run and
// its size, e.g. "frobmetric on 30 points × 4194304 features"; the message
// names the estimate, the limit and how to raise it.
func Check(what string, estimate float64) error {
	limit, err := MaxMemory()
	if err != nil {
		return err
	}
	if limit == Unlimited || !(estimate > float64(limit)) && !math.IsNaN(estimate) {
		return nil
	}
	return fmt.Errorf("%s needs an estimated %s of memory, over the limit of %s: %w (raise it with --max-memory or $%s, or limits.SetMaxMemory in a program)",
		what, FormatBytes(estimate), FormatBytes(float64(limit)), ErrMemory, EnvMaxMemory)
}
