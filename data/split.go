package data

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/psdlearn/psdlearn/errs"
	"github.com/psdlearn/psdlearn/internal/input"
	"gonum.org/v1/gonum/mat"
)

// seedStream is the PCG stream constant of the package's random choices: a
// seed fixes every split.
const seedStream = 0x5eed_da7a_5e71_0001

// DefaultSplit is the split of a labelled data set into training,
// validation and test rows when none is given: seeded random fractions.
const DefaultSplit = "0.7,0.15,0.15"

// SplitSpec is a parsed --split argument: either fractions of a random
// permutation (Fracs) or fixed consecutive row counts (Rows).
type SplitSpec struct {
	Fracs []float64 // e.g. 0.7, 0.15, 0.15
	Rows  []int     // e.g. 10500, 4500, 5000: the first 10500 rows, the next 4500, …
}

// ParseSplit parses "0.7,0.15,0.15" (seeded random fractions, see Split) or
// "rows:10500,4500,5000" (fixed row ranges, see SplitRows).
//
// Its errors, and those of SplitRows and of SplitIndices and Split about
// the fractions, match errs.ErrOption: the split is the caller's choice.
// A split whose part comes out empty on a data set of few rows is the
// data's problem and does not match it.
func ParseSplit(s string) (SplitSpec, error) {
	sp, err := parseSplit(s)
	return sp, errs.Option(err)
}

func parseSplit(s string) (SplitSpec, error) {
	s = strings.TrimSpace(s)
	if len(s) > 200 {
		return SplitSpec{}, fmt.Errorf("data: split %s: too long for a split", input.Clip(s, 40))
	}
	if s == "" {
		return SplitSpec{}, fmt.Errorf("data: empty split")
	}
	if rest, ok := strings.CutPrefix(s, "rows:"); ok {
		var rows []int
		sum := 0
		for _, f := range strings.Split(rest, ",") {
			v, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || v <= 0 {
				return SplitSpec{}, fmt.Errorf("data: split %q: row count %q is not a positive integer", s, f)
			}
			if v > math.MaxInt-sum {
				return SplitSpec{}, fmt.Errorf("data: split %q: row counts overflow an int", s)
			}
			sum += v
			rows = append(rows, v)
		}
		return SplitSpec{Rows: rows}, nil
	}
	var fr []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return SplitSpec{}, fmt.Errorf("data: split %q: fraction %q is not a number", s, f)
		}
		fr = append(fr, v)
	}
	if err := checkFracs(fr); err != nil {
		return SplitSpec{}, fmt.Errorf("data: split %q: %w", s, err)
	}
	return SplitSpec{Fracs: fr}, nil
}

// String formats the spec as ParseSplit reads it.
func (s SplitSpec) String() string {
	var parts []string
	if s.Rows != nil {
		for _, r := range s.Rows {
			parts = append(parts, strconv.Itoa(r))
		}
		return "rows:" + strings.Join(parts, ",")
	}
	for _, f := range s.Fracs {
		parts = append(parts, strconv.FormatFloat(f, 'g', -1, 64))
	}
	return strings.Join(parts, ",")
}

// Parts returns the number of parts the spec makes.
func (s SplitSpec) Parts() int {
	if s.Rows != nil {
		return len(s.Rows)
	}
	return len(s.Fracs)
}

// Apply splits d by the spec: SplitRows for row counts, else Split with seed.
func (s SplitSpec) Apply(d *Dataset, seed uint64) ([]*Dataset, error) {
	if s.Rows != nil {
		return SplitRows(d, s.Rows)
	}
	return Split(d, s.Fracs, seed)
}

func checkFracs(fr []float64) error {
	if len(fr) == 0 {
		return fmt.Errorf("no fractions")
	}
	sum := 0.0
	for _, f := range fr {
		if !(f > 0 && f <= 1) {
			return fmt.Errorf("fraction %v outside (0, 1]", f)
		}
		sum += f
	}
	if math.Abs(sum-1) > 1e-6 {
		return fmt.Errorf("fractions sum to %v, want 1", sum)
	}
	return nil
}

// SplitIndices returns a seeded random partition of 0..n−1 into len(fracs)
// parts of sizes proportional to fracs (which must be positive and sum to 1):
// part p holds the positions round(n·F_{p−1}) … round(n·F_p)−1 of a random
// permutation, F being the cumulative sums. Each part is sorted ascending.
// It is an error for a part to come out empty.
func SplitIndices(n int, fracs []float64, seed uint64) ([][]int, error) {
	if err := checkFracs(fracs); err != nil {
		return nil, errs.Option(fmt.Errorf("data: split: %w", err))
	}
	return splitIndices(n, fracs, seed)
}

