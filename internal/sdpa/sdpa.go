// Package sdpa writes and reads semidefinite programs in the SDPA sparse
// format and runs the interior-point solver CSDP on them, so that the
// benchmark can compare psdlearn's solvers against a standard SDP solver.
//
// The format holds the primal problem in CSDP's convention:
//
//	max ⟨C, X⟩  s.t.  ⟨A_i, X⟩ = b_i (i = 1 … m),  X ⪰ 0,
//
// with X block diagonal. A block of positive size is a symmetric matrix; a
// block of negative size −k is diagonal, k nonnegative scalars (the usual
// way to add slack and LP variables). CSDP also solves the dual
//
//	min bᵀy  s.t.  Σ_i y_i A_i − C = Z ⪰ 0.
//
// Entries are given for the upper triangle only (I ≤ J); an entry off the
// diagonal stands for both (I, J) and (J, I). Indices in this package are
// 0-based; the file is 1-based.
package sdpa

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Entry is one entry of a block of a symmetric block-diagonal matrix. For a
// diagonal block I and J are both the index of the scalar.
type Entry struct {
	Block, I, J int
	V           float64
}

// Problem is an SDP in the SDPA sparse format (see the package comment).
type Problem struct {
	// Blocks holds the block sizes: k > 0 for a symmetric k×k block, −k for
	// a diagonal block of k scalars.
	Blocks []int
	// C is the objective matrix (maximised).
	C []Entry
	// A holds the constraint matrices and B their right-hand sides.
	A [][]Entry
	B []float64
}

// ErrFormat is wrapped by the errors about a malformed problem or file.
var ErrFormat = errors.New("sdpa: invalid problem")

// blockDim returns the dimension of block k and whether it is diagonal.
func (p *Problem) blockDim(k int) (int, bool) {
	s := p.Blocks[k]
	if s < 0 {
		return -s, true
	}
	return s, false
}

// check validates an entry of matrix mat against the blocks.
func (p *Problem) check(mat int, e Entry) error {
	if e.Block < 0 || e.Block >= len(p.Blocks) {
		return fmt.Errorf("%w: matrix %d: block %d of %d", ErrFormat, mat, e.Block+1, len(p.Blocks))
	}
	dim, diag := p.blockDim(e.Block)
	i, j := min(e.I, e.J), max(e.I, e.J)
	if i < 0 || j >= dim || (diag && i != j) {
		return fmt.Errorf("%w: matrix %d: entry (%d, %d) outside block %d of size %d", ErrFormat, mat, e.I+1, e.J+1, e.Block+1, p.Blocks[e.Block])
	}
	if math.IsNaN(e.V) || math.IsInf(e.V, 0) {
		return fmt.Errorf("%w: matrix %d: entry (%d, %d) is %v", ErrFormat, mat, e.I+1, e.J+1, e.V)
	}
	return nil
}

// Validate reports the first inconsistency of p: a block of size 0, a
// constraint count that differs from len(B), an entry outside its block or
// off the diagonal of a diagonal block, or a value that is not finite.
func (p *Problem) Validate() error {
	if len(p.Blocks) == 0 {
		return fmt.Errorf("%w: no blocks", ErrFormat)
	}
	for k, s := range p.Blocks {
		if s == 0 {
			return fmt.Errorf("%w: block %d has size 0", ErrFormat, k+1)
		}
	}
	if len(p.A) != len(p.B) {
		return fmt.Errorf("%w: %d constraint matrices and %d right-hand sides", ErrFormat, len(p.A), len(p.B))
	}
	if len(p.A) == 0 {
		return fmt.Errorf("%w: no constraints", ErrFormat)
	}
	for _, e := range p.C {
		if err := p.check(0, e); err != nil {
			return err
		}
	}
	for i, a := range p.A {
		for _, e := range a {
			if err := p.check(i+1, e); err != nil {
				return err
			}
		}
		if math.IsNaN(p.B[i]) || math.IsInf(p.B[i], 0) {
			return fmt.Errorf("%w: b[%d] is %v", ErrFormat, i+1, p.B[i])
		}
	}
	return nil
}

// Write writes p to w in the SDPA sparse format, every value with the 17
// significant digits that read back to the same float64. Entries of one
// matrix at the same position, (I, J) or (J, I), add up: the file holds
// their sum once (CSDP refuses repeated entries), at the first one's place.
// Zero entries are left out.
func Write(w io.Writer, p *Problem) error {
	if err := p.Validate(); err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	fmt.Fprintf(bw, "%d\n%d\n", len(p.B), len(p.Blocks))
	for k, s := range p.Blocks {
		if k > 0 {
			bw.WriteByte(' ')
		}
		bw.WriteString(strconv.Itoa(s))
	}
	bw.WriteByte('\n')
	for i, b := range p.B {
		if i > 0 {
			bw.WriteByte(' ')
		}
		bw.WriteString(strconv.FormatFloat(b, 'g', 17, 64))
	}
	bw.WriteByte('\n')
	buf := make([]byte, 0, 64)
	put := func(mat int, es []Entry) {
		for _, e := range es {
			if e.V == 0 {
				continue
			}
			i, j := min(e.I, e.J), max(e.I, e.J)
			buf = buf[:0]
			buf = strconv.AppendInt(buf, int64(mat), 10)
			buf = append(buf, ' ')
			buf = strconv.AppendInt(buf, int64(e.Block+1), 10)
			buf = append(buf, ' ')
			buf = strconv.AppendInt(buf, int64(i+1), 10)
			buf = append(buf, ' ')
			buf = strconv.AppendInt(buf, int64(j+1), 10)
			buf = append(buf, ' ')
			buf = strconv.AppendFloat(buf, e.V, 'g', 17, 64)
			buf = append(buf, '\n')
			bw.Write(buf)
		}
	}
	put(0, merged(p.C))
	for i, a := range p.A {
		put(i+1, merged(a))
	}
	return bw.Flush()
}

