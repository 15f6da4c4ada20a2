package discordfake

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Routes, as accepted by Inject429 and reported in Request.Route: the
// method and the path below /api/v9 with Discord's parameter names.
const (
	RouteGateway             = "GET /gateway"
	RouteGatewayBot          = "GET /gateway/bot"
	RouteCurrentUser         = "GET /users/@me"
	RouteGetChannel          = "GET /channels/{channel_id}"
	RouteCreateMessage       = "POST /channels/{channel_id}/messages"
	RouteGetMessage          = "GET /channels/{channel_id}/messages/{message_id}"
	RouteEditMessage         = "PATCH /channels/{channel_id}/messages/{message_id}"
	RouteStartThread         = "POST /channels/{channel_id}/messages/{message_id}/threads"
	RouteTyping              = "POST /channels/{channel_id}/typing"
	RouteInteractionCallback = "POST /interactions/{interaction_id}/{interaction_token}/callback"
	RouteWebhookExecute      = "POST /webhooks/{application_id}/{interaction_token}"
)

// Discord JSON error codes used by the fake.
const (
	codeUnknownChannel       = 10003
	codeUnknownMessage       = 10008
	codeUnknownWebhook       = 10015
	codeUnknownInteraction   = 10062
	codeUnauthorized         = 0
	codeCannotEditOthers     = 50005
	codeEmptyMessage         = 50006
	codeWrongChannelType     = 50024
	codeInvalidFormBody      = 50035
	codeAlreadyAcknowledged  = 40060
	codeThreadAlreadyCreated = 160004
)

const maxContent = 2000

func (f *Fake) routes() http.Handler {
	mux := http.NewServeMux()
	api := func(route string, auth bool, h http.HandlerFunc) {
		method, path, _ := strings.Cut(route, " ")
		mux.HandleFunc(method+" /api/v9"+path, f.wrap(route, auth, h))
	}
	api(RouteGateway, false, f.getGateway)
	api(RouteGatewayBot, true, f.getGateway)
	api(RouteCurrentUser, true, f.getCurrentUser)
	api(RouteGetChannel, true, f.getChannel)
	api(RouteCreateMessage, true, f.createMessage)
	api(RouteGetMessage, true, f.getMessage)
	api(RouteEditMessage, true, f.editMessage)
	api(RouteStartThread, true, f.startThread)
	api(RouteTyping, true, f.postTyping)
	api(RouteInteractionCallback, false, f.interactionCallback)
	api(RouteWebhookExecute, false, f.executeWebhook)
	mux.HandleFunc("GET /attachments/{channel_id}/{attachment_id}/{filename}", f.getAttachment)
	mux.HandleFunc("GET /gateway", f.serveGateway)
	mux.HandleFunc("GET /gateway/", f.serveGateway)
	mux.HandleFunc("/", f.notFound)
	return mux
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

// wrap records the request, answers injected 429s and checks the bot token.
func (f *Fake) wrap(route string, auth bool, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		f.mu.Lock()
		idx := len(f.requests)
		f.requests = append(f.requests, Request{Method: r.Method, Path: r.URL.Path, Route: route, At: time.Now()})
		outage := f.outage[route]
		throttled := outage == 0 && f.throttle[route] > 0
		if throttled {
			f.throttle[route]--
		}
		want := "Bot " + f.opts.Token
		f.mu.Unlock()
		got := r.Header.Get("Authorization")
		// Discord checks a token that is sent even where none is needed:
		// GET /gateway with a bad token is 401 (discordgo's Open fails).
		badToken := got != want && (auth || route == RouteGateway && got != "")
		defer func() {
			f.mu.Lock()
			f.requests[idx].Status = sw.status
			f.notify()
			f.mu.Unlock()
		}()
		switch {
		case outage != 0:
			writeError(sw, outage, 0, fmt.Sprintf("%d: %s", outage, http.StatusText(outage)), nil)
		case throttled:
			f.writeRateLimited(sw, route)
		case badToken:
			writeError(sw, http.StatusUnauthorized, codeUnauthorized, "401: Unauthorized", nil)
		default:
			if held := f.holdFor(route, r); held != nil {
				serveHeld(held, sw, r, h) // hold.go
				return
			}
			h(sw, r)
		}
	}
}

