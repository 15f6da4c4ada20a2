package discord

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/bridges"
)

// frame builds a server→client websocket frame (or a masked one).
func frame(opcode byte, payload []byte, masked bool) []byte {
	b := []byte{0x80 | opcode}
	mask := byte(0)
	if masked {
		mask = 0x80
	}
	switch n := len(payload); {
	case n < 126:
		b = append(b, mask|byte(n))
	case n <= 0xffff:
		b = append(b, mask|126)
		b = binary.BigEndian.AppendUint16(b, uint16(n))
	default:
		b = append(b, mask|127)
		b = binary.BigEndian.AppendUint64(b, uint64(n))
	}
	if masked {
		key := []byte{1, 2, 3, 4}
		b = append(b, key...)
		p := slices.Clone(payload)
		for i := range p {
			p[i] ^= key[i%4]
		}
		payload = p
	}
	return append(b, payload...)
}

func closePayload(code uint16, reason string) []byte {
	return append(binary.BigEndian.AppendUint16(nil, code), reason...)
}

func TestFrameParserFindsCloseCodes(t *testing.T) {
	t.Parallel()
	var stream bytes.Buffer
	stream.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
	stream.Write(frame(1, []byte(`{"op":10,"d":{"heartbeat_interval":41250}}`), false))
	stream.Write(frame(1, bytes.Repeat([]byte("x"), 300), false))    // 16-bit length
	stream.Write(frame(2, bytes.Repeat([]byte{0x88}, 70000), false)) // 64-bit length, bytes that look like close opcodes
	stream.Write(frame(9, nil, false))                               // ping, empty
	stream.Write(frame(8, closePayload(1012, "restart"), true))      // masked
	stream.Write(frame(8, nil, false))                               // close without a code
	stream.Write(frame(8, closePayload(4014, "Disallowed intent(s)."), false))
	data := stream.Bytes()
	want := []int{1012, 1005, 4014}

	chunkings := map[string]func() []int{
		"all at once": func() []int { return []int{len(data)} },
		"byte by byte": func() []int {
			s := make([]int, len(data))
			for i := range s {
				s[i] = 1
			}
			return s
		},
		"random": func() []int {
			r := rand.New(rand.NewPCG(1, 2))
			var s []int
			for left := len(data); left > 0; {
				n := min(left, 1+r.IntN(700))
				s = append(s, n)
				left -= n
			}
			return s
		},
	}
	for name, chunks := range chunkings {
		t.Run(name, func(t *testing.T) {
			var got []int
			p := frameParser{onClose: func(code int) { got = append(got, code) }}
			off := 0
			for _, n := range chunks() {
				p.feed(data[off : off+n])
				off += n
			}
			if !slices.Equal(got, want) {
				t.Errorf("close codes = %v, want %v", got, want)
			}
		})
	}
}

// Each close code Discord documents as final is a Failure that says what
// to do; the others are reconnected.
func TestCloseFailure(t *testing.T) {
	t.Parallel()
	tests := []struct {
		code   int
		want   error
		remedy string
		hint   string // a word the hint must contain
	}{
		{4004, ErrAuthentication, bridges.RemedyRestart, "Reset Token"},
		{4014, ErrDisallowedIntent, bridges.RemedyRestart, "Message Content Intent"},
		{4013, ErrGatewayFatal, bridges.RemedyUpgrade, "upgrade"},
		{4012, ErrGatewayFatal, bridges.RemedyUpgrade, "upgrade"},
		{4011, ErrGatewayFatal, bridges.RemedyRestart, "2,500 servers"},
		{4010, ErrGatewayFatal, bridges.RemedyUpgrade, "upgrade"},
	}
	for _, tc := range tests {
		f := closeFailure(tc.code)
		if f == nil {
			t.Errorf("closeFailure(%d) = nil, want a failure", tc.code)
			continue
		}
		if !errors.Is(f, tc.want) || f.Remedy != tc.remedy || !strings.Contains(f.Hint, tc.hint) ||
			!strings.Contains(f.Reason, strconv.Itoa(tc.code)) {
			t.Errorf("closeFailure(%d) = %+v, want %v, remedy %s, a hint with %q and the code in the reason", tc.code, f, tc.want, tc.remedy, tc.hint)
		}
	}
	for _, code := range []int{0, 1000, 1001, 1006, 1012, 4000, 4007, 4008, 4009} {
		if f := closeFailure(code); f != nil {
			t.Errorf("closeFailure(%d) = %v, want nil (reconnect)", code, f)
		}
	}
}
