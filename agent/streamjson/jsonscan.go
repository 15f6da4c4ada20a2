package streamjson

import (
	"bytes"
	"encoding/binary"
)

// The lexical scanners of validJSON: strings eight bytes at a time,
// numbers by JSON's grammar.

const (
	swarLo = 0x0101010101010101
	swarHi = 0x8080808080808080
)

// scanString checks the string whose content starts at b[i] and returns
// the index after its closing quote: the next quote is found with
// bytes.IndexByte, the bytes before it are checked eight at a time for a
// backslash or a control character.
func scanString(b []byte, i int) (int, bool) {
	// Short strings (most keys) byte by byte: cheaper than a call.
	for end := min(i+16, len(b)); i < end; i++ {
		if c := b[i]; c == '"' {
			return i + 1, true
		} else if c == '\\' || c < 0x20 {
			break
		}
	}
	for {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			return i, false
		}
		seg := b[i : i+q]
		k := 0
		for ; len(seg)-k >= 8; k += 8 {
			x := binary.LittleEndian.Uint64(seg[k:])
			s := x ^ (swarLo * '\\')
			if ((x-swarLo*0x20)&^x|(s-swarLo)&^s)&swarHi != 0 {
				break
			}
		}
		for ; k < len(seg); k++ {
			if c := seg[k]; c == '\\' {
				break
			} else if c < 0x20 {
				return i + k, false
			}
		}
		if k == len(seg) {
			return i + q + 1, true
		}
		j := i + k // an escape; the quote found may be an escaped one
		if j+1 >= len(b) {
			return j, false
		}
		switch b[j+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i = j + 2
		case 'u':
			if len(b)-j < 6 || !isHex(b[j+2]) || !isHex(b[j+3]) || !isHex(b[j+4]) || !isHex(b[j+5]) {
				return j, false
			}
			i = j + 6
		default:
			return j, false
		}
	}
}

// scanNumber checks the number that starts at b[i] (JSON's grammar: -?
// (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?) and returns the index
// after it.
func scanNumber(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b) || b[i] < '0' || b[i] > '9':
		return i, false
	case b[i] == '0':
		i++
	default:
		i = digits(b, i)
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return i, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return i, false
		}
		i = j
	}
	if i < len(b) && (b[i] >= '0' && b[i] <= '9' || b[i] == '.' || b[i] == 'e' || b[i] == 'E' || b[i] == '+' || b[i] == '-') {
		return i, false // "01", "1.2.3", "1e5e5": one token for Parse
	}
	return i, true
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
