package meg

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/errs"
	"github.com/psdlearn/psdlearn/limits"
	"gonum.org/v1/gonum/mat"
)

// Helpers for the paper's kernel-learning experiments (Section 5): a target
// kernel over d objects, distance examples sampled from it for MEG, close-pair
// inequality constraints for DefiniteBoost, and the 1-nearest-neighbour error
// of a kernel matrix.

// pcgStream is the second PCG word of every generator of this package.
const pcgStream = 0x6d65672d6b65726e // "meg-kern"

// RBFKernel returns the d×d Gaussian kernel K_ab = exp(−γ‖x_a − x_b‖²) of the
// rows of x.
func RBFKernel(x *mat.Dense, gamma float64) (*mat.SymDense, error) {
	if x == nil {
		return nil, fmt.Errorf("%w: nil data", ErrInvalid)
	}
	if !(gamma > 0) || math.IsInf(gamma, 0) {
		return nil, errs.Option(fmt.Errorf("%w: RBF gamma %v", ErrInvalid, gamma))
	}
	n, _ := x.Dims()
	if err := checkMemory(fmt.Sprintf("an RBF kernel on %d objects", n), KernelMemory(n)); err != nil {
		return nil, err
	}
	d2, err := sqDists(x)
	if err != nil {
		return nil, err
	}
	k := mat.NewSymDense(n, nil)
	for a := 0; a < n; a++ {
		for b := a; b < n; b++ {
			k.SetSym(a, b, math.Exp(-gamma*d2[a*n+b]))
		}
	}
	return k, nil
}

// MedianGamma returns 1/median_{a<b} ‖x_a − x_b‖², the median heuristic for
// the RBF bandwidth.
func MedianGamma(x *mat.Dense) (float64, error) {
	if x == nil {
		return 0, fmt.Errorf("%w: nil data", ErrInvalid)
	}
	n, _ := x.Dims()
	if n < 2 {
		return 0, fmt.Errorf("%w: median heuristic needs two points", ErrInvalid)
	}
	d2, err := sqDists(x)
	if err != nil {
		return 0, err
	}
	v := make([]float64, 0, n*(n-1)/2)
	for a := 0; a < n; a++ {
		v = append(v, d2[a*n+a+1:a*n+n]...)
	}
	sort.Float64s(v)
	m := v[len(v)/2]
	if len(v)%2 == 0 {
		m = 0.5 * (v[len(v)/2-1] + v[len(v)/2])
	}
	if !(m > 0) {
		return 0, fmt.Errorf("%w: median squared distance is %v", ErrInvalid, m)
	}
	return 1 / m, nil
}

// sqDists returns the n×n row-major matrix of squared distances of the rows of x.
func sqDists(x *mat.Dense) ([]float64, error) {
	n, p := x.Dims()
	if err := engine.CheckDistances("data", x); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if err := checkMemory(fmt.Sprintf("squared distances of %d objects", n), limits.Words(n, n)); err != nil {
		return nil, err
	}
	out := make([]float64, n*n)
	for a := 0; a < n; a++ {
		ra := x.RawRowView(a)
		for _, v := range ra {
			if !finite(v) {
				return nil, fmt.Errorf("%w: data row %d has NaN or Inf", ErrInvalid, a)
			}
		}
		for b := a + 1; b < n; b++ {
			rb := x.RawRowView(b)
			var s float64
			for j := 0; j < p; j++ {
				t := ra[j] - rb[j]
				s += t * t
			}
			out[a*n+b], out[b*n+a] = s, s
		}
	}
	return out, nil
}

// TraceNormalize returns K / tr K.
func TraceNormalize(k mat.Symmetric) (*mat.SymDense, error) {
	if k == nil || k.SymmetricDim() == 0 {
		return nil, fmt.Errorf("%w: empty kernel", ErrInvalid)
	}
	n := k.SymmetricDim()
	var tr float64
	for i := 0; i < n; i++ {
		tr += k.At(i, i)
	}
	if !(tr > 0) || math.IsInf(tr, 0) {
		return nil, fmt.Errorf("%w: kernel trace %v", ErrInvalid, tr)
	}
	out := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			out.SetSym(i, j, k.At(i, j)/tr)
		}
	}
	return out, nil
}

