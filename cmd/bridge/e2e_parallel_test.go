package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// sequentialE2E are the end-to-end tests that may not run beside others,
// each with why. Everything else in an e2e_*_test.go file runs in parallel:
// the package's tests mostly wait (CLIs, fakes, outages), and run one at a
// time they took most of CI's time.
var sequentialE2E = map[string]string{}

// TestE2ETestsRunInParallel: every test of an e2e_*_test.go file calls
// t.Parallel() first, unless sequentialE2E names it. Each has its own
// bridge, fakes and data_dir; they share one binary, one browser and one
// PostgreSQL server (harness_test.go).
func TestE2ETestsRunInParallel(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("e2e_*_test.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no end-to-end test files: %v", err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Test") || fn.Body == nil {
				continue
			}
			if _, ok := sequentialE2E[fn.Name.Name]; ok {
				continue
			}
			if !startsWithParallel(fn.Body) {
				t.Errorf("%s (%s): call t.Parallel() first, or name it in sequentialE2E with the reason", fn.Name.Name, fset.Position(fn.Pos()))
			}
		}
	}
}

// startsWithParallel reports whether body's first statement is t.Parallel().
func startsWithParallel(body *ast.BlockStmt) bool {
	if len(body.List) == 0 {
		return false
	}
	es, ok := body.List[0].(*ast.ExprStmt)
	if !ok {
		return false
	}
	call, ok := es.X.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "Parallel" && len(call.Args) == 0
}
