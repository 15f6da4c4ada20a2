package eventqueue

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
)

// drainQueue starts q's pump after everything was pushed, closes q and
// returns every event delivered, in order.
func drainQueue(t *testing.T, q *Queue) []streamjson.Event {
	t.Helper()
	q.Close()
	done := make(chan struct{})
	go func() { defer close(done); q.Run() }()
	var got []streamjson.Event
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-q.out:
			if !ok {
				<-done
				return got
			}
			got = append(got, ev)
		case <-timeout:
			t.Fatal("event queue not drained within 10s")
		}
	}
}

// smallQueue is a queue with the given limits and a counted overflow hook.
func smallQueue(maxEvents, maxBytes int) (*Queue, *atomic.Int32, *atomic.Value) {
	q := New()
	q.maxEvents, q.maxBytes = maxEvents, maxBytes
	var calls atomic.Int32
	var lastErr atomic.Value
	q.SetOnOverflow(func(err error) {
		calls.Add(1)
		lastErr.Store(err)
	})
	return q, &calls, &lastErr
}

// TestEventQueueOrderedAndNonBlocking: pushes never block however slow the
// consumer; below the limits everything arrives unchanged and in order, then
// the channel closes.
func TestEventQueueOrderedAndNonBlocking(t *testing.T) {
	q := New()
	done := make(chan struct{})
	go func() { defer close(done); q.Run() }()
	const n = 10 * ChanBuffer
	pushed := make(chan struct{})
	go func() {
		for i := range n {
			q.Push(streamjson.TextDelta{Text: fmt.Sprint(i)}) // deltas stay separate while under the limits
		}
		q.Close()
		q.Push(streamjson.Lifecycle{UUID: "after close"}) // ignored
		close(pushed)
	}()
	select {
	case <-pushed:
	case <-time.After(10 * time.Second):
		t.Fatal("push blocked on a consumer that does not read")
	}
	i := 0
	for ev := range q.out {
		if d, ok := ev.(streamjson.TextDelta); !ok || d.Text != fmt.Sprint(i) {
			t.Fatalf("event %d = %#v, want TextDelta %d", i, ev, i)
		}
		i++
	}
	if i != n {
		t.Errorf("got %d events, want %d", i, n)
	}
	<-done
	if q.len() != 0 || q.bytes != 0 {
		t.Errorf("%d events (%d bytes) left", q.len(), q.bytes)
	}
}