func (f *Fake) writeRateLimited(w http.ResponseWriter, route string) {
	after := f.opts.RetryAfter.Seconds()
	h := w.Header()
	h.Set("Retry-After", strconv.Itoa(int(math.Ceil(after))))
	h.Set("X-RateLimit-Limit", "5")
	h.Set("X-RateLimit-Remaining", "0")
	h.Set("X-RateLimit-Reset", strconv.FormatFloat(float64(time.Now().Add(f.opts.RetryAfter).UnixMilli())/1000, 'f', 3, 64))
	h.Set("X-RateLimit-Reset-After", strconv.FormatFloat(after, 'f', 3, 64))
	h.Set("X-RateLimit-Bucket", fmt.Sprintf("%x", route))
	h.Set("X-RateLimit-Scope", "user")
	writeJSON(w, http.StatusTooManyRequests, map[string]any{
		"message":     "You are being rate limited.",
		"retry_after": after,
		"global":      false,
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status, code int, msg string, errs map[string]any) {
	writeJSON(w, status, apiError{Code: code, Message: msg, Errors: errs})
}

// formError is Discord's 50035 Invalid Form Body with one field error.
func formError(w http.ResponseWriter, field, code, msg string) {
	writeError(w, http.StatusBadRequest, codeInvalidFormBody, "Invalid Form Body", map[string]any{
		field: map[string]any{"_errors": []map[string]string{{"code": code, "message": msg}}},
	})
}

func (f *Fake) notFound(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.requests = append(f.requests, Request{Method: r.Method, Path: r.URL.Path, Status: http.StatusNotFound, At: time.Now()})
	f.notify()
	f.mu.Unlock()
	writeError(w, http.StatusNotFound, 0, "404: Not Found", nil)
}

func (f *Fake) getGateway(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	down := f.lookupDown != 0
	if f.lookupDown > 0 {
		f.lookupDown--
	}
	f.mu.Unlock()
	if down {
		writeError(w, http.StatusServiceUnavailable, 0, "503: Service Unavailable", nil)
		return
	}
	body := map[string]any{"url": f.GatewayURL()}
	if strings.HasSuffix(r.URL.Path, "/bot") {
		body["shards"] = 1
		body["session_start_limit"] = map[string]int{"total": 1000, "remaining": 999, "reset_after": 14400000, "max_concurrency": 1}
	}
	writeJSON(w, http.StatusOK, body)
}

func (f *Fake) getCurrentUser(w http.ResponseWriter, _ *http.Request) {
	f.mu.Lock()
	u := *f.users[f.opts.BotID]
	f.mu.Unlock()
	writeJSON(w, http.StatusOK, u)
}

func (f *Fake) getChannel(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	ch, ok := f.channels[r.PathValue("channel_id")]
	var c wireChannel
	if ok {
		c = *ch
	}
	f.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, codeUnknownChannel, "Unknown Channel", nil)
		return
	}
	writeJSON(w, http.StatusOK, c)
}

func (f *Fake) getMessage(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	m, ok := f.messages[r.PathValue("message_id")]
	var wm wireMessage
	if ok {
		wm = m.wire
		ok = wm.ChannelID == r.PathValue("channel_id")
	}
	f.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, codeUnknownMessage, "Unknown Message", nil)
		return
	}
	writeJSON(w, http.StatusOK, wm)
}

func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		writeError(w, http.StatusBadRequest, codeInvalidFormBody, "The request body contains invalid JSON.", nil)
		return false
	}
	return true
}

