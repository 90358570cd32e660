package lmnn

import (
	"context"
	"fmt"

	"gonum.org/v1/gonum/mat"
)

// A Splitter spreads one run of Learn over the processes of a job (package
// distributed implements it over MPI). Every process calls Learn with the
// same data, targets and options; each evaluates the objective, the
// subgradient's pair weights and the impostor search of the anchors in its
// block only, and Sum adds the parts. The step, the projection and the
// stopping tests are then computed by every process from the same sums, and
// process 0's trial factor is broadcast, so that every process holds the
// same iterate and takes the same branches.
//
// A Splitter's methods are collective: every process calls them in the same
// order.
type Splitter interface {
	// Block returns this process's anchors [lo, hi) of n points. The
	// processes' blocks partition [0, n).
	Block(n int) (lo, hi int)
	// Sum replaces v, on every process, with the elementwise sum of every
	// process's v: the same bits on every process.
	Sum(v []float64) error
	// Broadcast copies process 0's v into v on every other process.
	Broadcast(v []float64) error
}

// sum adds v over the processes of the run (a no-op in one process).
func (s *solver) sum(v []float64) error {
	if s.opt.Split == nil {
		return nil
	}
	if err := s.opt.Split.Sum(v); err != nil {
		return fmt.Errorf("lmnn: %w", err)
	}
	return nil
}

// collectiveErr is the collective check of the processes' contexts and
// local failures: every process learns whether any one is cancelled or
// failed, and all return an error together. In one process it returns
// ctx's error or failed.
func (s *solver) collectiveErr(ctx context.Context, failed error) error {
	if s.opt.Split == nil {
		if failed != nil {
			return failed
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("lmnn: %w", err)
		}
		return nil
	}
	flags := []float64{0, 0}
	if ctx.Err() != nil {
		flags[0] = 1
	}
	if failed != nil {
		flags[1] = 1
	}
	if err := s.sum(flags); err != nil {
		return err
	}
	switch {
	case failed != nil:
		return failed
	case flags[1] > 0:
		return fmt.Errorf("lmnn: another process failed")
	case ctx.Err() != nil:
		return fmt.Errorf("lmnn: %w", ctx.Err())
	case flags[0] > 0:
		return fmt.Errorf("lmnn: another process was cancelled: %w", context.Canceled)
	}
	return nil
}

// agree returns process 0's factor l (and writes its M = L Lᵀ into m when
// m is not nil) on every process; in one process it returns l.
func (s *solver) agree(l *mat.Dense, m *mat.SymDense) (*mat.Dense, error) {
	if s.opt.Split == nil {
		return l, nil
	}
	_, r := l.Dims()
	head := []float64{float64(r)}
	if err := s.opt.Split.Broadcast(head); err != nil {
		return nil, fmt.Errorf("lmnn: %w", err)
	}
	if r0 := int(head[0]); r0 != r {
		if r0 < 1 || r0 > s.d {
			return nil, fmt.Errorf("lmnn: process 0's factor has %d columns", r0)
		}
		l = mat.NewDense(s.d, r0, nil)
		r = r0
	}
	buf := make([]float64, s.d*r)
	raw := l.RawMatrix()
	for i := 0; i < s.d; i++ {
		copy(buf[i*r:(i+1)*r], raw.Data[i*raw.Stride:i*raw.Stride+r])
	}
	if err := s.opt.Split.Broadcast(buf); err != nil {
		return nil, fmt.Errorf("lmnn: %w", err)
	}
	for i := 0; i < s.d; i++ {
		copy(raw.Data[i*raw.Stride:i*raw.Stride+r], buf[i*r:(i+1)*r])
	}
	if m != nil {
		m.SymOuterK(1, l)
	}
	return l, nil
}

// sumSym adds the upper triangle of a over the processes of the run.
func (s *solver) sumSym(a *mat.SymDense) error {
	if s.opt.Split == nil {
		return nil
	}
	raw := a.RawSymmetric()
	buf := make([]float64, 0, s.d*(s.d+1)/2)
	for i := 0; i < s.d; i++ {
		buf = append(buf, raw.Data[i*raw.Stride+i:i*raw.Stride+s.d]...)
	}
	if err := s.sum(buf); err != nil {
		return err
	}
	for i := 0; i < s.d; i++ {
		n := s.d - i
		copy(raw.Data[i*raw.Stride+i:i*raw.Stride+s.d], buf[:n])
		buf = buf[n:]
	}
	return nil
}
