package eval_test

import (
	"errors"
	"testing"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/eval"
	"gonum.org/v1/gonum/mat"
)

// TestFactorKNNErrors checks that one stacked search gives, set by set, the
// errors of separate FactorKNNError / KNNError calls on the letters split,
// with the Euclidean metric, a full-rank and a rank-deficient factor, on
// every backend; and that bad sets are refused.
func TestFactorKNNErrors(t *testing.T) {
	tr, val, test := lettersSplit(t)
	// Rows 0..499 of the validation part: a third, smaller set.
	small := eval.Queries{X: val.X.Slice(0, 500, 0, 16).(*mat.Dense), Y: val.Y[:500]}
	empty := eval.Queries{X: val.X.Slice(0, 0, 0, 16).(*mat.Dense), Y: nil}
	full := mat.NewDense(16, 16, nil)
	low := mat.NewDense(16, 5, nil)
	for i := 0; i < 16; i++ {
		full.Set(i, i, 1+float64(i%4))
		full.Set(i, (i+3)%16, 0.5)
		low.Set(i, i%5, 1-0.05*float64(i))
	}
	for _, b := range engine.All() {
		for _, tc := range []struct {
			name string
			l    *mat.Dense
		}{{"euclidean", nil}, {"full", full}, {"rank5", low}} {
			sets := []eval.Queries{{X: test.X, Y: test.Y}, {X: val.X, Y: val.Y}, empty, small}
			got, err := eval.FactorKNNErrors(b, tc.l, tr.X, tr.Y, 3, sets...)
			if err != nil {
				t.Fatalf("%s/%s: %v", b.Name(), tc.name, err)
			}
			for s, q := range sets {
				var want float64
				if q.X.RawMatrix().Rows > 0 {
					if tc.l == nil {
						want, err = eval.KNNError(b, tr.X, tr.Y, q.X, q.Y, 3)
					} else {
						want, err = eval.FactorKNNError(b, tc.l, tr.X, tr.Y, q.X, q.Y, 3)
					}
					if err != nil {
						t.Fatal(err)
					}
				}
				if got[s] != want {
					t.Errorf("%s/%s: set %d: stacked error %v, separate %v", b.Name(), tc.name, s, got[s], want)
				}
			}
		}
	}
	bad := []struct {
		name string
		l    *mat.Dense
		sets []eval.Queries
	}{
		{"nil set", nil, []eval.Queries{{}}},
		{"labels", nil, []eval.Queries{{X: test.X, Y: test.Y[:10]}}},
		{"features", nil, []eval.Queries{{X: test.X.Slice(0, 10, 0, 15).(*mat.Dense), Y: test.Y[:10]}}},
		{"factor rows", mat.NewDense(15, 2, nil), []eval.Queries{{X: test.X, Y: test.Y}}},
	}
	for _, tc := range bad {
		if _, err := eval.FactorKNNErrors(nil, tc.l, tr.X, tr.Y, 3, tc.sets...); !errors.Is(err, eval.ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", tc.name, err)
		}
	}
}
