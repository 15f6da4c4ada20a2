package delivery

import (
	"context"
	"fmt"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
)

// CanEdit reports whether the message at ref can still be edited on p: p is
// an Editor and, when lim.EditMaxAge is set, the message was posted less
// than EditMaxAge before now (a ref without a posting time is too old).
func CanEdit(p bridges.Platform, lim bridges.Limits, ref bridges.MessageRef, now time.Time) bool {
	if _, ok := p.(bridges.Editor); !ok {
		return false
	}
	if lim.EditMaxAge <= 0 {
		return true
	}
	return !ref.At.IsZero() && now.Sub(ref.At) < lim.EditMaxAge
}

// EditOrPost shows m in place of the message at ref when the platform can
// still edit it; otherwise it posts instead as a new message in ref's
// conversation (to quote the old message, set instead.ReplyTo). It returns the ref
// of the message that now shows the content (ref itself after an edit, the
// new message after a post, stamped with now).
func EditOrPost(ctx context.Context, p bridges.Platform, lim bridges.Limits, now time.Time, ref bridges.MessageRef, m, instead bridges.Message) (bridges.MessageRef, error) {
	if CanEdit(p, lim, ref, now) {
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
