package constraints

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"unicode"

	"github.com/psdlearn/psdlearn/internal/input"
)

// File formats of ReadTriplets and ReadPairs: CSV with a header line and one
// constraint per line, indices 0-based rows of the data the constraints are
// about.
//
//	i,j,k        a triplet: row i should be closer to row j than to row k
//	i,j,y        a pair: y = +1 (or 1) similar / must-link, −1 dissimilar / cannot-link
//
// Fields may be surrounded by spaces; lines may end in CRLF; blank lines are
// skipped; a UTF-8 byte-order mark before the header is ignored. Line numbers
// in errors count every line of the file from 1 (the header).
const (
	// MaxLineBytes is the longest line the readers accept: three integers
	// need far less, and a longer line is not a constraint file.
	MaxLineBytes = 256
	// MaxReadConstraints is the most constraints a file may hold
	// (4,194,304): the readers keep a few dozen bytes per constraint, so a
	// file within the cap needs at most a few hundred MiB, and an endless
	// stream is refused rather than read until memory runs out.
	MaxReadConstraints = 1 << 22
)

// maxReadConstraints is MaxReadConstraints (tests lower it).
var maxReadConstraints = MaxReadConstraints

// TripletsHeader and PairsHeader are the header lines of the files.
const (
	TripletsHeader = "i,j,k"
	PairsHeader    = "i,j,y"
)

