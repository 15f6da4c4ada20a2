package slackfake

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

// maxTextRunes is Slack's hard cap for a message's text.
const maxTextRunes = 40000

// Inject429 makes the next n calls of a Web API method (e.g.
// "chat.postMessage") answer HTTP 429 with Retry-After: 1.
func (s *Server) Inject429(method string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rateLimited[method] = n
}

// FailMethod makes the next n calls of a Web API method answer
// {"ok":false,"error":code}; n < 0 fails every call, n == 0 stops failing.
func (s *Server) FailMethod(method, code string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n == 0 {
		delete(s.failures, method)
		return
	}
	s.failures[method] = failure{code: code, n: n}
}

// SetOutage makes every call of the given Web API methods answer HTTP
// status (e.g. 503, as in a Slack incident) with no effect, until
// SetOutage(0) ends the outage of every method. The calls are recorded.
func (s *Server) SetOutage(status int, methods ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if status == 0 {
		clear(s.outage)
		return
	}
	for _, m := range methods {
		s.outage[m] = status
	}
}

// MissingScope makes the next n calls of a Web API method answer
// missing_scope with Slack's scope diagnostics: needed is the scope the
// call requires (e.g. "connections:write"); n as in FailMethod.
func (s *Server) MissingScope(method, needed string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n == 0 {
		delete(s.failures, method)
		return
	}
	s.failures[method] = failure{code: "missing_scope", needed: needed, n: n}
}

// User is a workspace member as users.info reports it.
type User struct {
	ID          string
	Name        string // handle
	RealName    string
	DisplayName string
}

// AddUser registers a user for users.info. Unknown ids get a generated
// user named after the id.
func (s *Server) AddUser(u User) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users[u.ID] = u
}

// File is an uploaded file that messages can carry (Msg.Files).
type File struct {
	ID                 string
	Name               string
	Mimetype           string
	Size               int
	URLPrivate         string
	URLPrivateDownload string
}

type storedFile struct {
	File
	content []byte
}

func (f File) event() map[string]any {
	return map[string]any{
		"id":                   f.ID,
		"name":                 f.Name,
		"title":                f.Name,
		"mimetype":             f.Mimetype,
		"filetype":             strings.TrimPrefix(strings.ToLower(f.Name[strings.LastIndexByte(f.Name, '.')+1:]), "."),
		"size":                 f.Size,
		"mode":                 "hosted",
		"url_private":          f.URLPrivate,
		"url_private_download": f.URLPrivateDownload,
	}
}

// AddFile stores a file; its download URLs need the bot token as a
// Bearer token, like files.slack.com.
func (s *Server) AddFile(name, mimetype string, content []byte) File {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.nextID("F")
	u := s.http.URL + "/files/" + id + "/" + url.PathEscape(name)
	f := &storedFile{File: File{
		ID: id, Name: name, Mimetype: mimetype, Size: len(content),
		URLPrivate: u, URLPrivateDownload: u + "?download=1",
	}, content: append([]byte(nil), content...)}
	s.files[id] = f
	return f.File
}

// FileDownloads counts successful file downloads.
func (s *Server) FileDownloads() int { return s.CallCount("files.download") }

// serveFile serves /files/{id}/{name} to the bot token only.
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request) {
	token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	s.mu.Lock()
	f, ok := s.files[r.PathValue("id")]
	status := http.StatusOK
	switch {
	case token != BotToken, s.lacksScopeLocked("files.download", "") != "":
		status = http.StatusForbidden
	case !ok:
		status = http.StatusNotFound
	}
	s.calls = append(s.calls, Call{Method: "files.download", Params: url.Values{"id": {r.PathValue("id")}}, Status: status, At: time.Now()})
	s.notify()
	s.mu.Unlock()
	if status != http.StatusOK {
		http.Error(w, http.StatusText(status), status)
		return
	}
	w.Header().Set("Content-Type", f.Mimetype)
	w.Header().Set("Content-Length", fmt.Sprint(len(f.content)))
	_, _ = w.Write(f.content)
}

// apiResult is the answer to one Web API call.
type apiResult struct {
	status int
	body   map[string]any
	after  func() // runs under s.mu after the call is recorded (echo events)
}

