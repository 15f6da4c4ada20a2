package handoff

import (
	"io"
)

// pipeWriter types lines into a terminal's input.
type pipeWriter struct{ w *io.PipeWriter }

func newPipe() (*io.PipeReader, pipeWriter) {
	r, w := io.Pipe()
	return r, pipeWriter{w}
}

func (p pipeWriter) line(s string) { _, _ = io.WriteString(p.w, s+"\n") }
func (p pipeWriter) close()        { _ = p.w.Close() }
