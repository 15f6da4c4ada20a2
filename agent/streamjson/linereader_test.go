package streamjson

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

// readAll drains lr, recording lines and too-long errors as "!TOO LONG n".
func readAll(t *testing.T, lr *LineReader) []string {
	t.Helper()
	var out []string
	for {
		line, err := lr.Next()
		var tl *LineTooLongError
		switch {
		case err == nil:
			out = append(out, string(line))
		case errors.As(err, &tl):
			if !errors.Is(err, ErrLineTooLong) {
				t.Errorf("too-long error does not wrap ErrLineTooLong")
			}
			out = append(out, "!TOO LONG "+strconv.FormatInt(tl.Size, 10)+" "+string(tl.Start[:min(len(tl.Start), 8)]))
		case err == io.EOF:
			return out
		default:
			t.Fatalf("unexpected error %v", err)
		}
		if len(out) > 1000 {
			t.Fatal("runaway reader")
		}
	}
}

func TestLineReader(t *testing.T) {
	big := strings.Repeat("a", 200<<10) // bigger than the bufio buffer
	tests := []struct {
		name  string
		input string
		max   int
		want  []string
	}{
		{"simple", "one\ntwo\n", 100, []string{"one", "two"}},
		{"no final newline", "one\ntwo", 100, []string{"one", "two"}},
		{"empty lines kept", "\n\nx\n", 100, []string{"", "", "x"}},
		{"crlf", "one\r\ntwo\r\n", 100, []string{"one", "two"}},
		{"empty input", "", 100, nil},
		{"exactly max", "12345\nab\n", 5, []string{"12345", "ab"}},
		{"max plus one skipped", "123456\nab\n", 5, []string{"!TOO LONG 6 123456", "ab"}},
		{"oversize last line without newline", "ab\n1234567", 5, []string{"ab", "!TOO LONG 7 1234567"}},
		{"long line under cap", big + "\nnext\n", 1 << 20, []string{big, "next"}},
		{"long line over cap", "first\n" + big + "\nnext\n", 100 << 10, []string{"first", "!TOO LONG 204800 aaaaaaaa", "next"}},
		{"two oversize in a row", big + "\n" + big + "\nok\n", 1000, []string{"!TOO LONG 204800 aaaaaaaa", "!TOO LONG 204800 aaaaaaaa", "ok"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, mode := range []string{"whole", "onebyte"} {
				var r io.Reader = strings.NewReader(tt.input)
				if mode == "onebyte" {
					r = iotest.OneByteReader(r)
				}
				got := readAll(t, NewLineReader(r, tt.max))
				if strings.Join(got, "|") != strings.Join(tt.want, "|") {
					short := func(s []string) []string {
						o := make([]string, len(s))
						for i, x := range s {
							o[i] = x[:min(len(x), 40)]
						}
						return o
					}
					t.Errorf("%s: got %q, want %q", mode, short(got), short(tt.want))
				}
			}
		})
	}
}

// TestLineReaderTwentyMegabyteLine: a 20 MB line (a huge tool result) passes
// with the default cap and does not disturb the lines around it.
func TestLineReaderTwentyMegabyteLine(t *testing.T) {
	huge := `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"` +
		strings.Repeat("z", 20<<20) + `"}]}}`
	input := `{"type":"command_lifecycle","command_uuid":"a","state":"started"}` + "\n" + huge + "\n" +
		`{"type":"command_lifecycle","command_uuid":"a","state":"completed"}` + "\n"
	lr := NewLineReader(strings.NewReader(input), 0)
	var evs []Event
	for {
		line, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, decodeLine(line)...)
	}
	if len(evs) != 3 {
		t.Fatalf("got %d events", len(evs))
	}
	if tr, ok := evs[1].(ToolResult); !ok || len(tr.Content) != 20<<20 {
		t.Errorf("20 MB tool result not decoded: %T", evs[1])
	}
	if lc, ok := evs[2].(Lifecycle); !ok || lc.State != LifecycleCompleted {
		t.Errorf("line after the huge one lost: %#v", evs[2])
	}
	// The big buffer is not kept for the next line.
	if cap(lr.buf) > 0 {
		if _, err := lr.Next(); err != io.EOF {
			t.Fatal(err)
		}
		if cap(lr.buf) > lineReaderKeepCap {
			t.Errorf("line buffer of %d bytes kept after a huge line", cap(lr.buf))
		}
	}
}

// TestLineReaderSkipsWithoutBuffering: skipping an oversize line must not
// grow the buffer beyond the cap.
func TestLineReaderSkipsWithoutBuffering(t *testing.T) {
	const max = 64 << 10
	input := strings.Repeat("q", 8<<20) + "\nok\n"
	lr := NewLineReader(strings.NewReader(input), max)
	_, err := lr.Next()
	if !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("got %v", err)
	}
	if cap(lr.buf) > 2*max+lineReaderBufSize {
		t.Errorf("buffer grew to %d bytes while skipping", cap(lr.buf))
	}
	line, err := lr.Next()
	if err != nil || string(line) != "ok" {
		t.Errorf("got %q, %v", line, err)
	}
}

func TestLineReaderPropagatesReadErrors(t *testing.T) {
	boom := errors.New("boom")
	lr := NewLineReader(io.MultiReader(strings.NewReader("a\npartial"), iotest.ErrReader(boom)), 100)
	if line, err := lr.Next(); err != nil || string(line) != "a" {
		t.Fatalf("got %q %v", line, err)
	}
	if _, err := lr.Next(); !errors.Is(err, boom) {
		t.Errorf("got %v, want boom", err)
	}
}

func TestLineReaderLineNotRetained(t *testing.T) {
	lr := NewLineReader(bytes.NewReader([]byte("first\nsecond\n")), 100)
	a, _ := lr.Next()
	keep := string(a)
	_, _ = lr.Next()
	if keep != "first" {
		t.Errorf("copy changed: %q", keep)
	}
}
