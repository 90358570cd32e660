package constraints

import (
	"fmt"
	"io"
	"math"
	"strconv"
)

// DistancesHeader is the header line of a distance file: the squared
// distance d = ‖x_i − x_j‖² (for a kernel K: K_ii + K_jj − 2K_ij) of
// objects i and j.
const DistancesHeader = "i,j,d"

// Distance is one distance example: objects A and B (in the file's order)
// at squared distance D ≥ 0.
type Distance struct {
	A, B int
	D    float64
}

// Distances are the examples of a distance file, in file order, on N
// objects.
type Distances struct {
	N    int
	List []Distance
}

// ReadDistances reads a distance file (header "i,j,d", then one example per
// line, in the format of ReadPairs: 0-based indices, fields may be padded
// with spaces, blank lines skipped, line numbers count from 1 at the
// header). With n > 0 the indices must lie in [0, n); with n ≤ 0 the
// number of objects is the largest index + 1. Pairs may repeat (online
// examples are a sequence). It refuses, with the line number, a wrong
// header, a line without exactly three fields, an index that is not a
// non-negative integer or is out of range, i = j, a d that is not a finite
// non-negative number, a line longer than MaxLineBytes, more than
// MaxReadConstraints examples, a file with no example and (n ≤ 0) a file
// whose indices name fewer than two objects. Every refusal wraps
// ErrInvalid; a read error is returned as it is.
func ReadDistances(r io.Reader, n int) (*Distances, error) {
	out := &Distances{N: n}
	top := -1
	err := readRecords(r, "distance", DistancesHeader, func(line int, f [3][]byte) error {
		var v [2]int
		for c := range v {
			var x int
			var err error
			if n > 0 {
				x, err = parseIndex(f[c], n)
			} else {
				x, err = parseIndex(f[c], math.MaxInt)
				if err == nil && x < 0 || err != nil && len(f[c]) > 0 && f[c][0] == '-' {
					return fmt.Errorf("column %c: index %s is negative", "ij"[c], shown(f[c]))
				}
			}
			if err != nil {
				return fmt.Errorf("column %c: %w", "ij"[c], err)
			}
			v[c] = x
		}
		if v[0] == v[1] {
			return fmt.Errorf("pair (%d,%d) is an object with itself", v[0], v[1])
		}
		d, err := strconv.ParseFloat(string(f[2]), 64)
		if err != nil || !(d >= 0) || math.IsInf(d, 0) {
			return fmt.Errorf("column d: %q is not a finite non-negative squared distance", clip(f[2]))
		}
		top = max(top, v[0], v[1])
		out.List = append(out.List, Distance{A: v[0], B: v[1], D: d})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if n <= 0 {
		out.N = top + 1
	}
	return out, nil
}