// ReadTriplets reads a triplet file (header "i,j,k", then one triplet per
// line) about the n rows of a data set and indexes it (NewTripletSet). It
// refuses, with the line number, a wrong header, a line without exactly
// three fields, a field that is not an integer, an index outside [0, n), a
// triplet that repeats a point, a triplet given twice, a triplet whose
// reverse (i, k, j) is also given (the two contradict each other), a line
// longer than MaxLineBytes, more than MaxReadConstraints triplets and a
// file with no triplet. Every refusal wraps ErrInvalid; a read error is
// returned as it is.
func ReadTriplets(r io.Reader, n int) (*TripletSet, error) {
	if n <= 0 {
		return nil, fmt.Errorf("%w: triplets: the data has %d rows", ErrInvalid, n)
	}
	var ts []Triplet
	seen := map[Triplet]int{} // triplet → line
	err := readRecords(r, "triplet", TripletsHeader, func(line int, f [3][]byte) error {
		var v [3]int
		for c := range v {
			x, err := parseIndex(f[c], n)
			if err != nil {
				return fmt.Errorf("column %c: %w", "ijk"[c], err)
			}
			v[c] = x
		}
		t := Triplet{I: v[0], J: v[1], K: v[2]}
		if t.I == t.J || t.I == t.K || t.J == t.K {
			return fmt.Errorf("triplet (%d,%d,%d) repeats a point", t.I, t.J, t.K)
		}
		if l, ok := seen[t]; ok {
			return fmt.Errorf("triplet (%d,%d,%d) repeats line %d", t.I, t.J, t.K, l)
		}
		if l, ok := seen[Triplet{I: t.I, J: t.K, K: t.J}]; ok {
			return fmt.Errorf("triplet (%d,%d,%d) contradicts line %d, which says (%d,%d,%d)", t.I, t.J, t.K, l, t.I, t.K, t.J)
		}
		seen[t] = line
		ts = append(ts, t)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return NewTripletSet(n, ts)
}

// ReadPairs reads a pair file (header "i,j,y", then one pair per line, y =
// +1 similar or −1 dissimilar) about the n rows of a data set (NewPairs: the
// pairs are stored with A < B, in file order). It refuses, with the line
// number, a wrong header, a line without exactly three fields, a field that
// is not an integer, an index outside [0, n), a pair of a point with itself,
// y other than ±1, a pair given twice (in either order) with the same y, a
// pair given as both similar and dissimilar, a line longer than
// MaxLineBytes, more than MaxReadConstraints pairs and a file with no pair.
// Every refusal wraps ErrInvalid; a read error is returned as it is.
func ReadPairs(r io.Reader, n int) (*Pairs, error) {
	if n <= 0 {
		return nil, fmt.Errorf("%w: pairs: the data has %d rows", ErrInvalid, n)
	}
	type mark struct {
		line int
		same bool
	}
	var list []LabelledPair
	seen := map[[2]int]mark{}
	err := readRecords(r, "pair", PairsHeader, func(line int, f [3][]byte) error {
		var v [2]int
		for c := range v {
			x, err := parseIndex(f[c], n)
			if err != nil {
				return fmt.Errorf("column %c: %w", "ij"[c], err)
			}
			v[c] = x
		}
		y, err := strconv.Atoi(string(f[2]))
		if err != nil || (y != 1 && y != -1) {
			return fmt.Errorf("column y: %q is not +1 (similar) or -1 (dissimilar)", clip(f[2]))
		}
		if v[0] == v[1] {
			return fmt.Errorf("pair (%d,%d) links a point to itself", v[0], v[1])
		}
		a, b := min(v[0], v[1]), max(v[0], v[1])
		same := y == 1
		if m, ok := seen[[2]int{a, b}]; ok {
			if m.same == same {
				return fmt.Errorf("pair (%d,%d) repeats line %d", v[0], v[1], m.line)
			}
			return fmt.Errorf("pair (%d,%d) is %s here and %s on line %d", v[0], v[1], kind(same), kind(m.same), m.line)
		}
		seen[[2]int{a, b}] = mark{line, same}
		list = append(list, LabelledPair{A: a, B: b, Same: same})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return NewPairs(n, list)
}

func kind(same bool) string {
	if same {
		return "similar"
	}
	return "dissimilar"
}

// readRecords reads the header and the records of a constraint file and
// calls record with the 1-based line number and the three trimmed fields of
// every non-blank line after the header. Its errors and record's are
// prefixed with ErrInvalid and the line number.
func readRecords(r io.Reader, what, header string, record func(line int, f [3][]byte) error) error {
	// A binary file, UTF-16 text or CR-only line endings are named as such
	// (package input); the scanner caps the line length.
	in, err := input.NewReader(r, input.Options{Name: what + "s", MaxLine: -1, NoGzip: true, MaxBytes: math.MaxInt64})
	if err != nil {
		return inputErr(err)
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 4096), MaxLineBytes+2) // + CRLF
	line, count, headerSeen := 0, 0, false
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if line == 1 {
			b = bytes.TrimPrefix(b, []byte("\ufeff"))
		}
		b = bytes.TrimSpace(b)
		if len(b) > MaxLineBytes {
			return fmt.Errorf("%w: line %d: longer than %d bytes", ErrInvalid, line, MaxLineBytes)
		}
		if len(b) == 0 {
			continue
		}
		f, nf := splitFields(b)
		if !headerSeen {
			if nf != 3 || !headerIs(f, header) {
				return fmt.Errorf("%w: line %d: header %q, want %q", ErrInvalid, line, clip(b), header)
			}
			headerSeen = true
			continue
		}
		if nf != 3 {
			return fmt.Errorf("%w: line %d: %d fields, want 3 (%s)", ErrInvalid, line, nf, header)
		}
		if count == maxReadConstraints {
			return fmt.Errorf("%w: line %d: more than %d %ss", ErrInvalid, line, maxReadConstraints, what)
		}
		if err := record(line, f); err != nil {
			return fmt.Errorf("%w: line %d: %w", ErrInvalid, line, err)
		}
		count++
	}
	if err := sc.Err(); err != nil {
		var ie *input.Error
		if errors.As(err, &ie) {
			return inputErr(err)
		}
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("%w: line %d: longer than %d bytes", ErrInvalid, line+1, MaxLineBytes)
		}
		return fmt.Errorf("constraints: reading %ss: %w", what, err)
	}
	switch {
	case !headerSeen:
		return fmt.Errorf("%w: empty file, want the header %q and at least one %s", ErrInvalid, header, what)
	case count == 0:
		return fmt.Errorf("%w: line %d: no %s after the header", ErrInvalid, line, what)
	}
	return nil
}

// inputErr is the error of package input about a constraint file.
func inputErr(err error) error {
	var ie *input.Error
	if errors.As(err, &ie) {
		if ie.Line > 0 {
			return fmt.Errorf("%w: line %d: %s", ErrInvalid, ie.Line, ie.Msg)
		}
		return fmt.Errorf("%w: %s", ErrInvalid, ie.Msg)
	}
	return err
}

// splitFields splits a line at commas into at most three trimmed fields and
// returns them with the number of fields the line has (capped at 4: "more
// than three").
func splitFields(b []byte) (f [3][]byte, n int) {
	for n < 4 {
		i := bytes.IndexByte(b, ',')
		field := b
		if i >= 0 {
			field = b[:i]
		}
		if n < 3 {
			f[n] = bytes.TrimSpace(field)
		}
		n++
		if i < 0 {
			break
		}
		b = b[i+1:]
	}
	return f, n
}

// headerIs reports whether the fields f spell the header h ("i,j,k"),
// ignoring case.
func headerIs(f [3][]byte, h string) bool {
	want := bytes.Split([]byte(h), []byte(","))
	for c := range f {
		if !bytes.EqualFold(f[c], want[c]) {
			return false
		}
	}
	return true
}

// parseIndex parses a row index in [0, n).
func parseIndex(b []byte, n int) (int, error) {
	x, err := strconv.Atoi(string(b))
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && ne.Err == strconv.ErrRange {
			return 0, fmt.Errorf("row %s outside [0,%d)", shown(b), n)
		}
		return 0, fmt.Errorf("%q is not an integer row index", clip(b))
	}
	if x < 0 || x >= n {
		return 0, fmt.Errorf("row %d outside [0,%d)", x, n)
	}
	return x, nil
}

