package serve

import (
	"fmt"
	"testing"
)

// BenchmarkPredict is one k-NN prediction (k = 5) of a raw row against n
// reference rows of 164 features (standardised, a full-rank metric), the
// MNIST-after-PCA shape at n = 60,000:
//
//	go test -run '^$' -bench Predict -benchmem ./serve
func BenchmarkPredict(b *testing.B) {
	for _, n := range []int{10000, 60000} {
		b.Run(fmt.Sprintf("n=%d,D=164", n), func(b *testing.B) {
			ix, _, q := testIndex(b, n, 164, 0, 164, 10, 64)
			var s Scratch
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, _, err := ix.Predict(&s, q.RawRowView(i%64), 5); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