func splitIndices(n int, fracs []float64, seed uint64) ([][]int, error) {
	if err := checkFracs(fracs); err != nil {
		return nil, fmt.Errorf("data: split: %w", err)
	}
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	rng := rand.New(rand.NewPCG(seed, seedStream))
	rng.Shuffle(n, func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
	out := make([][]int, len(fracs))
	cum, lo := 0.0, 0
	for p, f := range fracs {
		cum += f
		hi := int(math.Round(cum * float64(n)))
		if p == len(fracs)-1 {
			hi = n
		}
		hi = min(max(hi, lo), n)
		if hi == lo {
			return nil, fmt.Errorf("data: split %v of %d rows: part %d is empty (too few rows for the split)", fracs, n, p)
		}
		part := append([]int(nil), perm[lo:hi]...)
		slices.Sort(part)
		out[p] = part
		lo = hi
	}
	return out, nil
}

// Split partitions d at random into len(fracs) parts (for example train,
// validation and test with fracs 0.7, 0.15, 0.15). The same seed gives the
// same split; rows keep their original relative order inside each part.
func Split(d *Dataset, fracs []float64, seed uint64) ([]*Dataset, error) {
	if d == nil || d.X == nil {
		return nil, fmt.Errorf("data: split: empty data set")
	}
	idx, err := SplitIndices(d.Len(), fracs, seed)
	if err != nil {
		return nil, err
	}
	return subsets(d, idx), nil
}

// subsets returns copies of the rows idx[p] of d, one Dataset per part.
func subsets(d *Dataset, idx [][]int) []*Dataset {
	out := make([]*Dataset, len(idx))
	for p, rows := range idx {
		out[p] = d.Subset(rows)
	}
	return out
}

// SplitRows cuts d into consecutive row ranges: the first counts[0] rows, the
// next counts[1] rows, and so on (letters: 10500, 4500, 5000). Rows past the
// last range are unused. Counts must be positive and sum to at most d.Len().
func SplitRows(d *Dataset, counts []int) ([]*Dataset, error) {
	out, err := splitRows(d, counts)
	return out, errs.Option(err)
}

func splitRows(d *Dataset, counts []int) ([]*Dataset, error) {
	idx, err := rowRanges(d, counts)
	if err != nil {
		return nil, err
	}
	return subsets(d, idx), nil
}

// rowRanges returns the rows of SplitRows' parts after checking the counts.
func rowRanges(d *Dataset, counts []int) ([][]int, error) {
	if d == nil || d.X == nil {
		return nil, fmt.Errorf("data: split: empty data set")
	}
	if len(counts) == 0 {
		return nil, fmt.Errorf("data: split: no row counts")
	}
	// Every count is checked against the rows left before it is added, so the
	// running total never exceeds d.Len() and cannot overflow.
	total := 0
	for _, c := range counts {
		if c <= 0 {
			return nil, fmt.Errorf("data: split rows %v: count %d is not positive", counts, c)
		}
		if c > d.Len()-total {
			if c > math.MaxInt-total {
				return nil, fmt.Errorf("data: split rows %v: the row counts overflow an int, data set %q has %d rows", counts, d.Name, d.Len())
			}
			return nil, fmt.Errorf("data: split rows %v: %d rows requested, data set %q has %d", counts, total+c, d.Name, d.Len())
		}
		total += c
	}
	idx := make([][]int, len(counts))
	lo := 0
	for p, c := range counts {
		idx[p] = make([]int, c)
		for i := range idx[p] {
			idx[p][i] = lo + i
		}
		lo += c
	}
	return idx, nil
}

// Cut splits d as Apply does without copying its rows: it reorders the
// rows of d in place so that the parts are consecutive blocks (each part's
// rows in their order, then the rows no part takes) and returns the parts
// as views of d.X and d.Y. The parts equal Apply's; d is left reordered,
// sharing its storage with them. It is for a caller that splits data it
// no longer needs: the command line's train cuts MNIST's 70,000 rows so,
// where a copy would be a second 440 MB array to fault in.
func (s SplitSpec) Cut(d *Dataset, seed uint64) ([]*Dataset, error) {
	var (
		idx [][]int
		err error
	)
	switch {
	case s.Rows != nil:
		if idx, err = rowRanges(d, s.Rows); err != nil {
			return nil, errs.Option(err) // as SplitRows
		}
	case d == nil || d.X == nil:
		return nil, fmt.Errorf("data: split: empty data set")
	default:
		if idx, err = SplitIndices(d.Len(), s.Fracs, seed); err != nil {
			return nil, err
		}
	}
	n, dim := d.X.Dims()
	order := make([]int, 0, n)
	taken := make([]bool, n)
	for _, rows := range idx {
		order = append(order, rows...)
		for _, r := range rows {
			taken[r] = true
		}
	}
	for r, t := range taken {
		if !t {
			order = append(order, r)
		}
	}
	permuteRows(d, order)
	out := make([]*Dataset, len(idx))
	lo := 0
	for p, rows := range idx {
		hi := lo + len(rows)
		out[p] = &Dataset{Name: d.Name, Classes: d.Classes, Y: d.Y[lo:hi:hi],
			X: d.X.Slice(lo, hi, 0, dim).(*mat.Dense)}
		lo = hi
	}
	return out, nil
}

// permuteRows moves row order[i] of d to row i, in place, following the
// permutation's cycles with one row of scratch.
func permuteRows(d *Dataset, order []int) {
	raw := d.X.RawMatrix()
	row := func(i int) []float64 { return raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols] }
	tmp := make([]float64, raw.Cols)
	done := make([]bool, len(order))
	for i := range order {
		if done[i] || order[i] == i {
			continue
		}
		copy(tmp, row(i))
		y := d.Y[i]
		j := i
		for {
			done[j] = true
			k := order[j]
			if k == i {
				copy(row(j), tmp)
				d.Y[j] = y
				break
			}
			copy(row(j), row(k))
			d.Y[j] = d.Y[k]
			j = k
		}
	}
}