func ok(fields map[string]any) apiResult {
	body := map[string]any{"ok": true}
	for k, v := range fields {
		body[k] = v
	}
	return apiResult{status: http.StatusOK, body: body}
}

func fail(code string) apiResult {
	return apiResult{status: http.StatusOK, body: map[string]any{"ok": false, "error": code}}
}

// serveAPI answers /api/{method}.
func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	method := r.PathValue("method")
	params, token, err := readParams(r)
	var res apiResult
	s.mu.Lock()
	switch {
	case err != nil:
		res = fail("invalid_form_data")
	case s.outage[method] != 0:
		res = apiResult{status: s.outage[method], body: map[string]any{"ok": false, "error": "service_unavailable"}}
	case method == "apps.connections.open" && s.takeRefusal(&s.refuseOpen):
		res = apiResult{status: http.StatusServiceUnavailable, body: map[string]any{"ok": false, "error": "service_unavailable"}}
	case s.rateLimited[method] > 0:
		s.rateLimited[method]--
		res = apiResult{status: http.StatusTooManyRequests, body: map[string]any{"ok": false, "error": "ratelimited"}}
	case s.failures[method].code != "":
		f := s.failures[method]
		if f.n > 0 {
			f.n--
			if f.n == 0 {
				delete(s.failures, method)
			} else {
				s.failures[method] = f
			}
		}
		res = fail(f.code)
		if f.needed != "" {
			res.body["needed"], res.body["provided"] = f.needed, s.providedLocked()
		}
	case token == "":
		res = fail("not_authed")
	case method == "apps.connections.open" && token != AppToken,
		method != "apps.connections.open" && token != BotToken:
		res = fail("invalid_auth")
	case s.lacksScopeLocked(method, scopeChannel(params)) != "":
		res = fail("missing_scope")
		res.body["needed"], res.body["provided"] = s.lacksScopeLocked(method, scopeChannel(params)), s.providedLocked()
	default:
		res = s.callLocked(method, params, r)
	}
	call := Call{Method: method, Params: params, Status: res.status, At: time.Now()}
	if e, _ := res.body["error"].(string); e != "" {
		call.Error = e
	}
	s.calls = append(s.calls, call)
	if res.after != nil {
		res.after()
	}
	s.notify()
	lost, lostStatus := s.loseLocked(method)
	held := s.holdLocked(method, params)
	s.mu.Unlock()

	if held != nil { // HoldResponse
		close(held.reached)
		select {
		case <-held.release:
		case <-r.Context().Done(): // the client went away (killed)
			return
		}
	}
	if lost {
		writeLost(w, lostStatus)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	if res.status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1")
	}
	w.WriteHeader(res.status)
	_ = json.NewEncoder(w).Encode(res.body)
}

// scopeChannel is the channel a call names ("channel", or "channel_id"
// for assistant.threads.setStatus).
func scopeChannel(p url.Values) string {
	if ch := p.Get("channel"); ch != "" {
		return ch
	}
	return p.Get("channel_id")
}

// readParams reads form or JSON arguments and the token (Authorization
// header or "token" argument); the token is removed from the params.
func readParams(r *http.Request) (url.Values, string, error) {
	params := url.Values{}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct == "application/json" {
		body, err := io.ReadAll(io.LimitReader(r.Body, 10<<20))
		if err != nil {
			return nil, "", err
		}
		if len(strings.TrimSpace(string(body))) > 0 && string(body) != "null" {
			var m map[string]any
			if err := json.Unmarshal(body, &m); err != nil {
				return nil, "", err
			}
			for k, v := range m {
				if str, isStr := v.(string); isStr {
					params.Set(k, str)
				} else {
					b, _ := json.Marshal(v)
					params.Set(k, string(b))
				}
			}
		}
	} else {
		if err := r.ParseForm(); err != nil {
			return nil, "", err
		}
		params = r.Form
	}
	token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	if token == "" {
		token = params.Get("token")
	}
	params.Del("token")
	return params, token, nil
}

