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
