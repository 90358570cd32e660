package meg_test

import (
	"context"
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/algos/meg"
	"gonum.org/v1/gonum/mat"
)

// A target kernel over four objects; MEG learns it online from half squared
// distances ½‖x_a − x_b‖² = tr(U X_ab), one example at a time.
func ExampleLearner() {
	k := mat.NewSymDense(4, []float64{
		1.0, 0.8, 0.2, 0.1,
		0.8, 1.0, 0.3, 0.2,
		0.2, 0.3, 1.0, 0.7,
		0.1, 0.2, 0.7, 1.0,
	})
	u, _ := meg.TraceNormalize(k)
	seq, _ := meg.SampleDistances(u, 5000, 0, 1)

	// r = 1 bounds the eigenvalue spread of every X_ab; c = +Inf gives η = 2.
	l, _ := meg.NewLearner(4, meg.LearnerOptions{R: 1, C: math.Inf(1)})
	res, _ := l.Run(context.Background(), seq, nil)

	w1 := mat.NewDiagDense(4, []float64{0.25, 0.25, 0.25, 0.25})
	div, _ := meg.VonNeumann(nil, u, w1)
	fmt.Println("below the Lemma 3.2 bound:", res.TotalLoss <= meg.LossBound(0, div, 1, math.Inf(1)))

	w, _ := l.W()
	for _, p := range [][2]int{{0, 1}, {0, 3}, {2, 3}} {
		fmt.Printf("objects %d,%d: target %.4f learned %.4f\n", p[0], p[1],
			meg.HalfSqDist(u, p[0], p[1]), meg.HalfSqDist(w, p[0], p[1]))
	}
	// Output:
	// below the Lemma 3.2 bound: true
	// objects 0,1: target 0.0500 learned 0.0500
	// objects 0,3: target 0.2250 learned 0.2250
	// objects 2,3: target 0.0750 learned 0.0750
}

// DefiniteBoost finds the trace-one W closest to I/d (in von Neumann
// divergence) under the inequalities ½‖x_a − x_b‖²_W ≤ ε, given as the
// constraints tr(W (X_ab − εI)) ≤ 0.
func ExampleDefiniteBoost() {
	const d, eps = 5, 0.05
	var cons []meg.Sym
	for _, p := range [][2]int{{0, 1}, {1, 2}, {3, 4}} {
		cons = append(cons, meg.Shift(meg.DistPair{N: d, A: p[0], B: p[1]}, -eps))
	}
	for _, proj := range []meg.Projection{meg.Approximate, meg.Exact} {
		res, err := meg.DefiniteBoost(context.Background(), cons, meg.BoostOptions{Projection: proj, Tol: 1e-10})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s: converged %v, dual %.4f ≤ bound %.4f: %v\n", proj, res.Converged,
			res.Dual, res.LogBound, res.Dual <= res.LogBound)
		fmt.Printf("  ½|x0-x1|² %.4f, ½|x0-x2|² %.4f, ½|x3-x4|² %.4f\n",
			meg.HalfSqDist(res.W, 0, 1), meg.HalfSqDist(res.W, 0, 2), meg.HalfSqDist(res.W, 3, 4))
	}
	// Output:
	// approx: converged true, dual -0.3723 ≤ bound -0.3623: true
	//   ½|x0-x1|² 0.0500, ½|x0-x2|² 0.1432, ½|x3-x4|² 0.0500
	// exact: converged true, dual -0.3723 ≤ bound -0.3617: true
	//   ½|x0-x1|² 0.0500, ½|x0-x2|² 0.1432, ½|x3-x4|² 0.0500
}