// callLocked runs one authenticated Web API method. s.mu is held.
func (s *Server) callLocked(method string, p url.Values, r *http.Request) apiResult {
	switch method {
	case "auth.test":
		return ok(map[string]any{
			"url": "https://slackfake.slack.com/", "team": "Slackfake", "user": "agentbot",
			"team_id": TeamID, "user_id": BotUserID, "bot_id": BotID, "is_enterprise_install": false,
		})
	case "apps.connections.open":
		return ok(map[string]any{"url": "ws://" + r.Host + "/link/?ticket=" + s.nextID("t")})
	case "chat.postMessage":
		return s.postLocked(p)
	case "chat.update":
		return s.updateLocked(p)
	case "conversations.replies", "conversations.history":
		return s.conversationLocked(method, p)
	case "chat.startStream", "chat.appendStream", "chat.stopStream":
		return s.streamLocked(method, p)
	case "files.getUploadURLExternal":
		return s.getUploadURLLocked(p, r)
	case "files.completeUploadExternal":
		return s.completeUploadLocked(p)
	case "chat.postEphemeral":
		return s.ephemeralLocked(p)
	case "reactions.add", "reactions.remove":
		return s.reactionLocked(method, p)
	case "assistant.threads.setStatus":
		return s.setStatusLocked(p)
	case "users.info":
		return s.userInfoLocked(p)
	case "conversations.info":
		return s.conversationInfoLocked(p)
	default:
		return fail("unknown_method")
	}
}

func (s *Server) postLocked(p url.Values) apiResult {
	ch := p.Get("channel")
	if ch == "" {
		return fail("channel_not_found")
	}
	blocks, res := checkContent(p)
	if res.body != nil {
		return res
	}
	md, res := parseMetadata(p.Get("metadata"))
	if res.body != nil {
		return res
	}
	m := Message{
		Channel: ch, TS: s.nextTS(), ThreadTS: p.Get("thread_ts"), Text: p.Get("text"),
		Blocks: blocks.raw, Sections: blocks.sections, Buttons: blocks.buttons, Metadata: md, At: time.Now(),
	}
	s.messages[ch+"/"+m.TS] = &m
	s.posts = append(s.posts, m)
	out := ok(map[string]any{"channel": ch, "ts": m.TS, "message": botMessage(m)})
	if s.echo {
		out.after = func() {
			ev := botMessage(m)
			ev["channel"] = ch
			ev["channel_type"] = channelType(ch)
			ev["event_ts"] = m.TS
			s.eventLocked(ev, m.TS)
		}
	}
	return out
}

func (s *Server) updateLocked(p url.Values) apiResult {
	ch, ts := p.Get("channel"), p.Get("ts")
	cur, found := s.messages[ch+"/"+ts]
	if !found {
		return fail("message_not_found")
	}
	blocks, res := checkContent(p)
	if res.body != nil {
		return res
	}
	prev := *cur
	if p.Has("text") {
		cur.Text = p.Get("text")
	}
	if p.Has("blocks") {
		cur.Blocks, cur.Sections, cur.Buttons = blocks.raw, blocks.sections, blocks.buttons
	}
	cur.At = time.Now()
	s.updates = append(s.updates, *cur)
	out := ok(map[string]any{"channel": ch, "ts": ts, "text": cur.Text})
	if s.echo {
		now := *cur
		out.after = func() {
			evTS := s.nextTS()
			s.eventLocked(map[string]any{
				"type": "message", "subtype": "message_changed", "hidden": true,
				"channel": ch, "channel_type": channelType(ch), "ts": evTS, "event_ts": evTS,
				"message": botMessage(now), "previous_message": botMessage(prev),
			}, evTS)
		}
	}
	return out
}

func botMessage(m Message) map[string]any {
	out := map[string]any{
		"type": "message", "user": BotUserID, "bot_id": BotID, "app_id": AppID,
		"text": m.Text, "ts": m.TS, "team": TeamID,
	}
	if m.ThreadTS != "" {
		out["thread_ts"] = m.ThreadTS
	}
	if m.Blocks != nil {
		out["blocks"] = m.Blocks
	}
	return out
}

// parsedBlocks is a checked blocks argument.
type parsedBlocks struct {
	raw      json.RawMessage // nil: none, or "[]" cleared
	sections []string
	buttons  []Button
}

