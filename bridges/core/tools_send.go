package core

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/agentbridge/agentbridge/bridges"
)

// maxUpload is the largest file send_file posts on this platform: an
// attachment up to DefaultMaxSendFileBytes (or the platform's lower
// limit), or a text snippet up to maxSnippetBytes where the platform
// cannot take files.
func (t *agentTools) maxUpload() int64 {
	if _, ok := t.platform.(bridges.FileUploader); !ok {
		return maxSnippetBytes
	}
	max := int64(DefaultMaxSendFileBytes)
	if l := t.limits.MaxUploadBytes; l > 0 && l < max {
		max = l
	}
	return max
}

// sendFile posts a workdir file (see readWorkdirFile for what is refused):
// an attachment through the platform's FileUploader, else a text snippet.
func (t *agentTools) sendFile(ctx context.Context, req mcp.CallToolRequest) (string, error) {
	path, err := req.RequireString("path")
	if err != nil {
		return "", fmt.Errorf("%w: path is required", errToolRefused)
	}
	comment := strings.TrimSpace(req.GetString("comment", ""))
	name, data, err := readWorkdirFile(t.workdir, path, t.hidden, t.maxUpload())
	if err != nil {
		return "", err
	}
	if up, ok := t.platform.(bridges.FileUploader); ok {
		t.budget.take(t.core.clock.Now(), t.limits.EditInterval, true)
		if _, err := up.UploadFile(ctx, t.key, bridges.Upload{Name: name, Data: data, Comment: comment}); err != nil {
			return "", fmt.Errorf("upload %s: %w", name, err)
		}
		return fmt.Sprintf("Posted %s (%s) in the conversation as an attachment.", name, byteSize(int64(len(data)))), nil
	}
	if !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
		return "", fmt.Errorf("%w: this chat cannot take attachments and %s is not a text file; describe it or send a text version instead", errToolRefused, name)
	}
	text := "📄 " + codeSpan(name) + "\n" + codeBlock(snippetLang(name), string(data))
	if comment != "" {
		text = comment + "\n\n" + text
	}
	parts := chunks(text, t.maxRunes())
	for i, c := range parts {
		if _, err := t.post(ctx, bridges.Message{Text: c}); err != nil {
			return "", fmt.Errorf("post part %d of %d of %s: %w", i+1, len(parts), name, err)
		}
	}
	return fmt.Sprintf("This chat cannot take attachments: posted %s (%s) as a text snippet in %d message(s).", name, byteSize(int64(len(data))), len(parts)), nil
}

// snippetLang is the code block language for a file name: its extension
// when it is a plain word (go, py, json, …).
func snippetLang(name string) string {
	ext := strings.TrimPrefix(filepath.Ext(name), ".")
	for _, r := range ext {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return ""
		}
	}
	if len(ext) > 10 {
		return ""
	}
	return ext
}
