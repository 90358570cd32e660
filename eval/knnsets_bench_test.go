package eval_test

import (
	"testing"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/eval"
)

// BenchmarkLettersEvaluation scores the Euclidean metric on the letters
// validation and test parts (4,500 + 5,000 queries against 10,500 training
// points, k = 3), as the train command does: one stacked search against two
// separate ones.
//
//	go test -run XXX -bench LettersEvaluation ./eval
func BenchmarkLettersEvaluation(b *testing.B) {
	tr, val, test := lettersSplit(b)
	be := engine.Default()
	sets := []eval.Queries{{X: test.X, Y: test.Y}, {X: val.X, Y: val.Y}}
	b.Run("stacked", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := eval.FactorKNNErrors(be, nil, tr.X, tr.Y, 3, sets...); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("separate", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			for _, s := range sets {
				if _, err := eval.KNNError(be, tr.X, tr.Y, s.X, s.Y, 3); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
