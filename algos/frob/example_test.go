package frob_test

import (
	"context"
	"fmt"
	"log"

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

// Solve one prepared problem for a list of C, each solve warm-started from
// the previous one's multipliers scaled into its box, as the front door's
// model selection does.
func ExampleNewProblem() {
	d, err := datasets.Open("iris")
	if err != nil {
		log.Fatal(err)
	}
	ts, err := constraints.Triplets(d.X, d.Y, 3)
	if err != nil {
		log.Fatal(err)
	}
	p, err := frob.NewProblem(d.X, ts)
	if err != nil {
		log.Fatal(err)
	}
	var u0 []float64
	prevC := 1.0
	for _, c := range []float64{1, 10, 100} {
		for r := range u0 { // nil at the first C: a cold start
			u0[r] *= c / prevC
		}
		res, err := p.Learn(context.Background(), frob.MetricOptions{C: c, U0: u0})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("C = %g certified: %v\n", c, res.Certified)
		u0, prevC = res.U, c
	}
	// Output:
	// C = 1 certified: true
	// C = 10 certified: true
	// C = 100 certified: true
}
