package handoff

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/internal/textcut"
)

// Attach attaches a terminal to conversation conv and runs it until in
// ends (the person detaches: nil) or the bridge ends the stream (an
// error). Each line read from in is sent as the person's message, except
// that while a card is open "y" or "n" (for cards whose first choice
// allows and last denies) or a choice's number decides it. What the
// conversation shows of the agent is written to out.
//
// A goroutine reads in line by line; in a terminal it ends with the
// process, since a blocking read cannot be interrupted (Attach returns
// without waiting for it when the stream ends first).
func (c *Client) Attach(ctx context.Context, conv string, in io.Reader, out io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	resp, err := c.do(ctx, http.MethodGet, "attach", url.Values{"conversation": {conv}}, nil, http.StatusOK)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	events := make(chan Event, 64)
	readDone := make(chan error, 1)
	go func() { readDone <- readEvents(ctx, resp.Body, events) }()
	var readErr error
	stopped := false
	stopReading := func() error { // idempotent: cancel and wait for the reader
		if !stopped {
			stopped = true
			cancel()
			readErr = <-readDone
		}
		return readErr
	}
	defer stopReading()

	first, ok := <-events
	if !ok || first.Type != EventAttached {
		return errors.New("the bridge did not open the attach stream")
	}
	t := &screen{out: out}
	t.show(first)
	lines := make(chan string)
	go readLines(ctx, in, lines)
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				if err := stopReading(); err != nil && !errors.Is(err, context.Canceled) {
					return fmt.Errorf("the attach stream broke: %w", err)
				}
				return errors.New("the bridge ended the attach stream")
			}
			t.show(ev)
		case line, ok := <-lines:
			if !ok {
				t.printf("\n● detached\n")
				return nil
			}
			if err := c.input(ctx, t, first.Attach, line); err != nil {
				t.printf("! %v\n", err)
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// input acts on one line typed in the terminal.
func (c *Client) input(ctx context.Context, t *screen, attach, line string) error {
	line = strings.TrimSpace(line)
	if line == "" {
		return nil
	}
	if card, choice := t.choice(line); card != "" {
		return c.post(ctx, "decide", input{Attach: attach, Card: card, Choice: choice})
	}
	return c.post(ctx, "send", input{Attach: attach, Text: line})
}

// readLines sends each line of in to out until in ends (then closes out)
// or ctx ends.
func readLines(ctx context.Context, in io.Reader, out chan<- string) {
	defer close(out)
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		select {
		case out <- sc.Text():
		case <-ctx.Done():
			return
		}
	}
}

// readEvents reads the server-sent events of an attach stream from r into
// out until r ends or ctx does; it closes out.
func readEvents(ctx context.Context, r io.Reader, out chan<- Event) error {
	defer close(out)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 8<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue // blank separators, ": ping" comments
		}
		var ev Event
		if err := jsonUnmarshal(data, &ev); err != nil {
			return fmt.Errorf("bad event from the bridge: %w", err)
		}
		select {
		case out <- ev:
		case <-ctx.Done():
			return nil
		}
	}
	return sc.Err()
}

// screen writes a conversation to the terminal and remembers its open
// cards (newest last). Used by Attach's loop only.
type screen struct {
	out       io.Writer
	streaming bool // deltas of the current text block were printed
	cards     []Event
}

func (t *screen) printf(format string, args ...any) { fmt.Fprintf(t.out, format, args...) }

// show prints ev.
func (t *screen) show(ev Event) {
	switch ev.Type {
	case EventAttached:
		t.printf("● %s\n● type a message and press Enter; y/n or a number decides an open card; Ctrl-D detaches\n", ev.Text)
	case EventDelta:
		t.streaming = true
		t.printf("%s", ev.Text)
	case EventText:
		if !t.streaming {
			t.printf("%s", ev.Text)
		}
		t.streaming = false
		t.printf("\n")
	case EventTool:
		t.endBlock()
		t.printf("› %s\n", ev.Text)
	case EventResult:
		t.endBlock()
		t.printf("─ %s\n", ev.Text)
	case EventCard:
		t.endBlock()
		t.card(ev)
	case EventMessage:
		t.endBlock()
		t.printf("» %s: %s\n", cmp.Or(ev.From, "a scheduled run"), textcut.OneLine(ev.Text, 200))
	case EventNotice, EventLost:
		t.endBlock()
		t.printf("· %s\n", ev.Text)
	case EventPrivate, EventEnded:
		t.endBlock()
		t.printf("! %s\n", ev.Text)
	}
}

// endBlock ends a streamed text block that no whole text closed.
func (t *screen) endBlock() {
	if t.streaming {
		t.printf("\n")
		t.streaming = false
	}
}

// card prints an open card with its choices, or a card's outcome.
func (t *screen) card(ev Event) {
	for i, c := range t.cards {
		if c.Card == ev.Card {
			t.cards = append(t.cards[:i], t.cards[i+1:]...)
			break
		}
	}
	if len(ev.Buttons) == 0 {
		t.printf("┗ %s\n", textcut.OneLine(lastLine(ev.Text), 200))
		return
	}
	t.cards = append(t.cards, ev)
	t.printf("┏ %s\n┃", strings.ReplaceAll(strings.TrimSpace(ev.Text), "\n", "\n┃ "))
	for i, b := range ev.Buttons {
		t.printf(" [%d] %s%s", i+1, b.Label, yesNo(ev.Buttons, i))
	}
	t.printf("\n")
}

// yesNo is the y/n hint of button i of a card with buttons bs.
func yesNo(bs []Button, i int) string {
	switch {
	case i == 0 && yesID(bs[0].ID) && noID(bs[len(bs)-1].ID):
		return " (y)"
	case i == len(bs)-1 && yesID(bs[0].ID) && noID(bs[i].ID):
		return " (n)"
	}
	return ""
}

func yesID(id string) bool { return id == bridges.ChoiceAllow || id == bridges.ChoiceApprove }
func noID(id string) bool  { return id == bridges.ChoiceDeny || id == bridges.ChoiceReject }

// choice reads line as a decision on the newest open card: its card and
// button ids, or "" when line is not one (it is then a message).
func (t *screen) choice(line string) (card, choice string) {
	if len(t.cards) == 0 {
		return "", ""
	}
	c := t.cards[len(t.cards)-1]
	bs := c.Buttons
	yn := yesID(bs[0].ID) && noID(bs[len(bs)-1].ID)
	switch l := strings.ToLower(line); {
	case yn && (l == "y" || l == "yes"):
		return c.Card, bs[0].ID
	case yn && (l == "n" || l == "no"):
		return c.Card, bs[len(bs)-1].ID
	}
	if n, err := strconv.Atoi(line); err == nil && n >= 1 && n <= len(bs) {
		return c.Card, bs[n-1].ID
	}
	return "", ""
}

// lastLine is the last non-blank line of s: how a decided card says
// what became of it.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
