package agent

import (
	"bytes"
	"io"
	"testing"
)

// BenchmarkDecode reads every CLI→host line of all captures through the
// line reader and the decoder; b.SetBytes makes it report MB/s.
// Run: go test ./agent -run '^$' -bench BenchmarkDecode -benchtime 3s
func BenchmarkDecode(b *testing.B) {
	var stream bytes.Buffer
	lines := 0
	for _, ls := range loadTranscriptLines(b) {
		for _, l := range ls {
			stream.Write(l)
			stream.WriteByte('\n')
			lines++
		}
	}
	data := stream.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	events := 0
	var dec Decoder
	for b.Loop() {
		lr := newLineReader(bytes.NewReader(data), 0)
		for {
			line, err := lr.next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			events += len(dec.Decode(line))
		}
	}
	b.ReportMetric(float64(lines), "lines/op")
	if events == 0 {
		b.Fatal("no events")
	}
}

// BenchmarkDecodeReference is BenchmarkDecode through the encoding/json
// decoder that Decoder replaced, for comparison in the same run.
func BenchmarkDecodeReference(b *testing.B) {
	var stream bytes.Buffer
	for _, ls := range loadTranscriptLines(b) {
		for _, l := range ls {
			stream.Write(l)
			stream.WriteByte('\n')
		}
	}
	data := stream.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		lr := newLineReader(bytes.NewReader(data), 0)
		for {
			line, err := lr.next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			_ = stdDecodeLine(line)
		}
	}
}
