package agent

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
)

// readLoop reads and decodes stdout until EOF (or until waitLoop closes
// the pipe), updating the session state and queueing events.
func (s *Session) readLoop() {
	if s.acp != nil {
		s.readACP()
		return
	}
	var dec streamjson.Decoder
	s.readLines(func(line []byte) {
		for _, ev := range dec.Decode(line) {
			s.handle(ev)
		}
	})
}

// readLines hands each line of stdout to each until EOF (or until
// waitLoop closes the pipe); a line over Options.MaxLineBytes is skipped
// and reported as a DecodeError.
func (s *Session) readLines(each func(line []byte)) {
	lr := streamjson.NewLineReader(s.stdout, s.opts.MaxLineBytes)
	for {
		line, err := lr.Next()
		if err != nil {
			var tl *streamjson.LineTooLongError
			if errors.As(err, &tl) {
				s.log.Warn("agent stdout line over the cap skipped", "bytes", tl.Size, "max", tl.Max)
				s.handle(streamjson.DecodeError{Line: tl.Start, Err: err})
				continue
			}
			if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) {
				s.log.Warn("agent stdout read failed", "err", err)
			}
			return
		}
		each(line)
	}
}

// handle applies one decoded event to the session state, answers what the
// session answers itself (hook callbacks, unsupported control requests,
// control responses to its own requests), and queues the event.
func (s *Session) handle(ev streamjson.Event) {
	var (
		reply   []byte
		forward = true
		lost    streamjson.ResultsLost
	)
	switch ev.(type) {
	case streamjson.Init, streamjson.ControlResponse: // it has booted: it is working on a turn or a request
		s.bootedOnce.Do(func() { close(s.booted) })
	}
	s.mu.Lock()
	wasBusy := s.st.busy()
	s.st.observe(ev)
	switch e := ev.(type) {
	case streamjson.ControlResponse:
		forward = false
		if ch, ok := s.controls[e.RequestID]; ok {
			delete(s.controls, e.RequestID)
			ch <- e // buffered, one answer per request
		} else {
			s.log.Debug("agent control response nobody waits for: dropped", "request", e.RequestID, "subtype", e.Subtype)
		}
	case streamjson.MCPMessage:
		forward = false
		s.serveMCP(e)
	case streamjson.HookCallback:
		// No hooks are registered by this package; if one fires anyway,
		// "continue normally" is the answer that cannot hang the turn.
		reply, _ = streamjson.EncodeControlSuccess(e.RequestID, struct{}{})
	case streamjson.Unknown:
		if e.Type == "system" && e.Subtype == "session_writes_lost" {
			// The CLI could not write its transcript (e.g. a full data_dir):
			// a later --resume may miss part of the conversation.
			s.log.Warn("agent could not save part of its session transcript (disk full?); resuming it later may miss part of the conversation")
		}
		s.log.Debug("agent output of unknown kind ignored", "type", e.Type, "subtype", e.Subtype, "bytes", len(e.Raw))
		if e.Type == "control_request" {
			if id := streamjson.ControlRequestID(e.Raw); id != "" {
				reply, _ = streamjson.EncodeControlError(id, "unsupported control request subtype "+e.Subtype)
			}
		}
	case streamjson.DecodeError:
		s.log.Warn("agent output undecodable", "err", e.Err, "start", redactSecrets(string(e.Line[:min(len(e.Line), 80)])))
		if e.ControlRequestID != "" {
			// A request the CLI waits on: refuse it rather than never answer.
			reply, _ = streamjson.EncodeControlError(e.ControlRequestID, "undecodable control request: "+e.Err.Error())
		}
	case streamjson.Result:
		s.log.Debug("agent result", "subtype", e.Subtype, "is_error", e.IsError, "origin", e.Origin, "cost_usd", e.CostUSD,
			"result_index", e.Index, "user_msg_uuid", e.UserMessageUUID)
		if lost = s.st.numberResult(e); lost.Count > 0 {
			s.log.Warn("agent results lost: the numbering of the results has a gap", "first_lost", lost.First, "lost", lost.Count,
				"result_index", e.Index)
		}
	}
	nowBusy := s.st.busy()
	s.mu.Unlock()

	if lost.Count > 0 {
		s.events.Push(lost) // before the result that showed the gap
	}
	if forward {
		s.events.Push(ev)
	}
	if reply != nil {
		s.wg.Add(1)
		go func() { // never block the reader on stdin
			defer s.wg.Done()
			if err := s.write(context.Background(), reply); err != nil {
				s.log.Warn("agent automatic control reply failed", "err", err)
			}
		}()
	}
	if wasBusy != nowBusy {
		s.changed()
	}
}

// waitLoop waits for the process to exit, lets the reader finish, cleans
// up and emits the final Exit event.
func (s *Session) waitLoop(readerDone <-chan struct{}) {
	waitErr := s.cmd.Wait()
	close(s.exited)
	_ = killGroup(s.cmd) // children left behind by a crash
	select {
	case <-readerDone:
	case <-time.After(stdoutDrainGrace):
		s.log.Warn("agent stdout still open after exit: closing it", "grace", stdoutDrainGrace)
		_ = s.stdout.Close()
		<-readerDone
	}
	_ = s.stdout.Close()
	s.kill() // releases the command's context

	if s.acp != nil {
		s.acp.Close()
	}
	s.toolSocks.Close()
	s.mu.Lock()
	reason := s.reason
	s.st.exit()
	s.mu.Unlock()

	exit := streamjson.Exit{Code: s.cmd.ProcessState.ExitCode(), Err: waitErr, StderrTail: s.stderr.String(), Expected: reason != "", Reason: reason}
	exit.Limit = s.exitLimit(exit.Expected)
	if !exit.Expected {
		exit.Reason = "crashed"
		if exit.Code == 0 {
			exit.Reason = "exited"
		}
	}
	level := slog.LevelInfo
	if !exit.Expected {
		level = slog.LevelWarn
	}
	s.log.Log(context.Background(), level, "agent exited", "code", exit.Code, "err", waitErr, "expected", exit.Expected,
		"reason", exit.Reason, "limit", exit.Limit, "stderr_tail", exit.StderrTail)
	s.egress.close()
	if s.tmpDir != "" {
		if err := os.RemoveAll(s.tmpDir); err != nil {
			s.log.Warn("agent TMPDIR not removed", "dir", s.tmpDir, "err", err)
		}
	}
	s.events.Push(exit)
	s.events.Close()
	close(s.done)
	s.changed()
}
