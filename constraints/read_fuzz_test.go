package constraints

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// fuzzRows bounds the number of data rows of the fuzz targets, so that a
// fuzzed n cannot make the readers' callers allocate much.
const fuzzRows = 1 << 10

// checkRefusal asserts what every refusal of a reader satisfies: it wraps
// ErrInvalid (the input is in memory, so nothing else can fail) and is one
// line.
func checkRefusal(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("error %v does not wrap ErrInvalid", err)
	}
	if strings.ContainsAny(err.Error(), "\n\r") {
		t.Fatalf("error %q spans several lines", err)
	}
}

func FuzzReadTriplets(f *testing.F) {
	for _, s := range []string{
		"i,j,k\n0,1,2\n",
		"\ufeffi,j,k\r\n0,1,2\r\n2,1,0\r\n",
		"i,j,k\n0,1,2\n0,2,1\n",
		"i,j,k\n0,1,2\n0,1,2\n",
		"i,j,k\n0,1\n",
		"i,j,k\n1,1,2\n",
		"i,j,k\n-1,1,2\n",
		"i,j,y\n0,1,1\n",
		"",
		"i,j,k\n",
	} {
		f.Add([]byte(s), 3)
	}
	f.Fuzz(func(t *testing.T, in []byte, n int) {
		n %= fuzzRows
		s, err := ReadTriplets(bytes.NewReader(in), n)
		if err != nil {
			if s != nil {
				t.Fatal("triplets with an error")
			}
			checkRefusal(t, err)
			return
		}
		if s.Len() == 0 || s.N != n {
			t.Fatalf("%d triplets on %d points accepted for n = %d", s.Len(), s.N, n)
		}
		seen := map[Triplet]bool{}
		for _, tr := range s.Triplets {
			if tr.I < 0 || tr.J < 0 || tr.K < 0 || tr.I >= n || tr.J >= n || tr.K >= n || tr.I == tr.J || tr.I == tr.K || tr.J == tr.K {
				t.Fatalf("bad triplet %v accepted", tr)
			}
			if seen[tr] || seen[Triplet{tr.I, tr.K, tr.J}] {
				t.Fatalf("repeated or contradicted triplet %v accepted", tr)
			}
			seen[tr] = true
		}
		// What was accepted round-trips.
		var buf bytes.Buffer
		if err := WriteTriplets(&buf, s.Triplets); err != nil {
			t.Fatal(err)
		}
		s2, err := ReadTriplets(&buf, n)
		if err != nil || s2.Len() != s.Len() {
			t.Fatalf("round trip: %v", err)
		}
		for r := range s.Triplets {
			if s.Triplets[r] != s2.Triplets[r] {
				t.Fatalf("round trip: triplet %d %v became %v", r, s.Triplets[r], s2.Triplets[r])
			}
		}
	})
}

func FuzzReadPairs(f *testing.F) {
	for _, s := range []string{
		"i,j,y\n0,1,1\n",
		"\ufeffi,j,y\r\n0,1,+1\r\n2,1,-1\r\n",
		"i,j,y\n0,1,1\n1,0,-1\n",
		"i,j,y\n0,1,1\n1,0,1\n",
		"i,j,y\n0,1,0\n",
		"i,j,y\n1,1,1\n",
		"i,j,y\n0,1\n",
		"i,j,k\n0,1,2\n",
		"",
		"i,j,y\n",
	} {
		f.Add([]byte(s), 3)
	}
	f.Fuzz(func(t *testing.T, in []byte, n int) {
		n %= fuzzRows
		p, err := ReadPairs(bytes.NewReader(in), n)
		if err != nil {
			if p != nil {
				t.Fatal("pairs with an error")
			}
			checkRefusal(t, err)
			return
		}
		if p.Len() == 0 || p.N != n {
			t.Fatalf("%d pairs on %d points accepted for n = %d", p.Len(), p.N, n)
		}
		seen := map[[2]int]bool{}
		for _, q := range p.List {
			if q.A < 0 || q.B >= n || q.A >= q.B {
				t.Fatalf("bad pair %v accepted", q)
			}
			if seen[[2]int{q.A, q.B}] {
				t.Fatalf("repeated pair %v accepted", q)
			}
			seen[[2]int{q.A, q.B}] = true
		}
		var buf bytes.Buffer
		if err := WritePairs(&buf, p.List); err != nil {
			t.Fatal(err)
		}
		p2, err := ReadPairs(&buf, n)
		if err != nil || p2.Len() != p.Len() {
			t.Fatalf("round trip: %v", err)
		}
		for r := range p.List {
			if p.List[r] != p2.List[r] {
				t.Fatalf("round trip: pair %d %v became %v", r, p.List[r], p2.List[r])
			}
		}
		// Turning them into triplets never panics, and what it gives is valid.
		if ts, err := PairTriplets(p, 1<<12); err == nil {
			if _, err := NewTripletSet(n, ts); err != nil {
				t.Fatalf("PairTriplets gave invalid triplets: %v", err)
			}
		} else {
			checkRefusal(t, err)
		}
	})
}
