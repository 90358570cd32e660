package engine

import (
	"context"
	"errors"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestNoBackendErrors checks what Default returns with nothing registered:
// every numerical call fails with ErrNoBackend, which names the package to
// import, instead of a nil dereference.
func TestNoBackendErrors(t *testing.T) {
	var b Backend = none{}
	a := mat.NewSymDense(2, []float64{1, 0, 0, 1})
	calls := map[string]error{
		"SymEig":        func() error { _, err := b.SymEig(a, AllRange(), true); return err }(),
		"WeightedGram":  b.WeightedGram(mat.NewSymDense(2, nil), mat.NewDense(2, 2, nil), nil),
		"PairQuadForms": b.PairQuadForms(nil, mat.NewDense(2, 2, nil), a, nil),
		"PairSqDists":   b.PairSqDists(nil, mat.NewDense(2, 2, nil), nil),
		"Eigs": func() error {
			_, err := b.Eigs(context.Background(), nil, 1, LargestAlgebraic, EigsOptions{})
			return err
		}(),
		"Minimize": func() error {
			_, err := b.Minimize(context.Background(), Problem{}, nil, MinimizeSettings{})
			return err
		}(),
		"LP": func() error { _, err := b.LP().NewModel(LPProblem{}); return err }(),
	}
	for name, err := range calls {
		if !errors.Is(err, ErrNoBackend) {
			t.Errorf("%s: %v, want ErrNoBackend", name, err)
		}
	}
}
