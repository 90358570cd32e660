package npkl

import (
	"slices"
	"sync"

	"context"
	"gonum.org/v1/gonum/mat"
	"math"
	"testing"

	"github.com/psdlearn/psdlearn/engine/enginetest"
)

// solverVariants runs the squared-hinge iterations with Lanczos at EigTol
// throughout and with opt changed by each variant, and checks that every
// iteration's objective agrees to 1e-8 relative, the final α to 1e-7 and
// the final kernel's entries on the pairs to 1e-7 of the largest.
// It returns the products of the reference and of each variant.
func solverVariants(t *testing.T, maxRank int, variants map[string]func(*Options)) {
	lap, cons, _ := problem(t, 600, 3)
	for _, b := range enginetest.Backends(t) {
		t.Run(b.Name(), func(t *testing.T) {
			opt := Options{Loss: SquaredHinge, C: 0.5, MaxRank: maxRank, EigTol: 1e-10, Iters: 10, Seed: 1, Backend: b}
			ref, err := Learn(context.Background(), lap, cons, opt)
			if err != nil {
				t.Fatal(err)
			}
			for name, set := range variants {
				o := opt
				set(&o)
				res, err := Learn(context.Background(), lap, cons, o)
				if err != nil {
					t.Fatal(err)
				}
				for i, it := range res.History {
					r := ref.History[i]
					if d := math.Abs(it.Objective-r.Objective) / math.Abs(r.Objective); d > 1e-8 {
						t.Errorf("%s: iteration %d: objective %.12g, reference %.12g (rel. %.2g)", name, it.T, it.Objective, r.Objective, d)
					}
				}
				var da float64
				for c := range res.Alpha {
					da = math.Max(da, math.Abs(res.Alpha[c]-ref.Alpha[c]))
				}
				if da > 1e-7 {
					t.Errorf("%s: max |Δα| = %v", name, da)
				}
				// The final kernels' entries on the constraint pairs, in the
				// caller's numbering (KrylovSchur solves a renumbered problem).
				kr, kv := make([]float64, cons.Len()), make([]float64, cons.Len())
				ref.Entries(kr, cons)
				res.Entries(kv, cons)
				var dk, mk float64
				for c := range kr {
					dk, mk = math.Max(dk, math.Abs(kv[c]-kr[c])), math.Max(mk, math.Abs(kr[c]))
				}
				if dk > 1e-7*mk {
					t.Errorf("%s: kernel entries differ by %.2g (largest %.2g)", name, dk, mk)
				}
				t.Logf("%s: %d products, reference %d; max |Δα| %.2g", name, res.OpApplies, ref.OpApplies, da)
				if name == "early" && res.OpApplies >= ref.OpApplies {
					t.Errorf("EarlyEigTol: %d products, reference %d", res.OpApplies, ref.OpApplies)
				}
			}
		})
	}
}

// TestEigensolverVariants: the inexact early solves (EarlyEigTol), the
// warm-started block eigensolver and block Krylov–Schur give the iterates of Lanczos at EigTol
// throughout: objectives to 1e-8 relative, α to 1e-7. The inexact solves
// take fewer products.
func TestEigensolverVariants(t *testing.T) {
	solverVariants(t, 30, map[string]func(*Options){
		"early":       func(o *Options) { o.EarlyEigTol = 1e-4 },
		"block":       func(o *Options) { o.Eigensolver = Block },
		"krylovschur": func(o *Options) { o.Eigensolver = KrylovSchur },
	})
}

// TestFilteredEigensolver: Lanczos on the Chebyshev filter gives the same
// iterates when the spectrum is not covered (rank capped at 10), the
// regime it is for.
func TestFilteredEigensolver(t *testing.T) {
	var filteredSolves int
	defer func(f func(filterStats)) { filterLog = f }(filterLog)
	filterLog = func(filterStats) { filteredSolves++ }
	solverVariants(t, 10, map[string]func(*Options){
		"filtered": func(o *Options) { o.Eigensolver = Filtered },
	})
	if filteredSolves == 0 {
		t.Error("no filtered solve")
	}
}

// TestFilteredKrylovSchur: Krylov–Schur on the Chebyshev filter (its
// default after the first solve) gives the iterates of Lanczos, and so does
// the fallback to a plain solve when the cut lies above the wanted
// eigenvalues (filterCut 3: the filter then finds the wrong end, which
// the check on A must catch).
func TestFilteredKrylovSchur(t *testing.T) {
	defer func(f func(filterStats), c float64, on bool) {
		filterLog, filterCut, ksFilter = f, c, on
	}(filterLog, filterCut, ksFilter)
	for _, tc := range []struct {
		name   string
		cut    float64
		filter bool
	}{
		{"filtered", filterCut, true},
		{"fallback", 3, true},
		{"plain", filterCut, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var solves, failed int
			filterLog = func(f filterStats) {
				solves++
				if !f.Accepted {
					failed++
				}
			}
			filterCut, ksFilter = tc.cut, tc.filter
			solverVariants(t, 10, map[string]func(*Options){
				"krylovschur": func(o *Options) { o.Eigensolver = KrylovSchur },
			})
			switch {
			case tc.filter && solves == 0:
				t.Error("no filtered solve")
			case !tc.filter && solves > 0:
				t.Errorf("%d filtered solves with the filter off", solves)
			case tc.cut > 1 && failed != solves:
				t.Errorf("%d of %d filtered solves with the cut above the wanted eigenvalues passed", solves-failed, solves)
			case tc.cut < 1 && failed > 0:
				t.Errorf("%d of %d filtered solves failed", failed, solves)
			}
			t.Logf("%d filtered solves, %d fell back", solves, failed)
		})
	}
}

// TestLearnConcurrentRace runs Learn with Krylov–Schur (renumbered problem,
// warm starts) on 3 goroutines sharing one Laplacian and one constraint
// set, and requires the bits of a sequential run and unchanged inputs (run
// with -race).
func TestLearnConcurrentRace(t *testing.T) {
	lap, cons, _ := problem(t, 300, 4)
	lapData, list := slices.Clone(lap.Data), slices.Clone(cons.List)
	opt := Options{Loss: SquaredHinge, C: 0.5, MaxRank: 12, Iters: 3, Seed: 1, Eigensolver: KrylovSchur}
	want, err := Learn(context.Background(), lap, cons, opt)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	got := make([]*Result, 3)
	errs := make([]error, 3)
	for g := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[g], errs[g] = Learn(context.Background(), lap, cons, opt)
		}()
	}
	wg.Wait()
	for g, r := range got {
		if errs[g] != nil {
			t.Fatalf("goroutine %d: %v", g, errs[g])
		}
		if !mat.Equal(r.V, want.V) || !slices.Equal(r.Alpha, want.Alpha) {
			t.Errorf("goroutine %d differs from the sequential run", g)
		}
	}
	if !slices.Equal(lap.Data, lapData) || !slices.Equal(cons.List, list) {
		t.Error("the inputs were modified")
	}
}
