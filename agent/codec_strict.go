package agent

import (
	"bytes"
	"encoding/binary"
)

// strictLexemes reports whether the strings and numbers of line are valid
// JSON. It completes fastjson.Parser, which checks a line's structure but
// is lenient with what it does not need to read: it accepts control
// characters and unknown escapes in strings, numbers such as "01", "1.",
// "+1" or "1e", and NaN / Inf. A line that Parse accepts and strictLexemes
// accepts is what encoding/json.Valid accepts (FuzzStrictValidation).
// Strings are scanned with bytes.IndexByte and eight bytes at a time.
func strictLexemes(b []byte) bool {
	for i := 0; i < len(b); {
		switch c := b[i]; {
		case c == '"':
			j, ok := scanString(b, i+1)
			if !ok {
				return false
			}
			i = j
		case c == '-' || c >= '0' && c <= '9':
			j, ok := scanNumber(b, i)
			if !ok {
				return false
			}
			i = j
		case c == 't': // Parse read "true"
			i += 4
		case c == 'f': // "false"
			i += 5
		case c == 'n': // "null", or a NaN Parse let through
			if len(b)-i < 4 || string(b[i:i+4]) != "null" {
				return false
			}
			i += 4
		case c == '{' || c == '}' || c == '[' || c == ']' || c == ':' || c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		default: // NaN, Inf, +1
			return false
		}
	}
	return true
}

const (
	swarLo = 0x0101010101010101
	swarHi = 0x8080808080808080
)

// scanString checks the string whose content starts at b[i] and returns
// the index after its closing quote: the next quote is found with
// bytes.IndexByte, the bytes before it are checked eight at a time for a
// backslash or a control character.
func scanString(b []byte, i int) (int, bool) {
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
