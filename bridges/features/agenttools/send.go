package agenttools

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/bridges/core/toolconv"
)

// maxUpload is the largest file send_file posts on this platform: an
// attachment up to DefaultMaxSendFileBytes (or the platform's lower
// limit), or a text snippet up to maxSnippetBytes where the platform
// cannot take files.
func (t *Server) maxUpload() int64 {
	l, ok := t.conv.UploadLimit()
	if !ok {
		return maxSnippetBytes
	}
	max := int64(DefaultMaxSendFileBytes)
	if l > 0 && l < max {
		max = l
	}
	return max
}

// sendFile posts a workdir file (see readWorkdirFile for what is refused):
// an attachment where the platform takes files, else a text snippet.
func (t *Server) sendFile(ctx context.Context, req mcp.CallToolRequest) (string, error) {
	path, err := req.RequireString("path")
	if err != nil {
		return "", fmt.Errorf("%w: path is required", toolconv.ErrRefused)
	}
	comment := strings.TrimSpace(req.GetString("comment", ""))
	name, data, err := readWorkdirFile(t.workdir, path, t.hidden, t.maxUpload())
	if err != nil {
		return "", err
	}
	if _, ok := t.conv.UploadLimit(); ok {
		if err := t.conv.Upload(ctx, bridges.Upload{Name: name, Data: data, Comment: comment}); err != nil {
			return "", err
		}
		return fmt.Sprintf("Posted %s (%s) in the conversation as an attachment.", name, render.ByteSize(int64(len(data)))), nil
	}
	if !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
		return "", fmt.Errorf("%w: this chat cannot take attachments and %s is not a text file; describe it or send a text version instead", toolconv.ErrRefused, name)
	}
	text := toolconv.CodeSnippet(name, snippetLang(name), string(data))
	if comment != "" {
		text = comment + "\n\n" + text
	}
	n, err := t.conv.PostText(ctx, text)
	if err != nil {
		return "", fmt.Errorf("post %s: %w", name, err)
	}
	return fmt.Sprintf("This chat cannot take attachments: posted %s (%s) as a text snippet in %d message(s).", name, render.ByteSize(int64(len(data))), n), nil
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
