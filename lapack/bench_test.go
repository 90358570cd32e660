package lapack_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/psdlearn/psdlearn/lapack"
	"github.com/psdlearn/psdlearn/lapack/lapacktest"
)

func BenchmarkSymEig(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, n := range []int{100, 400, 1000} {
		a := lapacktest.RandSym(rng, n)
		for name, s := range solvers() {
			for _, r := range []struct {
				name string
				r    lapack.Range
			}{{"all", lapack.AllRange()}, {"top1", lapack.TopK(n, 1)}, {"negative", lapack.NegativePart(0)}} {
				b.Run(fmt.Sprintf("impl=%s/range=%s/n=%d", name, r.name, n), func(b *testing.B) {
					for i := 0; i < b.N; i++ {
						if _, err := s.SymEig(a, r.r, true); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}
