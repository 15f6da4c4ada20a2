package discord

import (
	"context"
	"errors"
	"net/http"

	"github.com/bwmarrin/discordgo"

	"github.com/agentbridge/agentbridge/bridges"
)

// isPermanent reports whether an error of Post, Edit or UploadFile is one
// no retry can fix: a message Discord cannot show (ErrBadMessage,
// ErrTooLarge) or a REST answer 4xx other than 408 and 429 — 401 (token
// revoked), 403 with 50001 Missing Access or 50013 Missing Permissions
// (the bot was removed or lost its rights), 404 with 10003 Unknown
// Channel or 10008 Unknown Message, 400 with 50035 Invalid Form Body or
// 50006 Cannot send an empty message. Network errors, timeouts, 5xx
// (discordgo retries a 502 three times first) and 429 are transient.
func isPermanent(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if errors.Is(err, ErrBadMessage) || errors.Is(err, ErrTooLarge) || errors.Is(err, discordgo.ErrUnauthorized) {
		return true
	}
	re, ok := errors.AsType[*discordgo.RESTError](err)
	if !ok || re.Response == nil {
		return false
	}
	code := re.Response.StatusCode
	return code >= 400 && code < 500 && code != http.StatusRequestTimeout && code != http.StatusTooManyRequests
}

// classify marks err with bridges.Permanent when no retry can fix it.
func classify(err error) error {
	if isPermanent(err) {
		return bridges.Permanent(err)
	}
	return err
}
