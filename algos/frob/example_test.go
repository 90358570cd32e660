package frob_test

import (
	"context"
	"fmt"
	"log"
	"math"

	"github.com/psdlearn/psdlearn/algos/frob"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/datasets"
	"gonum.org/v1/gonum/mat"
)

// Learn a FrobMetric metric on standardised iris with the protocol's
// triplets, certified by its duality gap.
func ExampleLearn() {
	d, err := datasets.Open("iris")
	if err != nil {
		log.Fatal(err)
	}
	s, err := data.FitStandardizer(d.X)
	if err != nil {
		log.Fatal(err)
	}
	x, err := s.Apply(d.X)
	if err != nil {
		log.Fatal(err)
	}
	ts, err := constraints.Triplets(x, d.Y, 3) // 3 targets × 3 impostors per point
	if err != nil {
		log.Fatal(err)
	}
	res, err := frob.Learn(context.Background(), x, ts, frob.MetricOptions{C: 10})
	if err != nil {
		log.Fatal(err)
	}
	var es mat.EigenSym
	es.Factorize(res.M, false)
	fmt.Println("triplets:", ts.Len())
	fmt.Println("relative duality gap ≤ 1e-6:", res.RelGap <= 1e-6)
	fmt.Println("M is PSD:", es.Values(nil)[0] >= -1e-12)
	// Output:
	// triplets: 1350
	// relative duality gap ≤ 1e-6: true
	// M is PSD: true
}

// Solve min ⟨C,X⟩ + ½‖X‖²_F s.t. tr X = 1, X ⪰ 0 with C = −diag(3, 2, 1):
// the solution is X = diag((c − ν)_+) with Σ (c_i − ν)_+ = 1, i.e. ν = 2.
func ExampleSolveSDP() {
	p := &frob.SDP{
		N:     3,
		Sigma: 1,
		C:     frob.SymMatrix{Entries: []frob.Entry{{I: 0, J: 0, V: -3}, {I: 1, J: 1, V: -2}, {I: 2, J: 2, V: -1}}},
		Constraints: []frob.Constraint{{
			A:        frob.SymMatrix{Entries: []frob.Entry{{I: 0, J: 0, V: 1}, {I: 1, J: 1, V: 1}, {I: 2, J: 2, V: 1}}},
			B:        1,
			Equality: true,
		}},
	}
	sol, err := frob.SolveSDP(context.Background(), p, frob.SDPOptions{})
	if err != nil {
		log.Fatal(err)
	}
	x := sol.X()
	fmt.Printf("certified: %v, ν = %.4f\n", sol.Certified, sol.U[0])
	for i := 0; i < 3; i++ {
		fmt.Printf("%.4f %.4f %.4f\n", math.Abs(x.At(i, 0)), math.Abs(x.At(i, 1)), math.Abs(x.At(i, 2)))
	}
	// Output:
	// certified: true, ν = 2.0000
	// 1.0000 0.0000 0.0000
	// 0.0000 0.0000 0.0000
	// 0.0000 0.0000 0.0000
}

// Unfold points on a quarter circle, joined to their 2 nearest neighbours,
// onto a line: MVU puts all the variance in one dimension.
func ExampleMVU() {
	const n = 40
	x := mat.NewDense(n, 2, nil)
	for i := 0; i < n; i++ {
		a := math.Pi / 2 * float64(i) / (n - 1)
		x.Set(i, 0, 10*math.Cos(a))
		x.Set(i, 1, 10*math.Sin(a))
	}
	emb, err := frob.MVU(context.Background(), x, frob.MVUOptions{K: 2, Dims: 1})
	if err != nil {
		log.Fatal(err)
	}
	var tr float64
	for _, v := range emb.Eigenvalues {
		tr += v
	}
	fmt.Printf("variance in one dimension: %.3f\n", emb.Eigenvalues[0]/tr)
	fmt.Printf("σ chosen: %g\n", emb.Sigma) // the floor, for so few points
	// Output:
	// variance in one dimension: 1.000
	// σ chosen: 100000
}
