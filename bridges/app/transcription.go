package app

import (
	"fmt"

	"github.com/agentbridge/agentbridge/bridges/features/transcribe"
	"github.com/agentbridge/agentbridge/bridges/features/uploads"
	"github.com/agentbridge/agentbridge/config"
)

// transcriber builds the core's Transcriber from config transcription;
// nil (voice notes answered "not set up") when it is not configured.
func transcriber(t config.Transcription) (uploads.Transcriber, error) {
	if !t.Enabled() {
		return nil, nil
	}
	c, err := transcribe.New(transcribe.Options{URL: t.URL, Model: t.Model, APIKey: t.APIKey})
	if err != nil {
		return nil, fmt.Errorf("transcription: %w", err)
	}
	return c, nil
}
