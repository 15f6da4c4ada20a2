package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseMutants(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		want    []Break
		wantErr string // substring of the error; "" means no error
	}{
		{name: "empty", text: ""},
		{name: "comments only", text: "# breaks of this package\n\n#another\n"},
		{
			name: "one block",
			text: "# c\n## drop the check\nfile: a.go\ntest: TestA|TestB\n<<<\n\tif x {\n\t\treturn\n\t}\n===\n\treturn\n>>>\n",
			want: []Break{{Title: "drop the check", File: "a.go", Test: "TestA|TestB",
				Old: "\tif x {\n\t\treturn\n\t}", New: "\treturn", Line: 2}},
		},
		{
			name: "empty replacement, test before file, CRLF",
			text: "## delete\r\ntest: TestX\r\nfile: b.go\r\n<<<\r\nx := 1\r\n===\r\n>>>\r\n",
			want: []Break{{Title: "delete", File: "b.go", Test: "TestX", Old: "x := 1", New: "", Line: 1}},
		},
		{
			name: "two blocks, === and >>> kept in the replacement text",
			text: "## one\nfile: a.go\ntest: T1\n<<<\na\n===\n===\n>>>\n\n## two\nfile: b.go\ntest: T2\n<<<\nb\n===\nc\n>>>\n",
			want: []Break{
				{Title: "one", File: "a.go", Test: "T1", Old: "a", New: "===", Line: 1},
				{Title: "two", File: "b.go", Test: "T2", Old: "b", New: "c", Line: 10},
			},
		},
		{name: "stray line", text: "file: a.go\n", wantErr: "mutants.txt:1: unexpected line"},
		{name: "block not closed before the next", text: "## one\nfile: a.go\ntest: T1\n<<<\na\n===\nb\n\n## two\nfile: b.go\ntest: T2\n<<<\nc\n===\n>>>\n",
			wantErr: "not closed before the next break at line 9"},
		{name: "no test", text: "## x\nfile: a.go\n<<<\na\n===\nb\n>>>\n", wantErr: "needs file: and test:"},
		{name: "no file", text: "## x\ntest: T\n<<<\na\n===\nb\n>>>\n", wantErr: "needs file: and test:"},
		{name: "absolute path", text: "## x\nfile: /src/a.go\ntest: T\n<<<\na\n===\nb\n>>>\n", wantErr: "not a clean path"},
		{name: "unclean path", text: "## x\nfile: sqldb/../a.go\ntest: T\n<<<\na\n===\nb\n>>>\n", wantErr: "not a clean path"},
		{name: "a directory", text: "## x\nfile: ..\ntest: T\n<<<\na\n===\nb\n>>>\n", wantErr: "not a clean path"},
		{
			name: "a file of another package",
			text: "## x\nfile: ../sqldb/dialect.go\ntest: T\n<<<\na\n===\nb\n>>>\n",
			want: []Break{{Title: "x", File: "../sqldb/dialect.go", Test: "T", Old: "a", New: "b", Line: 1}},
		},
		{name: "unknown key", text: "## x\nfile: a.go\npkg: p\n<<<\n", wantErr: "want file:, test: or <<<"},
		{name: "duplicate key", text: "## x\nfile: a.go\nfile: b.go\n", wantErr: "want file:, test: or <<<"},
		{name: "no <<<", text: "## x\nfile: a.go\ntest: T", wantErr: "no <<<"},
		{name: "no ===", text: "## x\nfile: a.go\ntest: T\n<<<\na\n>>>\n", wantErr: "not closed"},
		{name: "no >>>", text: "## x\nfile: a.go\ntest: T\n<<<\na\n===\nb\n", wantErr: "not closed"},
		{name: "empty original", text: "## x\nfile: a.go\ntest: T\n<<<\n===\nb\n>>>\n", wantErr: "empty original"},
		{name: "empty title", text: "##  \n", wantErr: "empty title"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseMutants("mutants.txt", tt.text)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

// TestEveryBreakApplies: every break of every mutants.txt in the checkout
// still finds its original text exactly once in its file. A break whose
// code moved or changed would otherwise only be noticed when `make
// mutants` runs (it is not part of `make test`).
func TestEveryBreakApplies(t *testing.T) {
	root := filepath.Join("..", "..")
	bs, err := findBreaks(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) == 0 {
		t.Fatal("no breaks found in the checkout")
	}
	for _, b := range bs {
		path := filepath.Join(root, b.Dir, filepath.FromSlash(b.File))
		data, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s/mutants.txt:%d %q: %v", b.Dir, b.Line, b.Title, err)
			continue
		}
		if n := strings.Count(string(data), b.Old); n != 1 {
			t.Errorf("%s/mutants.txt:%d %q: its original text occurs %d times in %s, want once", b.Dir, b.Line, b.Title, n, b.File)
		}
	}
}
