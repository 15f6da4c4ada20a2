package commands

import (
	"strings"
	"unicode"

	"github.com/agentbridge/agentbridge/bridges"
)

// Line is a chat command as the one parser (Parse) read it.
// Who may run it is decided on these tokens, and the command acts on the
// same tokens: there is no second reading of the text that could disagree
// with the first.
type Line struct {
	Name string   // the command's name, lower case, without the prefix
	Args []string // the words after the name, split at spaces and newlines
	Text string   // the whole line after the name (for arguments with their own syntax, e.g. !schedule add's prompt)
}

// Arg returns the i-th argument word, or "".
func (l Line) Arg(i int) string {
	if i < len(l.Args) {
		return l.Args[i]
	}
	return ""
}

// After returns the text that follows the first n argument words, trimmed:
// "!schedule add \"0 9 * * *\" x" After(1) is `"0 9 * * *" x`.
func (l Line) After(n int) string {
	rest := l.Text
	for range n {
		rest = strings.TrimLeft(rest, " \n")
		i := strings.IndexAny(rest, " \n")
		if i < 0 {
			return ""
		}
		rest = rest[i:]
	}
	return strings.Trim(rest, " \n")
}

// Parsed is what a message is to the command parser.
type Parsed int

const (
	NotCommand Parsed = iota // an ordinary message (for the agent)
	OK                       // a command, tokenised
	Refused                  // a command written with characters a command may not contain
)

// CharsRefusal answers a command line that contains a character
// other than the plain space and newline that separates words differently
// for different readers (a tab, a no-break space, a zero-width space, a
// full-width space, a direction mark, …).
const CharsRefusal = "⛔ That command was not run: it contains a tab, a no-break space, a zero-width or another " +
	"invisible or unusual space character. Type the command again with plain spaces only."

// Parse is the one parser of chat commands. A message is a
// command when its first word, after the prefix "!", names a known command
// (case-insensitive). Words are separated by the plain space and the
// newline only; "\r\n" counts as a newline. A message that would name a
// command if every Unicode space counted as a space and every invisible
// formatting character (zero-width space and joiners, word joiner, BOM,
// direction marks: Unicode category Cf) were removed or read as a space,
// and that contains any such character, is refused as a whole
// (Refused): no reading of it runs anything. Everything else is an ordinary message.
func (t *Table) Parse(text string) (Line, Parsed) {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	if strings.IndexFunc(text, unusualCommandRune) >= 0 {
		for _, invisible := range []rune{-1, ' '} {
			if name, ok := t.commandName(normaliseCommand(text, invisible)); ok {
				return Line{Name: name}, Refused
			}
		}
		return Line{}, NotCommand
	}
	if _, ok := t.commandName(text); !ok {
		return Line{}, NotCommand // an empty text (a voice note, a file) included
	}
	line := strings.Trim(text, " \n")
	line = line[len(bridges.CommandPrefix):]
	word, rest := line, ""
	if i := strings.IndexAny(line, " \n"); i >= 0 {
		word, rest = line[:i], line[i:]
	}
	name, ok := t.commandName(bridges.CommandPrefix + word)
	if !ok {
		return Line{}, NotCommand // cannot happen: text has no unusual rune
	}
	return Line{Name: name, Args: strings.FieldsFunc(rest, isCommandSpace), Text: strings.Trim(rest, " \n")}, OK
}

// commandName returns the known command that text (starting with the
// prefix after optional spaces) names by its first word.
func (t *Table) commandName(text string) (string, bool) {
	w := strings.TrimLeft(text, " \n")
	if !strings.HasPrefix(w, bridges.CommandPrefix) {
		return "", false
	}
	w = w[len(bridges.CommandPrefix):]
	if i := strings.IndexAny(w, " \n"); i >= 0 {
		w = w[:i]
	}
	word := strings.ToLower(w)
	if _, ok := t.lookup(word); ok {
		return word, true
	}
	return "", false
}

// normaliseCommand is text as a lenient reader would see it: every
// Unicode space a plain space, invisible formatting characters replaced
// by invisible (-1: removed).
func normaliseCommand(text string, invisible rune) string {
	return strings.Map(func(r rune) rune {
		switch {
		case unicode.Is(unicode.Cf, r):
			return invisible
		case unicode.IsSpace(r) && r != '\n':
			return ' '
		}
		return r
	}, text)
}

// unusualCommandRune reports a character a command line may not contain:
// any Unicode space other than the space and the newline, and any
// invisible formatting character (Unicode category Cf: U+200B–U+200F,
// U+202A–U+202E, U+2060–U+2064, U+2066–U+206F, U+FEFF, U+00AD, …).
func unusualCommandRune(r rune) bool {
	return unicode.IsSpace(r) && !isCommandSpace(r) || unicode.Is(unicode.Cf, r)
}

// isCommandSpace reports the characters that separate command words.
func isCommandSpace(r rune) bool { return r == ' ' || r == '\n' }
