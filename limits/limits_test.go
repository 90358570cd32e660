package limits

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestParseBytes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true},
		{"1000", 1000, true},
		{"1e9", 1e9, true},
		{"500MB", 500e6, true},
		{"500 mb", 500e6, true},
		{"8GiB", 8 << 30, true},
		{"1.5KiB", 1536, true},
		{"2T", 2e12, true},
		{"unlimited", Unlimited, true},
		{"1e30", Unlimited, true},
		{"", 0, false},
		{"-1", 0, false},
		{"-5GB", 0, false},
		{"NaN", 0, false},
		{"Inf", 0, false},
		{"12XB", 0, false},
		{"GB", 0, false},
		{"1e", 0, false},
	} {
		got, err := ParseBytes(tc.in)
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestCheck(t *testing.T) {
	t.Setenv(EnvMaxMemory, "")
	defer SetMaxMemory(SetMaxMemory(1 << 30))
	if err := Check("small", 1<<29); err != nil {
		t.Fatal(err)
	}
	for _, est := range []float64{1<<30 + 1, 140e12, math.Inf(1), math.NaN()} {
		err := Check("frobmetric on 30 points × 4194304 features", est)
		if !errors.Is(err, ErrMemory) {
			t.Fatalf("estimate %g: error %v, want ErrMemory", est, err)
		}
		if msg := err.Error(); !strings.Contains(msg, "--max-memory") || !strings.Contains(msg, "1.0 GiB") || !strings.Contains(msg, "4194304 features") {
			t.Errorf("message %q lacks the limit, the run or the flag", msg)
		}
	}
	// The override beats the environment; without it the environment applies.
	t.Setenv(EnvMaxMemory, "2GiB")
	if n, _ := MaxMemory(); n != 1<<30 {
		t.Errorf("MaxMemory with override = %d", n)
	}
	SetMaxMemory(0)
	if n, err := MaxMemory(); n != 2<<30 || err != nil {
		t.Errorf("MaxMemory from $%s = %d, %v", EnvMaxMemory, n, err)
	}
	t.Setenv(EnvMaxMemory, "lots")
	if err := Check("x", 1); err == nil {
		t.Error("malformed $PSDLEARN_MAX_MEMORY accepted")
	}
	t.Setenv(EnvMaxMemory, "")
	if n, _ := MaxMemory(); n != DefaultMaxMemory() || n <= 0 {
		t.Errorf("default %d", n)
	}
	SetMaxMemory(Unlimited)
	if err := Check("x", 1e30); err != nil {
		t.Errorf("unlimited: %v", err)
	}
}

func TestWords(t *testing.T) {
	if got := Words(4194304, 4194304); got != 8*4194304.0*4194304 {
		t.Errorf("Words = %g", got)
	}
	if got := Words(math.MaxInt, math.MaxInt); math.IsInf(got, 0) || got <= 0 {
		t.Errorf("Words(MaxInt, MaxInt) = %g", got)
	}
	if Words(-3, 5) != 0 {
		t.Error("negative factor")
	}
}