// TestEventQueueLimits: what a stuck consumer finds once it reads again,
// for each stage of the policy.
func TestEventQueueLimits(t *testing.T) {
	res := streamjson.Result{Text: "done"}
	perm := streamjson.PermissionRequest{RequestID: "r1", ToolName: "Bash"}
	cases := []struct {
		name      string
		maxEvents int
		maxBytes  int
		push      []streamjson.Event
		want      []streamjson.Event
		overflow  bool
	}{
		{
			name:      "under the limits nothing changes",
			maxEvents: 10, maxBytes: 1 << 20,
			push: []streamjson.Event{streamjson.TextDelta{Text: "a"}, streamjson.TextDelta{Text: "b"}, streamjson.ThinkingDelta{Text: "t"}, res},
			want: []streamjson.Event{streamjson.TextDelta{Text: "a"}, streamjson.TextDelta{Text: "b"}, streamjson.ThinkingDelta{Text: "t"}, res},
		},
		{
			name:      "deltas of the same block are coalesced first, losing nothing",
			maxEvents: 6, maxBytes: 1 << 20,
			push: []streamjson.Event{
				streamjson.Init{SessionID: "s"},
				streamjson.TextDelta{Text: "Hel"}, streamjson.TextDelta{Text: "lo"}, streamjson.TextDelta{Text: " sub", ParentToolUseID: "t1"}, streamjson.TextDelta{Text: "agent", ParentToolUseID: "t1"},
				streamjson.ThinkingDelta{Text: "hm"}, streamjson.ThinkingDelta{Text: "m"},
				streamjson.ToolInputDelta{Index: 1, PartialJSON: `{"a"`}, streamjson.ToolInputDelta{Index: 1, PartialJSON: `:1}`}, streamjson.ToolInputDelta{Index: 2, PartialJSON: `{}`},
			},
			want: []streamjson.Event{
				streamjson.Init{SessionID: "s"},
				streamjson.TextDelta{Text: "Hello"}, streamjson.TextDelta{Text: " subagent", ParentToolUseID: "t1"},
				streamjson.ThinkingDelta{Text: "hmm"},
				streamjson.ToolInputDelta{Index: 1, PartialJSON: `{"a":1}`}, streamjson.ToolInputDelta{Index: 2, PartialJSON: `{}`},
			},
		},
		{
			name:      "then progress is dropped, announced where it was",
			maxEvents: 6, maxBytes: 1 << 20,
			push: []streamjson.Event{
				streamjson.TextDelta{Text: "x"}, streamjson.TaskProgress{TaskID: "1"}, streamjson.ToolUse{ID: "t1"}, streamjson.APIRetry{Attempt: 1}, streamjson.StatusChange{Status: "requesting"},
				perm, streamjson.ThinkingDelta{Text: "a"}, streamjson.Lifecycle{UUID: "u", State: streamjson.LifecycleCompleted}, streamjson.Unknown{Type: "x"}, res,
			},
			want: []streamjson.Event{
				streamjson.TextDelta{Text: "x"}, streamjson.EventsDropped{Count: 5}, streamjson.ToolUse{ID: "t1"}, perm, streamjson.Lifecycle{UUID: "u", State: streamjson.LifecycleCompleted}, res,
			},
		},
		{
			name:      "a later shed adds to the marker still queued",
			maxEvents: 3, maxBytes: 1 << 20,
			push: []streamjson.Event{
				streamjson.ToolUse{ID: "t1"}, streamjson.TaskProgress{}, streamjson.TaskProgress{}, streamjson.TaskProgress{}, // shed: 3
				res, streamjson.TaskUpdated{}, streamjson.BackgroundTasks{}, // shed: 2 more
			},
			want: []streamjson.Event{streamjson.ToolUse{ID: "t1"}, streamjson.EventsDropped{Count: 5}, res},
		},
		{
			name:      "still over: overflow, then only essentials",
			maxEvents: 4, maxBytes: 1 << 20,
			push: []streamjson.Event{
				streamjson.ToolUse{ID: "t1"}, streamjson.ToolResult{ToolUseID: "t1"}, streamjson.AssistantText{Text: "a"}, streamjson.TaskProgress{}, streamjson.ToolUse{ID: "t2"},
				streamjson.AssistantText{Text: "lost"}, streamjson.TextDelta{Text: "lost"}, streamjson.ToolUse{ID: "lost"}, streamjson.Notice{Text: "lost"},
				perm, streamjson.PermissionCancelled{RequestID: "r1"}, streamjson.Lifecycle{UUID: "u", State: streamjson.LifecycleStarted}, res, streamjson.Exit{Code: -1},
			},
			want: []streamjson.Event{
				streamjson.ToolUse{ID: "t1"}, streamjson.ToolResult{ToolUseID: "t1"}, streamjson.AssistantText{Text: "a"}, streamjson.EventsDropped{Count: 1}, streamjson.ToolUse{ID: "t2"},
				streamjson.EventsDropped{Overflow: true},
				perm, streamjson.PermissionCancelled{RequestID: "r1"}, streamjson.Lifecycle{UUID: "u", State: streamjson.LifecycleStarted}, res, streamjson.Exit{Code: -1},
			},
			overflow: true,
		},
		{
			name:      "one event over the byte limit alone is kept",
			maxEvents: 10, maxBytes: 100,
			push: []streamjson.Event{streamjson.ToolResult{ToolUseID: "big", Content: strings.Repeat("x", 1000)}},
			want: []streamjson.Event{streamjson.ToolResult{ToolUseID: "big", Content: strings.Repeat("x", 1000)}},
		},
		{
			name:      "bytes count like events",
			maxEvents: 10, maxBytes: 1000,
			push: []streamjson.Event{
				streamjson.ToolResult{ToolUseID: "a", Content: strings.Repeat("x", 600)}, streamjson.Unknown{Raw: make([]byte, 300)},
				streamjson.ToolResult{ToolUseID: "b", Content: strings.Repeat("y", 600)}, res,
			},
			want: []streamjson.Event{
				streamjson.ToolResult{ToolUseID: "a", Content: strings.Repeat("x", 600)}, streamjson.EventsDropped{Count: 1},
				streamjson.ToolResult{ToolUseID: "b", Content: strings.Repeat("y", 600)}, streamjson.EventsDropped{Overflow: true}, res,
			},
			overflow: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q, calls, lastErr := smallQueue(tc.maxEvents, tc.maxBytes)
			for _, ev := range tc.push {
				q.Push(ev)
			}
			got := drainQueue(t, q)
			for i := range got { // the overflow error is checked below
				if d, ok := got[i].(streamjson.EventsDropped); ok && d.Overflow {
					if d.Err == nil || !strings.Contains(d.Err.Error(), "agent event queue overflow") {
						t.Errorf("overflow marker error = %v", d.Err)
					}
					d.Err = nil
					got[i] = d
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("delivered:\n%s\nwant:\n%s", fmtEvents(got), fmtEvents(tc.want))
			}
			wantCalls := int32(0)
			if tc.overflow {
				wantCalls = 1
				if err, _ := lastErr.Load().(error); err == nil || !strings.Contains(err.Error(), "consumer fell behind") {
					t.Errorf("overflow hook error = %v", err)
				}
			}
			if n := calls.Load(); n != wantCalls {
				t.Errorf("overflow hook called %d times, want %d", n, wantCalls)
			}
		})
	}
}