// validateBody checks content and components the way Discord does and
// writes the error response when they are invalid.
func validateBody(w http.ResponseWriter, b *wireMessageBody) bool {
	if b.Content != nil && utf8.RuneCountInString(*b.Content) > maxContent {
		formError(w, "content", "BASE_TYPE_MAX_LENGTH", "Must be 2000 or fewer in length.")
		return false
	}
	if b.Components == nil {
		return true
	}
	rows := *b.Components
	if len(rows) > 5 {
		formError(w, "components", "BASE_TYPE_MAX_LENGTH", "Must be 5 or fewer in length.")
		return false
	}
	seen := map[string]bool{}
	for i, row := range rows {
		field := fmt.Sprintf("components.%d", i)
		if row.Type != 1 {
			formError(w, field+".type", "COMPONENT_LAYOUT_WIDTH_EXCEEDED", "Top-level components must be action rows.")
			return false
		}
		if len(row.Components) < 1 || len(row.Components) > 5 {
			formError(w, field+".components", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 5 in length.")
			return false
		}
		for j, b := range row.Components {
			bf := fmt.Sprintf("%s.components.%d", field, j)
			switch {
			case b.Type != 2:
				formError(w, bf+".type", "UNION_TYPE_CHOICES", "Value of field \"type\" must be one of (2,).")
				return false
			case b.Style < 1 || b.Style > 5:
				formError(w, bf+".style", "BASE_TYPE_CHOICES", "Value must be one of {1, 2, 3, 4, 5}.")
				return false
			case utf8.RuneCountInString(b.Label) > 80:
				formError(w, bf+".label", "BASE_TYPE_MAX_LENGTH", "Must be 80 or fewer in length.")
				return false
			case b.Style == 5 && (b.URL == "" || b.CustomID != ""):
				formError(w, bf+".url", "BUTTON_COMPONENT_URL_REQUIRED", "A url is required for link buttons.")
				return false
			case b.Style != 5 && (len(b.CustomID) < 1 || utf8.RuneCountInString(b.CustomID) > 100):
				formError(w, bf+".custom_id", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length.")
				return false
			case b.Style != 5 && seen[b.CustomID]:
				formError(w, bf+".custom_id", "COMPONENT_CUSTOM_ID_DUPLICATED", "Component custom id cannot be duplicated.")
				return false
			}
			seen[b.CustomID] = true
		}
	}
	return true
}

// decodeNewMessage reads and validates the body of a new message; on a bad
// one it has already answered the request and returns ok false.
func decodeNewMessage(w http.ResponseWriter, r *http.Request) (b wireMessageBody, content string, comps []wireComponent, ok bool) {
	if !decodeBody(w, r, &b) || !validateNew(w, &b) {
		return b, "", nil, false
	}
	if b.Content != nil {
		content = *b.Content
	}
	if b.Components != nil {
		comps = *b.Components
	}
	if isEmpty(content, comps, 0) {
		writeError(w, http.StatusBadRequest, codeEmptyMessage, "Cannot send an empty message", nil)
		return b, "", nil, false
	}
	return b, content, comps, true
}

func isEmpty(content string, comps []wireComponent, attachments int) bool {
	return content == "" && len(comps) == 0 && attachments == 0
}

func (f *Fake) createMessage(w http.ResponseWriter, r *http.Request) {
	var (
		b       wireMessageBody
		content string
		comps   []wireComponent
		files   []uploadedFile
		ok      bool
	)
	if isMultipart(r) { // a message with files (uploads.go)
		b, content, comps, files, ok = decodeMultipartMessage(w, r)
	} else {
		b, content, comps, ok = decodeNewMessage(w, r)
	}
	if !ok || !checkNonce(w, &b) {
		return
	}
	f.mu.Lock()
	if failed, status, e := f.failLocked(); failed { // nonce.go
		f.mu.Unlock()
		writeError(w, status, e.Code, e.Message, nil)
		return
	}
	ch, ok := f.channels[r.PathValue("channel_id")]
	if !ok {
		f.mu.Unlock()
		writeError(w, http.StatusNotFound, codeUnknownChannel, "Unknown Channel", nil)
		return
	}
	if !f.mayPostLocked(w, ch, len(files)) { // perms.go
		f.mu.Unlock()
		return
	}
	m, dup := f.enforcedLocked(ch.ID, &b) // nonce.go
	if !dup {
		m = f.botMessage(ch, content, comps, b.flags())
		f.replyLocked(m, b.MessageReference)
		f.attachLocked(m, files)
		if b.AllowedMentions != nil {
			parse := append([]string{}, b.AllowedMentions.Parse...)
			m.allowed = &parse
		}
		f.rememberLocked(m, &b)
		f.storeMessage(m)
	}
	wm := m.wire
	lost, status := f.loseLocked()
	f.mu.Unlock()
	if lost {
		writeLost(w, status)
		return
	}
	writeJSON(w, http.StatusOK, wm)
}

// botMessage builds a message authored by the bot. Caller holds f.mu.
func (f *Fake) botMessage(ch *wireChannel, content string, comps []wireComponent, flags int) *message {
	now := time.Now()
	if comps == nil {
		comps = []wireComponent{}
	}
	wm := wireMessage{
		ID:           f.newID(),
		ChannelID:    ch.ID,
		GuildID:      ch.GuildID,
		Author:       *f.users[f.opts.BotID],
		Content:      content,
		Timestamp:    isoTime(now),
		Mentions:     []wireUser{},
		MentionRoles: []string{},
		Attachments:  []wireAttachment{},
		Embeds:       []json.RawMessage{},
		Components:   comps,
		Flags:        flags,
	}
	if ch.GuildID != "" {
		wm.Member = member(nil, now)
	}
	return &message{wire: wm, created: now}
}

func (f *Fake) editMessage(w http.ResponseWriter, r *http.Request) {
	var b wireMessageBody
	if !decodeBody(w, r, &b) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	m, ok := f.messages[r.PathValue("message_id")]
	if !ok || m.wire.ChannelID != r.PathValue("channel_id") {
		writeError(w, http.StatusNotFound, codeUnknownMessage, "Unknown Message", nil)
		return
	}
	if m.wire.Author.ID != f.opts.BotID {
		writeError(w, http.StatusForbidden, codeCannotEditOthers, "Cannot edit a message authored by another user", nil)
		return
	}
	if !checkV2Edit(w, m, &b) { // components.go
		return
	}
	content, comps := m.wire.Content, m.wire.Components
	if b.Content != nil {
		content = *b.Content
	}
	if b.Components != nil {
		comps = *b.Components
	}
	if isEmpty(content, comps, len(m.wire.Attachments)) {
		writeError(w, http.StatusBadRequest, codeEmptyMessage, "Cannot send an empty message", nil)
		return
	}
	m.wire.Flags |= b.flags() & FlagComponentsV2
	f.applyEdit(m, b.Content, b.Components, b.flags())
	writeJSON(w, http.StatusOK, m.wire)
}

// applyEdit changes a message, records the Edit and dispatches
// MESSAGE_UPDATE. Caller holds f.mu.
func (f *Fake) applyEdit(m *message, content *string, comps *[]wireComponent, flags int) {
	now := time.Now()
	e := Edit{ChannelID: m.wire.ChannelID, MessageID: m.wire.ID, Flags: flags, V2: m.wire.Flags&FlagComponentsV2 != 0, At: now}
	if content != nil {
		m.wire.Content = *content
		e.Content, e.ContentSet = *content, true
	}
	if comps != nil {
		m.wire.Components = append([]wireComponent{}, (*comps)...)
		e.Rows, e.ComponentsSet = buttonsOf(*comps), true
	}
	ts := isoTime(now)
	m.wire.EditedTimestamp = &ts
	m.edited = now
	f.edits = append(f.edits, e)
	f.dispatch("MESSAGE_UPDATE", m.wire)
	f.notify()
}

func (f *Fake) postTyping(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := r.PathValue("channel_id")
	if _, ok := f.channels[id]; !ok {
		writeError(w, http.StatusNotFound, codeUnknownChannel, "Unknown Channel", nil)
		return
	}
	f.typing = append(f.typing, Typing{ChannelID: id, At: time.Now()})
	f.notify()
	w.WriteHeader(http.StatusNoContent)
}

func (f *Fake) interactionCallback(w http.ResponseWriter, r *http.Request) {
	var cb wireCallback
	if !decodeBody(w, r, &cb) {
		return
	}
	if cb.Data != nil && !validateNew(w, cb.Data) {
		return
	}
	now := time.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	it, ok := f.interactions[r.PathValue("interaction_id")]
	if !ok || it.wire.Token != r.PathValue("interaction_token") {
		writeError(w, http.StatusNotFound, codeUnknownInteraction, "Unknown interaction", nil)
		return
	}
	if it.acked {
		writeError(w, http.StatusBadRequest, codeAlreadyAcknowledged, "Interaction has already been acknowledged.", nil)
		return
	}
	resp := InteractionResponse{InteractionID: it.wire.ID, Type: cb.Type, ClickedAt: it.clickedAt, At: now}
	if cb.Data != nil {
		if cb.Data.Content != nil {
			resp.Content = *cb.Data.Content
		}
		resp.Flags = cb.Data.flags()
	}
	if now.Sub(it.clickedAt) > InteractionTimeout {
		resp.Late = true
		f.responses = append(f.responses, resp)
		f.notify()
		writeError(w, http.StatusNotFound, codeUnknownInteraction, "Unknown interaction", nil)
		return
	}
	switch cb.Type {
	case CallbackDeferredUpdate, CallbackDeferredChannelMessage:
	case CallbackUpdateMessage:
		if m, ok := f.messages[it.wire.Message.ID]; ok && cb.Data != nil {
			f.applyEdit(m, cb.Data.Content, cb.Data.Components, cb.Data.flags())
		}
	case CallbackChannelMessage:
		if cb.Data == nil || cb.Data.Content == nil && cb.Data.Components == nil {
			writeError(w, http.StatusBadRequest, codeEmptyMessage, "Cannot send an empty message", nil)
			return
		}
		if cb.Data.flags()&FlagEphemeral == 0 {
			var comps []wireComponent
			if cb.Data.Components != nil {
				comps = *cb.Data.Components
			}
			f.storeMessage(f.botMessage(f.channels[it.wire.ChannelID], resp.Content, comps, cb.Data.flags()))
		}
	default:
		formError(w, "type", "BASE_TYPE_CHOICES", "Value must be one of {1, 4, 5, 6, 7, 8, 9, 10, 12}.")
		return
	}
	it.acked = true
	f.responses = append(f.responses, resp)
	f.notify()
	w.WriteHeader(http.StatusNoContent)
}

func (f *Fake) executeWebhook(w http.ResponseWriter, r *http.Request) {
	b, content, comps, ok := decodeNewMessage(w, r)
	if !ok {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	it, ok := f.byToken[r.PathValue("interaction_token")]
	if !ok || !it.acked || r.PathValue("application_id") != f.opts.AppID {
		writeError(w, http.StatusNotFound, codeUnknownWebhook, "Unknown Webhook", nil)
		return
	}
	f.followups = append(f.followups, Followup{
		InteractionID: it.wire.ID, ApplicationID: f.opts.AppID, Content: content, Flags: b.flags(), At: time.Now(),
	})
	m := f.botMessage(f.channels[it.wire.ChannelID], content, comps, b.flags())
	m.wire.WebhookID = f.opts.AppID
	m.wire.ApplicationID = f.opts.AppID
	if b.flags()&FlagEphemeral == 0 {
		f.storeMessage(m)
	}
	f.notify()
	if r.URL.Query().Get("wait") == "true" {
		writeJSON(w, http.StatusOK, m.wire)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
