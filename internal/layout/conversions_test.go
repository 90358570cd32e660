package layout

import (
	"go/ast"
	"go/token"
	"strings"
	"testing"
)

// integerConversions are the files whose float32 conversions take
// integers, never a float64 that could be subnormal in float32.
var integerConversions = map[string]bool{
	"engine/perturbed/blas.go": true, // a hash's bits to [−1, 1)
	"bench/flopbound.go":       true, // i%5 − 2 as benchmark data
}

// TestConversionsGoThroughRound finds every float32(…) conversion in the
// module's non-test sources: each must be f32.Round or f32.FromFloat64
// (or take integers, listed above), so that no subnormal float32 reaches
// a single-precision kernel, where each costs a microcode assist (see
// f32.Round).
func TestConversionsGoThroughRound(t *testing.T) {
	walkSources(t, 0, func(rel string) bool { return rel == "internal/f32" }, func(rel string, fset *token.FileSet, f *ast.File) {
		if integerConversions[rel] || strings.HasPrefix(rel, "internal/f32/") {
			return
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) != 1 {
				return true
			}
			if id, ok := call.Fun.(*ast.Ident); ok && id.Name == "float32" {
				if _, lit := call.Args[0].(*ast.BasicLit); !lit {
					t.Errorf("%s: float32(…) conversion: use f32.Round, which flushes subnormals", fset.Position(call.Pos()))
				}
			}
			return true
		})
	})
}