// HalfSqDist returns ½(K_aa + K_bb − 2K_ab) = tr(K X_ab), half the squared
// feature-space distance of objects a and b under the kernel K.
func HalfSqDist(k mat.Symmetric, a, b int) float64 {
	return 0.5*(k.At(a, a)+k.At(b, b)) - k.At(a, b)
}

// DistSequence is a sequence of distance examples (X_{a_t b_t}, y_t): the
// label of DistPair{N, a_t, b_t} is y_t. It implements Sequence.
type DistSequence struct {
	N     int
	Pairs []engine.Pair
	Y     []float64
}

// Len returns the number of examples.
func (s *DistSequence) Len() int { return len(s.Y) }

// At returns example t.
func (s *DistSequence) At(t int) (Sym, float64) {
	p := s.Pairs[t]
	return DistPair{N: s.N, A: p.A, B: p.B}, s.Y[t]
}

// SampleDistances draws T distance examples from the target kernel u: each
// picks a pair a ≠ b uniformly at random and labels it with
// y = tr(u X_ab) = ½‖x_a − x_b‖²_u, plus Gaussian noise of standard deviation
// noise. The seed fixes the sequence.
func SampleDistances(u mat.Symmetric, T int, noise float64, seed uint64) (*DistSequence, error) {
	if u == nil || u.SymmetricDim() < 2 {
		return nil, fmt.Errorf("%w: target kernel needs at least two objects", ErrInvalid)
	}
	if T < 0 || noise < 0 || !finite(noise) {
		return nil, fmt.Errorf("%w: %d examples with noise %v", ErrInvalid, T, noise)
	}
	if err := checkMemory(fmt.Sprintf("a sequence of %d distance examples", T), SequenceMemory(T)); err != nil {
		return nil, err
	}
	n := u.SymmetricDim()
	rng := rand.New(rand.NewPCG(seed, pcgStream))
	s := &DistSequence{N: n, Pairs: make([]engine.Pair, T), Y: make([]float64, T)}
	for t := 0; t < T; t++ {
		a := rng.IntN(n)
		b := rng.IntN(n - 1)
		if b >= a {
			b++
		}
		s.Pairs[t] = engine.Pair{A: a, B: b}
		s.Y[t] = HalfSqDist(u, a, b)
		if noise > 0 {
			s.Y[t] += noise * rng.NormFloat64()
		}
	}
	return s, nil
}

// SequenceLoss returns the total loss Σ_t (tr(U X_t) − y_t)² of a fixed
// matrix U on seq (the comparator loss L_U of Lemma 3.2).
func SequenceLoss(u *mat.SymDense, seq Sequence) float64 {
	var l float64
	for t := 0; t < seq.Len(); t++ {
		x, y := seq.At(t)
		r := x.Inner(u) - y
		l += r * r
	}
	return l
}

// CloseConstraints returns the paper's batch constraints for the target
// kernel u: for every pair a < b with ½‖x_a − x_b‖²_u < eps, the matrix
// C = X_ab − εI (Shift(DistPair{d, a, b}, −eps)); tr(W C) ≤ 0 says
// ½‖x_a − x_b‖²_W ≤ ε for a trace-one W. Its eigenvalues are 1 − ε and −ε.
func CloseConstraints(u mat.Symmetric, eps float64) ([]Sym, []engine.Pair, error) {
	if u == nil || u.SymmetricDim() < 2 {
		return nil, nil, fmt.Errorf("%w: target kernel needs at least two objects", ErrInvalid)
	}
	if !(eps > 0) || !(eps < 1) {
		return nil, nil, fmt.Errorf("%w: epsilon %v outside (0, 1)", ErrInvalid, eps)
	}
	n := u.SymmetricDim()
	var cons []Sym
	var pairs []engine.Pair
	for a := 0; a < n; a++ {
		for b := a + 1; b < n; b++ {
			if HalfSqDist(u, a, b) < eps {
				cons = append(cons, Shift(DistPair{N: n, A: a, B: b}, -eps))
				pairs = append(pairs, engine.Pair{A: a, B: b})
			}
		}
	}
	return cons, pairs, nil
}

