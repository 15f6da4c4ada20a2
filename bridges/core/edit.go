package core

import (
	"context"
	"fmt"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
)

// canEdit reports whether the message at ref can still be edited on p: p is
// an Editor and, when lim.EditMaxAge is set, the message was posted less
// than EditMaxAge before now (a ref without a posting time is too old).
func canEdit(p bridges.Platform, lim bridges.Limits, ref bridges.MessageRef, now time.Time) bool {
	if _, ok := p.(bridges.Editor); !ok {
		return false
	}
	if lim.EditMaxAge <= 0 {
		return true
	}
	return !ref.At.IsZero() && now.Sub(ref.At) < lim.EditMaxAge
}

// editOrPost shows m in place of the message at ref when the platform can
// still edit it; otherwise it posts instead as a new message in ref's
// conversation (to quote the old message, set instead.ReplyTo). It returns the ref
// of the message that now shows the content (ref itself after an edit, the
// new message after a post, stamped with now).
func editOrPost(ctx context.Context, p bridges.Platform, lim bridges.Limits, now time.Time, ref bridges.MessageRef, m, instead bridges.Message) (bridges.MessageRef, error) {
	if canEdit(p, lim, ref, now) {
		if err := p.(bridges.Editor).Edit(ctx, ref, m); err != nil {
			return ref, fmt.Errorf("edit message %s: %w", ref.ID, err)
		}
		return ref, nil
	}
	posted, err := p.Post(ctx, ref.Key, instead)
	if err != nil {
		return ref, fmt.Errorf("post instead of editing message %s: %w", ref.ID, err)
	}
	posted.At = now
	return posted, nil
}

// post posts m into the conversation and stamps the ref with the core's
// clock (for Limits.EditMaxAge).
func (cv *conversation) post(ctx context.Context, m bridges.Message) (bridges.MessageRef, error) {
	ref, err := cv.platform.Post(ctx, cv.key, m)
	if err != nil {
		return ref, err
	}
	ref.At = cv.core.clock.Now()
	return ref, nil
}

// editOrPost is editOrPost for this conversation's platform and clock.
func (cv *conversation) editOrPost(ctx context.Context, ref bridges.MessageRef, m, instead bridges.Message) (bridges.MessageRef, error) {
	return editOrPost(ctx, cv.platform, cv.limits, cv.core.clock.Now(), ref, m, instead)
}
