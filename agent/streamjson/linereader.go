package streamjson

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// DefaultMaxLineBytes is the default cap on one stdout line (agent.Options.MaxLineBytes).
const DefaultMaxLineBytes = 64 << 20

// lineReaderBufSize is the bufio buffer size; lines longer than this are
// assembled from several reads.
const lineReaderBufSize = 64 << 10

// lineReaderKeepCap is the largest line buffer kept between lines; a bigger
// one (left by a long line) is dropped so an idle session does not pin it.
const lineReaderKeepCap = 1 << 20

// ErrLineTooLong is wrapped by the error LineReader.Next returns for a line
// longer than the cap. The line has been skipped; reading may go on.
var ErrLineTooLong = errors.New("agent: stdout line too long")

// LineTooLongError describes a skipped oversize line.
type LineTooLongError struct {
	Size  int64  // total length of the skipped line, without the newline
	Max   int    // the cap
	Start []byte // the first bytes of the line
}

func (e *LineTooLongError) Error() string {
	return fmt.Sprintf("stdout line of %d bytes exceeds the %d byte cap: skipped", e.Size, e.Max)
}

func (e *LineTooLongError) Unwrap() error { return ErrLineTooLong }

// LineReader splits a stream into newline-terminated lines of any length up
// to max bytes, unlike bufio.Scanner (64 KiB by default, fatal on
// overflow). An oversize line is skipped up to its newline without being
// buffered whole and reported as a *LineTooLongError; the next call reads
// the following line. Not safe for concurrent use.
type LineReader struct {
	r   *bufio.Reader
	max int
	buf []byte
}

func NewLineReader(r io.Reader, max int) *LineReader {
	if max <= 0 {
		max = DefaultMaxLineBytes
	}
	return &LineReader{r: bufio.NewReaderSize(r, lineReaderBufSize), max: max}
}

// Next returns the next line without its trailing "\n" (and "\r"). The slice
// is only valid until the following call (it may be bufio's own buffer). A
// last line without a newline is returned before io.EOF. Errors other than
// *LineTooLongError come from the underlying reader and end the stream.
func (lr *LineReader) Next() ([]byte, error) {
	if cap(lr.buf) > lineReaderKeepCap {
		lr.buf = nil
	}
	lr.buf = lr.buf[:0]
	var (
		tooLong bool
		skipped int64  // length of the oversize line so far
		start   []byte // its first bytes, for the error
	)
	for {
		frag, err := lr.r.ReadSlice('\n')
		if err != nil && err != bufio.ErrBufferFull && err != io.EOF {
			return nil, err
		}
		content := frag
		hasNL := len(frag) > 0 && frag[len(frag)-1] == '\n'
		if hasNL {
			content = frag[:len(frag)-1]
			if len(lr.buf) == 0 && !tooLong && len(content) <= lr.max {
				// The whole line is in bufio's buffer: no copy.
				return trimCR(content), nil
			}
		}
		switch {
		case tooLong:
			skipped += int64(len(content))
		case len(lr.buf)+len(content) > lr.max:
			tooLong = true
			skipped = int64(len(lr.buf) + len(content))
			start = append(start, lr.buf[:min(len(lr.buf), decodeErrorLineMax)]...)
			start = append(start, content[:min(len(content), decodeErrorLineMax-len(start))]...)
			lr.buf = lr.buf[:0]
		default:
			lr.buf = append(lr.buf, content...)
		}
		if !hasNL && err != io.EOF {
			continue // bufio.ErrBufferFull: the line goes on
		}
		if tooLong {
			return nil, &LineTooLongError{Size: skipped, Max: lr.max, Start: start}
		}
		if !hasNL && len(lr.buf) == 0 {
			return nil, io.EOF
		}
		return trimCR(lr.buf), nil
	}
}

// trimCR drops a trailing "\r".
func trimCR(line []byte) []byte {
	if n := len(line); n > 0 && line[n-1] == '\r' {
		return line[:n-1]
	}
	return line
}
