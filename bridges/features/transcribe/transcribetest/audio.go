// Package transcribetest is a test kit for voice notes: real audio made
// in Go (a PCM WAV tone, an Ogg Opus stream's header pages) and a fake
// OpenAI-style transcription server that checks each request's multipart
// body before it answers.
package transcribetest

import (
	"bytes"
	"encoding/binary"
	"math"
)

// WAV returns a mono 16-bit PCM WAV file of a 440 Hz tone, ms long at
// 8 kHz: a real audio file any decoder accepts.
func WAV(ms int) []byte {
	const rate = 8000
	n := rate * ms / 1000
	var b bytes.Buffer
	le := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	le(uint32(36 + 2*n))
	b.WriteString("WAVEfmt ")
	le(uint32(16))       // fmt chunk size
	le(uint16(1))        // PCM
	le(uint16(1))        // mono
	le(uint32(rate))     // sample rate
	le(uint32(rate * 2)) // byte rate
	le(uint16(2))        // block align
	le(uint16(16))       // bits per sample
	b.WriteString("data")
	le(uint32(2 * n))
	for i := range n {
		le(int16(8000 * math.Sin(2*math.Pi*440*float64(i)/rate)))
	}
	return b.Bytes()
}

// IsWAV reports whether data starts like a RIFF WAVE file.
func IsWAV(data []byte) bool {
	return len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WAVE"
}

// OggOpus returns the two header pages of an Ogg Opus stream (OpusHead,
// OpusTags) with valid page checksums — what a WhatsApp voice note or a
// Discord voice message starts with. It carries no audio packets.
func OggOpus() []byte {
	var head bytes.Buffer
	head.WriteString("OpusHead")
	head.WriteByte(1)                                           // version
	head.WriteByte(1)                                           // channels
	_ = binary.Write(&head, binary.LittleEndian, uint16(312))   // pre-skip
	_ = binary.Write(&head, binary.LittleEndian, uint32(48000)) // input rate
	_ = binary.Write(&head, binary.LittleEndian, int16(0))      // gain
	head.WriteByte(0)                                           // mapping family
	var tags bytes.Buffer
	tags.WriteString("OpusTags")
	vendor := "agentbridge-test"
	_ = binary.Write(&tags, binary.LittleEndian, uint32(len(vendor)))
	tags.WriteString(vendor)
	_ = binary.Write(&tags, binary.LittleEndian, uint32(0))
	const serial = 0x5eed
	out := oggPage(0x02, 0, serial, 0, head.Bytes())
	return append(out, oggPage(0x00, 0, serial, 1, tags.Bytes())...)
}

// IsOggOpus reports whether data starts with an Ogg page holding OpusHead
// and the page's checksum is right.
func IsOggOpus(data []byte) bool {
	if len(data) < 27 || string(data[:4]) != "OggS" {
		return false
	}
	segs := int(data[26])
	if len(data) < 27+segs {
		return false
	}
	size := 0
	for _, s := range data[27 : 27+segs] {
		size += int(s)
	}
	end := 27 + segs + size
	if len(data) < end {
		return false
	}
	page := bytes.Clone(data[:end])
	want := binary.LittleEndian.Uint32(page[22:26])
	clear(page[22:26])
	return oggCRC(page) == want && bytes.HasPrefix(data[27+segs:], []byte("OpusHead"))
}

// oggPage builds one Ogg page (RFC 3533) holding packet whole.
func oggPage(flags byte, granule uint64, serial, seq uint32, packet []byte) []byte {
	var lacing []byte
	n := len(packet)
	for n >= 255 {
		lacing = append(lacing, 255)
		n -= 255
	}
	lacing = append(lacing, byte(n))
	var p bytes.Buffer
	p.WriteString("OggS")
	p.WriteByte(0) // version
	p.WriteByte(flags)
	_ = binary.Write(&p, binary.LittleEndian, granule)
	_ = binary.Write(&p, binary.LittleEndian, serial)
	_ = binary.Write(&p, binary.LittleEndian, seq)
	_ = binary.Write(&p, binary.LittleEndian, uint32(0)) // checksum, filled below
	p.WriteByte(byte(len(lacing)))
	p.Write(lacing)
	p.Write(packet)
	out := p.Bytes()
	binary.LittleEndian.PutUint32(out[22:26], oggCRC(out))
	return out
}

// oggCRC is Ogg's CRC-32 (polynomial 0x04c11db7, not reflected, init 0).
func oggCRC(data []byte) uint32 {
	var crc uint32
	for _, c := range data {
		crc ^= uint32(c) << 24
		for range 8 {
			if crc&0x80000000 != 0 {
				crc = crc<<1 ^ 0x04c11db7
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}
