package streamjson

import (
	"bytes"
	"io"
	"testing"

	"github.com/agentbridge/agentbridge/internal/testkit"
)

// BenchmarkDecode reads every CLI→host line of all captures through the
// line reader and the decoder; b.SetBytes makes it report MB/s (wall
// time), and MB/cpu-s is the same per second of the process's CPU time,
// which a loaded machine disturbs much less.
// Run: go test ./agent/streamjson -run '^$' -bench BenchmarkDecode -benchtime 3s
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
	defer reportCPURate(b, len(data))()
	for b.Loop() {
		lr := NewLineReader(bytes.NewReader(data), 0)
		for {
			line, err := lr.Next()
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
	defer reportCPURate(b, len(data))()
	for b.Loop() {
		lr := NewLineReader(bytes.NewReader(data), 0)
		for {
			line, err := lr.Next()
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

// reportCPURate starts measuring the process's CPU time; the function it
// returns reports bytesPerOp × b.N per CPU second as MB/cpu-s.
func reportCPURate(b *testing.B, bytesPerOp int) func() {
	start := testkit.ProcessCPU(b)
	return func() {
		if cpu := testkit.ProcessCPU(b) - start; cpu > 0 {
			b.ReportMetric(float64(bytesPerOp)*float64(b.N)/cpu.Seconds()/1e6, "MB/cpu-s")
		}
	}
}
