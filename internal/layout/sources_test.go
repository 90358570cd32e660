package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// walkSources parses every non-test Go file of the module (skipping hidden
// directories, testdata, third_party and the directories skipDir names by
// their slash-separated path from the root) and calls visit with its path
// from the root. It fails the test if it finds no file.
func walkSources(t *testing.T, mode parser.Mode, skipDir func(rel string) bool, visit func(rel string, fset *token.FileSet, f *ast.File)) {
	t.Helper()
	base := root(t)
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir(base, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(base, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "third_party" || skipDir(rel)) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, mode)
		if err != nil {
			return err
		}
		files++
		visit(rel, fset, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files == 0 {
		t.Fatal("no Go source file under the module root")
	}
}
