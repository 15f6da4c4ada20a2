package handoff

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// Client is the terminal side of the hand-off: `bridge attach`, `bridge
// export` and `bridge import` talk to a running bridge's Server with it.
type Client struct {
	Base  string       // the bridge's HTTP address, e.g. http://127.0.0.1:9464
	Token string       // the person's handoff token
	HTTP  *http.Client // default http.DefaultClient
}

// do sends a request to path (below Prefix) and returns the response
// when its status is want; otherwise an error with the server's message.
func (c *Client) do(ctx context.Context, method, path string, q url.Values, body io.Reader, want int) (*http.Response, error) {
	u := strings.TrimRight(c.Base, "/") + Prefix + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reach the bridge at %s: %w", c.Base, err)
	}
	if resp.StatusCode != want {
		defer resp.Body.Close()
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		if resp.StatusCode == http.StatusNotFound && !bytes.Contains(msg, []byte(" ")) {
			msg = []byte("the bridge at " + c.Base + " has no terminal hand-off (an older version?)")
		}
		return nil, fmt.Errorf("refused (%d): %s", resp.StatusCode, strings.TrimSpace(string(msg)))
	}
	return resp, nil
}

// post sends in as JSON to path and expects 202.
func (c *Client) post(ctx context.Context, path string, in input) error {
	b, _ := json.Marshal(in) // strings only: cannot fail
	resp, err := c.do(ctx, http.MethodPost, path, nil, bytes.NewReader(b), http.StatusAccepted)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

// Export fetches conversation conv's session transcript and writes it
// where `claude --resume ID` run in dir finds it: under configDir (the
// CLI's config dir: CLAUDE_CONFIG_DIR, or ~/.claude). It returns the
// session id and the file written. An existing file is replaced. The
// transcript is written as normalizeTranscript leaves it, whatever the
// bridge sent.
func (c *Client) Export(ctx context.Context, conv, dir, configDir string) (id, path string, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", "", fmt.Errorf("export: %w", err)
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return "", "", fmt.Errorf("export: %s is not a directory", dir)
	}
	resp, err := c.do(ctx, http.MethodGet, "export", url.Values{"conversation": {conv}}, nil, http.StatusOK)
	if err != nil {
		return "", "", err
	}
	defer resp.Body.Close()
	id = resp.Header.Get("X-Handoff-Session")
	if !validSessionID(id) {
		return "", "", fmt.Errorf("export: the bridge sent a bad session id %q", id)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxTranscript+1))
	if err != nil || len(b) > MaxTranscript {
		return "", "", fmt.Errorf("export: read the transcript: %v", cmpErr(err, "too large"))
	}
	b, _ = normalizeTranscript(b) // the bridge did; an older bridge may not have
	path = TranscriptPath(configDir, abs, id)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", "", fmt.Errorf("export: %w", err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return "", "", fmt.Errorf("export: %w", err)
	}
	return id, path, nil
}

// Import sends the session transcript in file (named <session id>.jsonl,
// as the CLI names them) to the bridge, which continues it in a new
// conversation of bot in channel.
func (c *Client) Import(ctx context.Context, bot, channel, file string) (Imported, error) {
	id := sessionOfFile(file)
	if id == "" {
		return Imported{}, fmt.Errorf("import: %s is not named <session id>.jsonl (a file under ~/.claude/projects/…)", file)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return Imported{}, fmt.Errorf("import: %w", err)
	}
	q := url.Values{"bot": {bot}, "channel": {channel}, "session": {id}}
	resp, err := c.do(ctx, http.MethodPost, "import", q, bytes.NewReader(b), http.StatusOK)
	if err != nil {
		return Imported{}, err
	}
	defer resp.Body.Close()
	var out Imported
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return Imported{}, fmt.Errorf("import: read the answer: %w", err)
	}
	return out, nil
}

// cmpErr is err, or an error saying what when err is nil.
func cmpErr(err error, what string) error {
	if err == nil {
		return errors.New(what)
	}
	return err
}

// jsonUnmarshal decodes one event.
func jsonUnmarshal(data string, ev *Event) error { return json.Unmarshal([]byte(data), ev) }
