package sparse

import "testing"

// TestTransposeCols checks transposeCols against the definition on panels
// whose sides are and are not multiples of the tile and of four.
func TestTransposeCols(t *testing.T) {
	for _, tc := range []struct{ m, nc, c0 int }{{256, 512, 0}, {256, 512, 100}, {37, 53, 5}, {3, 7, 0}, {16, 16, 16}, {1, 1, 0}} {
		prod := make([]float32, tc.m*tc.nc)
		for i := range prod {
			prod[i] = float32(i)
		}
		tr := make([]float32, tc.m*tc.nc)
		transposeCols(tr, prod, tc.m, tc.nc, tc.c0)
		for c := tc.c0; c < tc.nc; c++ {
			for i := 0; i < tc.m; i++ {
				if tr[c*tc.m+i] != prod[i*tc.nc+c] {
					t.Fatalf("m=%d nc=%d c0=%d: tr[%d][%d] = %v, want %v", tc.m, tc.nc, tc.c0, c, i, tr[c*tc.m+i], prod[i*tc.nc+c])
				}
			}
		}
	}
}

func BenchmarkTransposeCols(b *testing.B) {
	m, nc := knnQueryBlock, knnRefBlock
	prod := make([]float32, m*nc)
	tr := make([]float32, m*nc)
	b.SetBytes(int64(4 * m * nc))
	for i := 0; i < b.N; i++ {
		transposeCols(tr, prod, m, nc, 0)
	}
}
