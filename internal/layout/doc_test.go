package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"testing"
)

// TestExportedIdentifiersDocumented parses every non-test Go file of the
// module and requires a doc comment on each exported package-level
// identifier: functions, methods of exported types, types, and constants and
// variables (a comment on the declaration group counts for its members). It
// also requires a package comment in every package. Generated files and the
// cmd and examples trees (programs, not APIs) are skipped.
func TestExportedIdentifiersDocumented(t *testing.T) {
	pkgDoc := map[string]bool{}
	var missing []string
	skip := func(rel string) bool { return rel == "cmd" || rel == "examples" }
	walkSources(t, parser.ParseComments, skip, func(rel string, fset *token.FileSet, f *ast.File) {
		if ast.IsGenerated(f) {
			return
		}
		dir := filepath.Dir(rel)
		if _, ok := pkgDoc[dir]; !ok {
			pkgDoc[dir] = false
		}
		if f.Doc != nil {
			pkgDoc[dir] = true
		}
		at := func(n ast.Node, what string) {
			missing = append(missing, fset.Position(n.Pos()).String()+": "+what)
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() || d.Doc != nil {
					continue
				}
				if d.Recv != nil && !exportedRecv(d.Recv) {
					continue
				}
				at(d, "func "+d.Name.Name)
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() && d.Doc == nil && s.Doc == nil {
							at(s, "type "+s.Name.Name)
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() && d.Doc == nil && s.Doc == nil && s.Comment == nil {
								at(n, n.Name)
							}
						}
					}
				}
			}
		}
	})
	for dir, ok := range pkgDoc {
		if !ok {
			missing = append(missing, dir+": package comment")
		}
	}
	for _, m := range missing {
		t.Error("undocumented: " + m)
	}
}

// exportedRecv reports whether a method's receiver type is exported.
func exportedRecv(r *ast.FieldList) bool {
	if len(r.List) == 0 {
		return false
	}
	t := r.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.IsExported()
		default:
			return false
		}
	}
}
