package constraints

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

func TestReadTriplets(t *testing.T) {
	in := "\ufeff i , j , k \r\n0,1,2\r\n\r\n 3, 2 ,1\n2,0,3"
	s, err := ReadTriplets(strings.NewReader(in), 4)
	if err != nil {
		t.Fatal(err)
	}
	want := []Triplet{{0, 1, 2}, {3, 2, 1}, {2, 0, 3}}
	if len(s.Triplets) != len(want) {
		t.Fatalf("got %v, want %v", s.Triplets, want)
	}
	for r := range want {
		if s.Triplets[r] != want[r] {
			t.Fatalf("triplet %d = %v, want %v", r, s.Triplets[r], want[r])
		}
	}
	// Round trip through the writer.
	var buf bytes.Buffer
	if err := WriteTriplets(&buf, s.Triplets); err != nil {
		t.Fatal(err)
	}
	s2, err := ReadTriplets(&buf, 4)
	if err != nil || len(s2.Triplets) != 3 || s2.Triplets[1] != want[1] {
		t.Fatalf("round trip: %v, %v", s2, err)
	}
}

func TestReadPairs(t *testing.T) {
	in := "I,J,Y\n0,1,1\n2,1,-1\n3,0,+1\n"
	p, err := ReadPairs(strings.NewReader(in), 4)
	if err != nil {
		t.Fatal(err)
	}
	want := []LabelledPair{{0, 1, true}, {1, 2, false}, {0, 3, true}}
	for r := range want {
		if p.List[r] != want[r] {
			t.Fatalf("pair %d = %v, want %v", r, p.List[r], want[r])
		}
	}
	var buf bytes.Buffer
	if err := WritePairs(&buf, p.List); err != nil {
		t.Fatal(err)
	}
	p2, err := ReadPairs(&buf, 4)
	if err != nil || p2.Len() != 3 || p2.List[1] != want[1] {
		t.Fatalf("round trip: %v, %v", p2, err)
	}
}

// TestReadRefusals checks that every malformed file is refused with an
// error wrapping ErrInvalid that names the line (when there is one).
func TestReadRefusals(t *testing.T) {
	long := "i,j,k\n0,1," + strings.Repeat("0", MaxLineBytes) + "2\n"
	for _, c := range []struct {
		name, in, want string
		pairs          bool
	}{
		{"empty", "", "empty file", false},
		{"binary", "\x00\x01\x02", "line 1: a NUL byte at byte 0: this is binary data", false},
		{"binary later", "i,j,k\n0,1,\x002\n", "line 2: a NUL byte", false},
		{"UTF-16", "\xff\xfei\x00,\x00j\x00", "line 1: the file is UTF-16 text", false},
		{"CR line endings", "i,j,y\r0,1,1\r0,2,-1\r", "carriage return", true},
		{"blank only", "\n\n  \n", "empty file", false},
		{"header only", "i,j,k\n", "line 1: no triplet", false},
		{"wrong header", "a,b,c\n0,1,2\n", "line 1: header", false},
		{"pair header for triplets", "i,j,y\n0,1,2\n", "line 1: header", false},
		{"header of four", "i,j,k,l\n0,1,2\n", "line 1: header", false},
		{"missing header", "0,1,2\n", "line 1: header", false},
		{"two fields", "i,j,k\n0,1,2\n0,1\n", "line 3: 2 fields", false},
		{"four fields", "i,j,k\n0,1,2,3\n", "line 2: 4 fields", false},
		{"trailing comma", "i,j,k\n0,1,2,\n", "line 2: 4 fields", false},
		{"float", "i,j,k\n0,1.0,2\n", `line 2: column j: "1.0" is not an integer`, false},
		{"empty field", "i,j,k\n0,,2\n", `line 2: column j: "" is not an integer`, false},
		{"negative", "i,j,k\n0,1,-2\n", "line 2: column k: row -2 outside [0,5)", false},
		{"too large", "i,j,k\n\n5,1,2\n", "line 3: column i: row 5 outside [0,5)", false},
		{"overflow", "i,j,k\n99999999999999999999,1,2\n", "line 2: column i: row 99999999999999999999 outside", false},
		{"overflow before a carriage return", "i,j,k\n0,100000000000000000000\r0,1\n", `line 2: column j: row "100000000000000000000\r0" outside`, false},
		{"i==j", "i,j,k\n1,1,2\n", "line 2: triplet (1,1,2) repeats a point", false},
		{"i==k", "i,j,k\n1,2,1\n", "line 2: triplet (1,2,1) repeats a point", false},
		{"j==k", "i,j,k\n1,2,2\n", "line 2: triplet (1,2,2) repeats a point", false},
		{"duplicate", "i,j,k\n0,1,2\n3,4,0\n0,1,2\n", "line 4: triplet (0,1,2) repeats line 2", false},
		{"reverse", "i,j,k\n0,1,2\n0,2,1\n", "line 3: triplet (0,2,1) contradicts line 2", false},
		{"long line", long, "line 2: longer than", false},
		{"pairs empty", "", "empty file", true},
		{"pairs header only", "i,j,y\n", "line 1: no pair", true},
		{"pairs wrong header", "i,j,k\n0,1,1\n", "line 1: header", true},
		{"pairs fields", "i,j,y\n0,1\n", "line 2: 2 fields", true},
		{"pairs y zero", "i,j,y\n0,1,0\n", `line 2: column y: "0" is not +1`, true},
		{"pairs y two", "i,j,y\n0,1,2\n", `line 2: column y: "2" is not +1`, true},
		{"pairs y float", "i,j,y\n0,1,1.0\n", `line 2: column y: "1.0" is not +1`, true},
		{"pairs self", "i,j,y\n0,1,1\n3,3,-1\n", "line 3: pair (3,3) links a point to itself", true},
		{"pairs out of range", "i,j,y\n0,5,1\n", "line 2: column j: row 5 outside [0,5)", true},
		{"pairs non-integer", "i,j,y\nx,1,1\n", `line 2: column i: "x" is not an integer`, true},
		{"pairs duplicate", "i,j,y\n0,1,1\n1,0,1\n", "line 3: pair (1,0) repeats line 2", true},
		{"pairs contradiction", "i,j,y\n0,1,1\n2,3,1\n1,0,-1\n", "line 4: pair (1,0) is dissimilar here and similar on line 2", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var err error
			if c.pairs {
				var p *Pairs
				p, err = ReadPairs(strings.NewReader(c.in), 5)
				if p != nil {
					t.Fatal("non-nil pairs with an error")
				}
			} else {
				var s *TripletSet
				s, err = ReadTriplets(strings.NewReader(c.in), 5)
				if s != nil {
					t.Fatal("non-nil triplets with an error")
				}
			}
			if err == nil {
				t.Fatalf("accepted %q", c.in)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("%v does not wrap ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q, want it to contain %q", err, c.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q spans several lines", err)
			}
		})
	}
}

