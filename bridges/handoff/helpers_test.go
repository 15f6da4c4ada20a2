package handoff

import (
	"io"
	"strings"
	"sync"
)

// syncWriter is a goroutine-safe strings.Builder.
type syncWriter struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// pipeWriter types lines into a terminal's input.
type pipeWriter struct{ w *io.PipeWriter }

func newPipe() (*io.PipeReader, pipeWriter) {
	r, w := io.Pipe()
	return r, pipeWriter{w}
}

func (p pipeWriter) line(s string) { _, _ = io.WriteString(p.w, s+"\n") }
func (p pipeWriter) close()        { _ = p.w.Close() }
