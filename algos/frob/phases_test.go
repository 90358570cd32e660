package frob

import (
	"context"
	"testing"
	"time"
)

// TestPhases checks FrobMetric's phase profile against the solve it
// describes, on the whole set, on working sets and with the Newton polish:
// one Gram and one positive-part eigendecomposition per dual evaluation,
// the other evaluations Hessian products (each polish step a full
// eigendecomposition), at most D
// eigenpairs each, an embedding only of a nonzero part (of width the
// eigenpairs kept) and a margin pass after each, and disjoint phases
// whose times add up to no more than the call's wall time.
func TestPhases(t *testing.T) {
	for _, c := range []struct {
		name    string
		n, d    int
		ws      WorkingSetMode
		maxIter int
	}{
		{"whole", 200, 12, WorkingSetOff, 0},
		{"working set", 600, 10, WorkingSetOn, 0},
		{"polished", 200, 12, WorkingSetOff, 5},
	} {
		x, ts := clusterTriplets(t, c.n, c.d, 4, 1)
		start := time.Now()
		res, err := Learn(context.Background(), x, ts, MetricOptions{C: 1, WorkingSet: c.ws, MaxIter: c.maxIter})
		wall := time.Since(start).Seconds()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		p := res.Phases
		t.Logf("%s: %d evaluations (%d full), %d rounds, %d refinements, %+v", c.name, res.Evaluations, res.FullEvaluations, res.Rounds, res.Refinements, p)
		if c.ws == WorkingSetOn && res.Rounds == 0 {
			t.Errorf("%s: no working-set round", c.name)
		}
		if p.Grams+p.HessianProducts != res.Evaluations || p.Eigs != p.Grams+p.FullEigs {
			t.Errorf("%s: %d Grams, %d Hessian products, %d eigendecompositions (%d full) for %d evaluations", c.name, p.Grams, p.HessianProducts, p.Eigs, p.FullEigs, res.Evaluations)
		}
		if c.maxIter > 0 && (p.HessianProducts == 0 || p.FullEigs == 0) {
			t.Errorf("%s: no Newton polish: %+v", c.name, p)
		}
		if p.GramRows < 1 || p.GramRows > p.Grams*c.n || p.HessianRows > p.HessianProducts*c.n || p.EigPairs > p.Eigs*c.d || p.EmbedCols > p.Embeds*c.d || p.Embeds > p.PairPasses || p.PairPasses < p.Grams {
			t.Errorf("%s: counts %+v", c.name, p)
		}
		if sum := p.Gram + p.Eig + p.Embed + p.Pairs + p.Hessian; sum > wall || p.Gram < 0 || p.Eig < 0 || p.Embed < 0 || p.Pairs < 0 || p.Hessian < 0 {
			t.Errorf("%s: phases %+v add up to %g s, the call took %g s", c.name, p, sum, wall)
		}
	}
}
