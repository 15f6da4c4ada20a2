package bridgetest

import (
	"context"
	"slices"
	"strconv"

	"github.com/agentbridge/agentbridge/bridges"
)

var (
	_ bridges.FileUploader  = (*Platform)(nil)
	_ bridges.ThreadStarter = (*Platform)(nil)
)

// UploadFile implements bridges.FileUploader: the file becomes a message of
// key whose Text is the comment and whose File is a copy of f. It fails
// like Post (FailPosts) and refuses files over Limits.MaxUploadBytes.
func (p *Platform) UploadFile(ctx context.Context, key bridges.ConversationKey, f bridges.Upload) (bridges.MessageRef, error) {
	p.mu.Lock()
	fail, max := p.failPost, p.limits.MaxUploadBytes
	p.mu.Unlock()
	if fail != nil {
		if err := fail(key, bridges.Message{Text: f.Comment}); err != nil {
			return bridges.MessageRef{}, err
		}
	}
	if max > 0 && int64(len(f.Data)) > max {
		return bridges.MessageRef{}, errTooLarge(len(f.Data), max)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.nextID++
	ref := bridges.MessageRef{Key: key, ID: "m" + strconv.Itoa(p.nextID)}
	up := f
	up.Data = slices.Clone(f.Data)
	msg := &Msg{Ref: ref, Key: key, Text: f.Comment, History: []string{f.Comment}, Posted: p.clock(), File: &up}
	p.msgs = append(p.msgs, msg)
	p.byID[ref.ID] = msg
	p.calls = append(p.calls, Call{Op: "post", Key: key, At: p.clock()})
	p.notifyLocked()
	if p.observe != nil {
		p.observe(p.calls[len(p.calls)-1], *msg)
	}
	return ref, nil
}

// StartThread implements bridges.ThreadStarter: it posts m in the channel
// at in and returns the thread key {Bot, Channel, Thread: the post's id}.
func (p *Platform) StartThread(ctx context.Context, in bridges.ConversationKey, m bridges.Message) (bridges.ConversationKey, bridges.MessageRef, error) {
	in.Thread = ""
	ref, err := p.Post(ctx, in, m)
	if err != nil {
		return in, ref, err
	}
	return bridges.ConversationKey{Bot: in.Bot, Channel: in.Channel, Thread: ref.ID}, ref, nil
}

type tooLargeError struct {
	size int
	max  int64
}

func (e tooLargeError) Error() string {
	return "bridgetest: file of " + strconv.Itoa(e.size) + " bytes over the upload limit of " + strconv.FormatInt(e.max, 10)
}

func errTooLarge(size int, max int64) error { return tooLargeError{size, max} }