func TestReadNoRows(t *testing.T) {
	if _, err := ReadTriplets(strings.NewReader("i,j,k\n0,1,2\n"), 0); !errors.Is(err, ErrInvalid) {
		t.Fatalf("n = 0: %v", err)
	}
	if _, err := ReadPairs(strings.NewReader("i,j,y\n0,1,1\n"), -1); !errors.Is(err, ErrInvalid) {
		t.Fatalf("n = -1: %v", err)
	}
}

// errReader fails after its data.
type errReader struct{ r io.Reader }

var errBoom = errors.New("boom")

func (e errReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err == io.EOF {
		return n, errBoom
	}
	return n, err
}

func TestReadError(t *testing.T) {
	_, err := ReadTriplets(errReader{strings.NewReader("i,j,k\n0,1,2\n")}, 3)
	if !errors.Is(err, errBoom) || errors.Is(err, ErrInvalid) {
		t.Fatalf("read error: %v", err)
	}
}

// TestReadEndless checks that a stream that never ends is refused at the
// cap on the number of constraints rather than read until memory runs out.
func TestReadEndless(t *testing.T) {
	defer func(m int) { maxReadConstraints = m }(maxReadConstraints)
	maxReadConstraints = 1000
	_, err := ReadTriplets(io.MultiReader(strings.NewReader("i,j,k\n"), &counting{}), 1<<20)
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "line 1002: more than 1000 triplets") {
		t.Fatalf("endless stream: %v", err)
	}
}

// counting is an endless triplet file: 0,1,2 then 0,1,3, …
type counting struct {
	k   int
	buf []byte
}

func (c *counting) Read(p []byte) (int, error) {
	for len(c.buf) < len(p) {
		c.k++
		c.buf = fmt.Appendf(c.buf, "0,1,%d\n", c.k+1)
	}
	n := copy(p, c.buf)
	c.buf = c.buf[n:]
	return n, nil
}

func TestPairTriplets(t *testing.T) {
	p, err := NewPairs(5, []LabelledPair{{0, 1, true}, {0, 2, false}, {0, 3, false}, {1, 4, true}, {3, 4, false}, {2, 3, true}})
	if err != nil {
		t.Fatal(err)
	}
	ts, err := PairTriplets(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Point 0: similar 1, dissimilar 2, 3. Point 2: similar 3, dissimilar 0.
	// Point 3: similar 2, dissimilar 0, 4. Point 4: similar 1, dissimilar 3.
	want := []Triplet{{0, 1, 2}, {0, 1, 3}, {2, 3, 0}, {3, 2, 0}, {3, 2, 4}, {4, 1, 3}}
	if len(ts) != len(want) {
		t.Fatalf("got %v, want %v", ts, want)
	}
	for r := range want {
		if ts[r] != want[r] {
			t.Fatalf("got %v, want %v", ts, want)
		}
	}
	if _, err := PairTriplets(p, 5); !errors.Is(err, ErrInvalid) {
		t.Fatalf("cap of 5: %v", err)
	}
	only, _ := NewPairs(3, []LabelledPair{{0, 1, true}, {1, 2, true}})
	if _, err := PairTriplets(only, 0); !errors.Is(err, ErrInvalid) {
		t.Fatalf("similar pairs only: %v", err)
	}
}