// shown is a field as an error message shows it unquoted: clipped, and
// quoted after all when it holds anything but printable characters (a
// number that overflows before a stray carriage return, say), so that the
// message stays on one line.
func shown(b []byte) string {
	s := clip(b)
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// clip shortens a field for an error message.
func clip(b []byte) string {
	const maxShown = 40
	if len(b) > maxShown {
		return string(b[:maxShown]) + "…"
	}
	return string(b)
}

// WriteTriplets writes triplets in the format ReadTriplets reads.
func WriteTriplets(w io.Writer, ts []Triplet) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(TripletsHeader + "\n")
	for _, t := range ts {
		fmt.Fprintf(bw, "%d,%d,%d\n", t.I, t.J, t.K)
	}
	return bw.Flush()
}

// WritePairs writes pairs in the format ReadPairs reads.
func WritePairs(w io.Writer, ps []LabelledPair) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(PairsHeader + "\n")
	for _, p := range ps {
		fmt.Fprintf(bw, "%d,%d,%d\n", p.A, p.B, int(p.T()))
	}
	return bw.Flush()
}

// PairTriplets turns pair constraints into triplets: for every point i, each
// similar partner j and each dissimilar partner k of i give the triplet
// (i, j, k) — "i is closer to j than to k", which both pairs together
// imply. Triplets are in order of i, then j, then k. Points without both a
// similar and a dissimilar partner give none. It counts the triplets before
// building them and refuses more than maxTriplets (≤ 0: MaxReadConstraints)
// or none at all.
func PairTriplets(p *Pairs, maxTriplets int) ([]Triplet, error) {
	if p == nil || p.Len() == 0 {
		return nil, fmt.Errorf("%w: no pairs", ErrInvalid)
	}
	if maxTriplets <= 0 {
		maxTriplets = MaxReadConstraints
	}
	same := map[int][]int{}
	diff := map[int][]int{}
	for _, q := range p.List {
		m := diff
		if q.Same {
			m = same
		}
		m[q.A] = append(m[q.A], q.B)
		m[q.B] = append(m[q.B], q.A)
	}
	total := 0
	for i, s := range same {
		total += len(s) * len(diff[i])
		if total > maxTriplets {
			return nil, fmt.Errorf("%w: the pairs give more than %d triplets", ErrInvalid, maxTriplets)
		}
	}
	if total == 0 {
		return nil, fmt.Errorf("%w: no point has both a similar and a dissimilar pair, so the pairs give no triplet", ErrInvalid)
	}
	points := make([]int, 0, len(same))
	for i := range same {
		if len(diff[i]) > 0 {
			points = append(points, i)
		}
	}
	slices.Sort(points)
	out := make([]Triplet, 0, total)
	for _, i := range points {
		s, d := slices.Sorted(slices.Values(same[i])), slices.Sorted(slices.Values(diff[i]))
		for _, j := range s {
			for _, k := range d {
				out = append(out, Triplet{I: i, J: j, K: k})
			}
		}
	}
	return out, nil
}