func fmtEvents(evs []streamjson.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		s := fmt.Sprintf("%#v", ev)
		if len(s) > 120 {
			s = s[:120] + "…"
		}
		fmt.Fprintf(&b, "  %s\n", s)
	}
	return b.String()
}

// TestEventQueueNeverLosesEssentials pushes long random streams into small
// queues nobody reads: every Result, permission request, cancellation,
// lifecycle receipt and the Exit arrive, in order; every dropped event is
// accounted for by a marker; text deltas are only ever lost after an
// overflow; memory stays within the limits plus the essentials.
func TestEventQueueNeverLosesEssentials(t *testing.T) {
	kinds := []func(i int) streamjson.Event{
		func(i int) streamjson.Event { return streamjson.TextDelta{Text: fmt.Sprint(i, " ")} },
		func(i int) streamjson.Event { return streamjson.ThinkingDelta{Text: "t"} },
		func(i int) streamjson.Event { return streamjson.ToolInputDelta{Index: i % 3, PartialJSON: "{"} },
		func(i int) streamjson.Event { return streamjson.TaskProgress{TaskID: fmt.Sprint(i)} },
		func(i int) streamjson.Event { return streamjson.StatusChange{Status: "requesting"} },
		func(i int) streamjson.Event { return streamjson.ToolUse{ID: fmt.Sprint(i)} },
		func(i int) streamjson.Event {
			return streamjson.ToolResult{ToolUseID: fmt.Sprint(i), Content: strings.Repeat("r", i%500)}
		},
		func(i int) streamjson.Event { return streamjson.PermissionRequest{RequestID: fmt.Sprint(i)} },
		func(i int) streamjson.Event { return streamjson.PermissionCancelled{RequestID: fmt.Sprint(i)} },
		func(i int) streamjson.Event {
			return streamjson.Lifecycle{UUID: fmt.Sprint(i), State: streamjson.LifecycleStarted}
		},
		func(i int) streamjson.Event { return streamjson.Result{UUID: fmt.Sprint(i)} },
	}
	for seed := range uint64(20) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 42))
			maxEvents := 5 + r.IntN(50)
			q, calls, _ := smallQueue(maxEvents, 2000+r.IntN(20000))
			var essentials []streamjson.Event
			text := ""
			peak := 0
			for i := range 2000 {
				ev := kinds[r.IntN(len(kinds))](i)
				if essential(ev) {
					essentials = append(essentials, ev)
				}
				if d, ok := ev.(streamjson.TextDelta); ok {
					text += d.Text
				}
				q.Push(ev)
				if !q.overflowed {
					peak = max(peak, q.len())
				}
			}
			q.Push(streamjson.Exit{Code: 1})
			essentials = append(essentials, streamjson.Exit{Code: 1})
			if peak > maxEvents {
				t.Errorf("queue held %d events before overflowing, limit %d", peak, maxEvents)
			}
			got := drainQueue(t, q)
			var gotEssentials []streamjson.Event
			gotText, dropped, overflowed := "", 0, false
			for _, ev := range got {
				switch e := ev.(type) {
				case streamjson.EventsDropped:
					dropped += e.Count
					overflowed = overflowed || e.Overflow
				case streamjson.TextDelta:
					gotText += e.Text
				}
				if essential(ev) {
					gotEssentials = append(gotEssentials, ev)
				}
			}
			if !reflect.DeepEqual(gotEssentials, essentials) {
				t.Fatalf("essential events: got %d, want %d (in order)", len(gotEssentials), len(essentials))
			}
			if !overflowed && gotText != text {
				t.Errorf("text deltas lost without an overflow")
			}
			if overflowed != (calls.Load() == 1) || calls.Load() > 1 {
				t.Errorf("overflow marker %v, hook called %d times", overflowed, calls.Load())
			}
			if !overflowed && dropped != q.dropped {
				t.Errorf("markers account for %d dropped events, the queue dropped %d", dropped, q.dropped)
			}
		})
	}
}

// len reports how many events wait to be delivered.
func (q *Queue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}