// checkContent validates text and blocks like Slack. A non-nil res.body
// is the error answer.
func checkContent(p url.Values) (parsedBlocks, apiResult) {
	var pb parsedBlocks
	text := p.Get("text")
	if utf8.RuneCountInString(text) > maxTextRunes {
		return pb, fail("msg_too_long")
	}
	if raw := p.Get("blocks"); raw != "" {
		var err error
		pb, err = parseBlocks(raw)
		if err != nil {
			return pb, apiResult{status: http.StatusOK, body: map[string]any{"ok": false, "error": "invalid_blocks", "errors": []string{err.Error()}}}
		}
	}
	if text == "" && len(pb.sections) == 0 && len(pb.buttons) == 0 && !p.Has("blocks") {
		return pb, fail("no_text")
	}
	return pb, apiResult{}
}

// parseBlocks checks Block Kit limits: ≤ 50 blocks, unique block_ids ≤
// 255 chars, section text 1..3000 chars, ≤ 25 elements per actions block,
// buttons with text ≤ 75 chars, value ≤ 2000, action_id ≤ 255 and unique
// in its block.
func parseBlocks(raw string) (parsedBlocks, error) {
	var blocks []struct {
		Type    string `json:"type"`
		BlockID string `json:"block_id"`
		Text    *struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"text"`
		Elements []struct {
			Type     string `json:"type"`
			ActionID string `json:"action_id"`
			Value    string `json:"value"`
			Style    string `json:"style"`
			Text     *struct {
				Text string `json:"text"`
			} `json:"text"`
		} `json:"elements"`
	}
	pb := parsedBlocks{raw: json.RawMessage(raw)}
	if err := json.Unmarshal([]byte(raw), &blocks); err != nil {
		return pb, fmt.Errorf("blocks are not a JSON array: %w", err)
	}
	if len(blocks) > 50 {
		return pb, fmt.Errorf("%d blocks > 50", len(blocks))
	}
	if len(blocks) == 0 {
		pb.raw = nil
	}
	blockIDs := map[string]bool{}
	for i, b := range blocks {
		actionIDs := map[string]bool{} // unique within a block
		if b.BlockID != "" {
			if blockIDs[b.BlockID] || len(b.BlockID) > 255 {
				return pb, fmt.Errorf("block %d: bad or duplicate block_id %q", i, b.BlockID)
			}
			blockIDs[b.BlockID] = true
		}
		switch b.Type {
		case "section":
			if b.Text == nil || b.Text.Text == "" {
				return pb, fmt.Errorf("block %d: section without text", i)
			}
			if n := utf8.RuneCountInString(b.Text.Text); n > 3000 {
				return pb, fmt.Errorf("block %d: section text of %d chars > 3000", i, n)
			}
			pb.sections = append(pb.sections, b.Text.Text)
		case "actions":
			if len(b.Elements) == 0 || len(b.Elements) > 25 {
				return pb, fmt.Errorf("block %d: %d elements (want 1..25)", i, len(b.Elements))
			}
			for j, e := range b.Elements {
				if e.Type != "button" {
					continue
				}
				switch {
				case e.Text == nil || e.Text.Text == "" || utf8.RuneCountInString(e.Text.Text) > 75:
					return pb, fmt.Errorf("block %d element %d: button text must be 1..75 chars", i, j)
				case len(e.Value) > 2000:
					return pb, fmt.Errorf("block %d element %d: value over 2000 chars", i, j)
				case e.ActionID == "" || len(e.ActionID) > 255 || actionIDs[e.ActionID]:
					return pb, fmt.Errorf("block %d element %d: bad or duplicate action_id %q", i, j, e.ActionID)
				case e.Style != "" && e.Style != "primary" && e.Style != "danger":
					return pb, fmt.Errorf("block %d element %d: bad style %q", i, j, e.Style)
				}
				actionIDs[e.ActionID] = true
				pb.buttons = append(pb.buttons, Button{BlockID: b.BlockID, ActionID: e.ActionID, Value: e.Value, Text: e.Text.Text, Style: e.Style})
			}
		}
	}
	return pb, nil
}
