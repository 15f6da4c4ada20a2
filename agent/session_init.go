package agent

import (
	"context"

	"github.com/agentbridge/agentbridge/agent/streamjson"
)

// Initialize sends the stream-json initialize control request and waits
// for the CLI's answer (at most Options.ControlTimeout, or until ctx ends).
// The CLI loads its commands, agents, settings and account when it answers,
// work it otherwise does on the first user message: a process initialized
// ahead of time answers its first message several times faster. It may be
// called at most once, before the first message; the Session of a warm
// spare has been initialized by the Pool already.
func (s *Session) Initialize(ctx context.Context) error {
	if s.acp != nil {
		return s.initializeACP(ctx)
	}
	_, err := s.control(ctx, "initialize", func(id string) ([]byte, error) { return streamjson.EncodeInitialize(id, "") })
	return err
}

// Prewarm asks the CLI for a summary of its context usage
// (get_context_usage with detail "summary": answered from local estimates,
// no API call, nothing written to the transcript). To answer, the CLI
// assembles its system prompt and tool definitions, part of the work it
// otherwise does on the first message. Call it after Initialize, before
// the first message; the answer itself is discarded.
func (s *Session) Prewarm(ctx context.Context) error {
	if s.acp != nil {
		return nil // an ACP agent has nothing like it
	}
	_, err := s.control(ctx, "get_context_usage", streamjson.EncodeContextUsage)
	return err
}
