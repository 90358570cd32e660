package f32

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
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
// module's non-test sources: each must be Round or FromFloat64 (or take
// integers, listed above), so that no subnormal reaches a single-precision
// kernel (see Round).
func TestConversionsGoThroughRound(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if path == root {
				return nil
			}
			if strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "third_party" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || strings.HasPrefix(rel, "internal/f32/") || integerConversions[rel] {
			return nil
		}
		files++
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
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
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files == 0 {
		t.Fatal("no source file found under the module root")
	}
}
