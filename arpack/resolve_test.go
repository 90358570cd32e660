package arpack_test

import (
	"testing"

	"github.com/psdlearn/psdlearn/arpack"
)

// TestResolveDefaultNCV: a zero NCV resolves to DefaultNCV, which is a
// valid basis size (k < NCV ≤ n) holding thirty vectors beyond k, or 2k+1
// when that is more, or the whole space when n is smaller.
func TestResolveDefaultNCV(t *testing.T) {
	for _, tc := range []struct{ n, k, want int }{
		{1000, 1, 31},
		{1000, 10, 40},
		{1000, 29, 59},
		{1000, 100, 201},
		{12, 3, 12},
		{2, 1, 2},
	} {
		r, err := arpack.Resolve(tc.n, tc.k, arpack.LargestAlgebraic, arpack.Options{})
		if err != nil {
			t.Fatalf("n=%d k=%d: %v", tc.n, tc.k, err)
		}
		if r.NCV != tc.want || arpack.DefaultNCV(tc.n, tc.k) != tc.want {
			t.Errorf("n=%d k=%d: NCV %d (DefaultNCV %d), want %d", tc.n, tc.k, r.NCV, arpack.DefaultNCV(tc.n, tc.k), tc.want)
		}
		if r.NCV <= tc.k || r.NCV > tc.n {
			t.Errorf("n=%d k=%d: NCV %d outside (k, n]", tc.n, tc.k, r.NCV)
		}
	}
}
