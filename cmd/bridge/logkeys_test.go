package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// renamedLogKeys are attribute names the project does not use, with the
// one it uses instead: one set of keys, so that a log query finds every
// line about a conversation, a message or a person.
var renamedLogKeys = map[string]string{
	"msg":              "a name for what it holds (msg_id, text, …): the JSON handler writes the record's message as msg, and a second msg key hides one of them",
	"message":          "a name for what it holds (msg_id, text, …)",
	"error":            "err",
	"user_id":          "user (a person) or bot_user (the bot's own account)",
	"sender":           "user",
	"session_id":       "session",
	"message_id":       "msg_id",
	"conversation_key": "key",
	"stderr":           "stderr_tail",
	"in":               "retry_in",
}

var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// logMethods maps the *slog.Logger methods that take key/value pairs to
// the index of their first pair.
var logMethods = map[string]int{
	"Debug": 1, "Info": 1, "Warn": 1, "Error": 1,
	"DebugContext": 2, "InfoContext": 2, "WarnContext": 2, "ErrorContext": 2,
	"Log": 3, "With": 0,
}

// slogAttrs are the slog functions whose first argument is a key.
var slogAttrs = map[string]bool{
	"String": true, "Int": true, "Int64": true, "Uint64": true, "Float64": true,
	"Bool": true, "Time": true, "Duration": true, "Any": true, "Group": true,
}

// TestLogKeys reads every non-test Go file of the module and checks the
// log attribute keys written as literals: snake_case, and none of the
// names in renamedLogKeys.
func TestLogKeys(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	seen := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, k := range logKeys(f) {
			seen++
			pos := fset.Position(k.Pos())
			key, _ := strconv.Unquote(k.Value)
			if use, ok := renamedLogKeys[key]; ok {
				t.Errorf("%s: log key %q: use %s", pos, key, use)
			} else if !snakeCase.MatchString(key) {
				t.Errorf("%s: log key %q is not snake_case", pos, key)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen < 100 {
		t.Fatalf("found only %d log keys: the scan missed the sources", seen)
	}
}

// logKeys returns the string literals that f passes as log attribute
// keys: at the key positions of log method calls (methods, not package
// functions; an argument that is not a string literal counts as one
// slog.Attr), as the first argument of
// slog.String and its kin, and as the Key of a slog.Attr literal.
func logKeys(f *ast.File) []*ast.BasicLit {
	var keys []*ast.BasicLit
	pkgs := map[string]bool{} // package names: http.Error is no log call
	for _, im := range f.Imports {
		path, _ := strconv.Unquote(im.Path.Value)
		name := path[strings.LastIndex(path, "/")+1:]
		if im.Name != nil {
			name = im.Name.Name
		}
		pkgs[name] = true
	}
	str := func(e ast.Expr) *ast.BasicLit {
		if bl, ok := e.(*ast.BasicLit); ok && bl.Kind == token.STRING {
			return bl
		}
		return nil
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CompositeLit:
			if sel, ok := n.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Attr" && isIdent(sel.X, "slog") {
				for _, e := range n.Elts {
					if kv, ok := e.(*ast.KeyValueExpr); ok && isIdent(kv.Key, "Key") && str(kv.Value) != nil {
						keys = append(keys, str(kv.Value))
					}
				}
			}
		case *ast.CallExpr:
			sel, ok := n.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if isIdent(sel.X, "slog") {
				if slogAttrs[sel.Sel.Name] && len(n.Args) > 0 && str(n.Args[0]) != nil {
					keys = append(keys, str(n.Args[0]))
				}
				return true
			}
			first, ok := logMethods[sel.Sel.Name]
			if id, isPkg := sel.X.(*ast.Ident); !ok || n.Ellipsis.IsValid() || isPkg && pkgs[id.Name] {
				return true
			}
			for i := first; i < len(n.Args); i++ {
				if k := str(n.Args[i]); k != nil {
					keys = append(keys, k)
					i++ // its value
				}
			}
		}
		return true
	})
	return keys
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}