// kernelDist returns the n×n row-major matrix of K_aa + K_bb − 2K_ab.
func kernelDist(k mat.Symmetric, y []int) ([]float64, int, error) {
	if k == nil {
		return nil, 0, fmt.Errorf("%w: nil kernel", ErrInvalid)
	}
	n := k.SymmetricDim()
	if n < 2 || len(y) != n {
		return nil, 0, fmt.Errorf("%w: kernel %d×%d with %d labels", ErrInvalid, n, n, len(y))
	}
	d := make([]float64, n*n)
	for a := 0; a < n; a++ {
		for b := a + 1; b < n; b++ {
			v := k.At(a, a) + k.At(b, b) - 2*k.At(a, b)
			if !finite(v) {
				return nil, 0, fmt.Errorf("%w: kernel entry near (%d,%d) not finite", ErrInvalid, a, b)
			}
			d[a*n+b], d[b*n+a] = v, v
		}
	}
	return d, n, nil
}

// NNErrorLOO returns the leave-one-out error of the 1-nearest-neighbour
// classifier with the kernel-induced distance d(a,b)² = K_aa + K_bb − 2K_ab
// (ties go to the lower index).
func NNErrorLOO(k mat.Symmetric, y []int) (float64, error) {
	d, n, err := kernelDist(k, y)
	if err != nil {
		return 0, err
	}
	wrong := 0
	for a := 0; a < n; a++ {
		best, bd := -1, math.Inf(1)
		for b := 0; b < n; b++ {
			if b != a && d[a*n+b] < bd {
				best, bd = b, d[a*n+b]
			}
		}
		if y[best] != y[a] {
			wrong++
		}
	}
	return float64(wrong) / float64(n), nil
}

// NNErrorSplits returns the mean and standard deviation over splits random
// 50/50 divisions of the objects (the paper's protocol) of the test error of
// the 1-nearest-neighbour classifier with the kernel-induced distance
// d(a,b)² = K_aa + K_bb − 2K_ab: the first ⌊n/2⌋ objects of a seeded random
// permutation are the training set, the rest the test set.
func NNErrorSplits(k mat.Symmetric, y []int, splits int, seed uint64) (mean, sd float64, err error) {
	d, n, err := kernelDist(k, y)
	if err != nil {
		return 0, 0, err
	}
	if splits <= 0 {
		return 0, 0, fmt.Errorf("%w: %d splits", ErrInvalid, splits)
	}
	if err := limits.Check(fmt.Sprintf("the 1-NN error over %d splits", splits), limits.Words(splits)); err != nil {
		return 0, 0, err
	}
	rng := rand.New(rand.NewPCG(seed, pcgStream+1))
	errs := make([]float64, splits)
	ntr := n / 2
	for s := range errs {
		perm := rng.Perm(n)
		train, test := perm[:ntr], perm[ntr:]
		wrong := 0
		for _, a := range test {
			best, bd := -1, math.Inf(1)
			for _, b := range train {
				if v := d[a*n+b]; v < bd || (v == bd && b < best) {
					best, bd = b, v
				}
			}
			if y[best] != y[a] {
				wrong++
			}
		}
		errs[s] = float64(wrong) / float64(len(test))
		mean += errs[s]
	}
	mean /= float64(splits)
	for _, e := range errs {
		sd += (e - mean) * (e - mean)
	}
	if splits > 1 {
		sd = math.Sqrt(sd / float64(splits-1))
	}
	return mean, sd, nil
}