// merged returns es with the entries at the same position summed into the
// first of them (es itself when no position repeats).
func merged(es []Entry) []Entry {
	type key struct{ b, i, j int }
	k := func(e Entry) key { return key{e.Block, min(e.I, e.J), max(e.I, e.J)} }
	order := make([]int, len(es))
	for t := range order {
		order[t] = t
	}
	sort.Slice(order, func(x, y int) bool {
		a, b := k(es[order[x]]), k(es[order[y]])
		if a.b != b.b {
			return a.b < b.b
		}
		if a.i != b.i {
			return a.i < b.i
		}
		return a.j < b.j
	})
	dup := false
	for t := 1; t < len(order); t++ {
		if k(es[order[t]]) == k(es[order[t-1]]) {
			dup = true
			break
		}
	}
	if !dup {
		return es
	}
	first := make(map[key]int)
	var out []Entry
	for _, e := range es {
		if at, ok := first[k(e)]; ok {
			out[at].V += e.V
			continue
		}
		first[k(e)] = len(out)
		out = append(out, e)
	}
	return out
}

// maxRead bounds what Read accepts: the number of blocks and constraints,
// and a block's dimension (a dense symmetric block of that size is what a
// solution holds).
const (
	maxBlocks      = 1 << 16
	maxConstraints = 1 << 24
	maxBlockDim    = 1 << 16
)

// Read parses a problem in the SDPA sparse format: optional comment lines
// starting with '"' or '*' before the counts, and the separators ',', '{',
// '}', '(' and ')' read as spaces, as the format allows. Entries with
// I > J are stored as written.
func Read(r io.Reader) (*Problem, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<26)
	var toks []string
	line := 0
	next := func() (string, error) {
		for len(toks) == 0 {
			if !sc.Scan() {
				if err := sc.Err(); err != nil {
					return "", fmt.Errorf("sdpa: line %d: %w", line+1, err)
				}
				return "", io.ErrUnexpectedEOF
			}
			line++
			toks = fields(sc.Text())
		}
		t := toks[0]
		toks = toks[1:]
		return t, nil
	}
	// Comments come first: skip lines that start with " or *.
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" || s[0] == '"' || s[0] == '*' {
			continue
		}
		toks = fields(s)
		break
	}
	nextInt := func(what string, lo, hi int) (int, error) {
		t, err := next()
		if err != nil {
			return 0, fmt.Errorf("%w: %s: %v", ErrFormat, what, err)
		}
		v, err := strconv.Atoi(t)
		if err != nil || v < lo || v > hi {
			return 0, fmt.Errorf("%w: line %d: %s %q: want an integer in [%d, %d]", ErrFormat, line, what, t, lo, hi)
		}
		return v, nil
	}
	nextFloat := func(what string) (float64, error) {
		t, err := next()
		if err != nil {
			return 0, fmt.Errorf("%w: %s: %v", ErrFormat, what, err)
		}
		v, err := strconv.ParseFloat(t, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("%w: line %d: %s %q: want a finite number", ErrFormat, line, what, t)
		}
		return v, nil
	}
	m, err := nextInt("number of constraints", 1, maxConstraints)
	if err != nil {
		return nil, err
	}
	nb, err := nextInt("number of blocks", 1, maxBlocks)
	if err != nil {
		return nil, err
	}
	p := &Problem{Blocks: make([]int, nb), A: make([][]Entry, m), B: make([]float64, m)}
	for k := range p.Blocks {
		s, err := nextInt("block size", -maxBlockDim, maxBlockDim)
		if err != nil {
			return nil, err
		}
		if s == 0 {
			return nil, fmt.Errorf("%w: line %d: block %d has size 0", ErrFormat, line, k+1)
		}
		p.Blocks[k] = s
	}
	for i := range p.B {
		if p.B[i], err = nextFloat("right-hand side"); err != nil {
			return nil, err
		}
	}
	// The entries: the rest of the file, five numbers per entry.
	for {
		t, err := next()
		if err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return nil, err
		}
		toks = append([]string{t}, toks...)
		mat, err := nextInt("matrix number", 0, m)
		if err != nil {
			return nil, err
		}
		blk, err := nextInt("block number", 1, nb)
		if err != nil {
			return nil, err
		}
		dim, _ := p.blockDim(blk - 1)
		i, err := nextInt("row", 1, dim)
		if err != nil {
			return nil, err
		}
		j, err := nextInt("column", 1, dim)
		if err != nil {
			return nil, err
		}
		v, err := nextFloat("value")
		if err != nil {
			return nil, err
		}
		e := Entry{Block: blk - 1, I: i - 1, J: j - 1, V: v}
		if err := p.check(mat, e); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		if mat == 0 {
			p.C = append(p.C, e)
		} else {
			p.A[mat-1] = append(p.A[mat-1], e)
		}
	}
	return p, nil
}

// fields splits a line at spaces and the separators the format allows.
func fields(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		switch r {
		case ' ', '\t', '\r', ',', '{', '}', '(', ')':
			return true
		}
		return false
	})
}
