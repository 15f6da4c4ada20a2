package discordfake

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"regexp"
	"strconv"
)

// Discord's limits for a message with attachments sent by a bot to a
// server without boosts.
const (
	maxAttachmentBytes = 10 << 20
	maxAttachments     = 10
	maxRequestBytes    = maxAttachments*maxAttachmentBytes + 1<<20
	codeEntityTooLarge = 40005
)

// uploadedFile is one files[N] part of a multipart message.
type uploadedFile struct {
	name, contentType string
	data              []byte
}

var filesPartRE = regexp.MustCompile(`^files\[([0-9]+)\]$`)

func isMultipart(r *http.Request) bool {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return ct == "multipart/form-data"
}

// decodeMultipartMessage reads a message sent as multipart/form-data, as
// Discord takes messages with files: a payload_json part (the JSON body)
// and files[N] parts. It validates like Discord (content, components,
// at most 10 files of at most 10 MiB, not empty) and has answered the
// request when ok is false.
func decodeMultipartMessage(w http.ResponseWriter, r *http.Request) (b wireMessageBody, content string, comps []wireComponent, files []uploadedFile, ok bool) {
	r.Body = http.MaxBytesReader(w, r.Body, maxRequestBytes)
	mr, err := r.MultipartReader()
	if err != nil {
		writeError(w, http.StatusBadRequest, codeInvalidFormBody, "Invalid Form Body", nil)
		return b, "", nil, nil, false
	}
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			writeError(w, http.StatusRequestEntityTooLarge, codeEntityTooLarge, "Request entity too large", nil)
			return b, "", nil, nil, false
		}
		switch name := p.FormName(); {
		case name == "payload_json":
			if err := json.NewDecoder(p).Decode(&b); err != nil {
				writeError(w, http.StatusBadRequest, codeInvalidFormBody, "The request body contains invalid JSON.", nil)
				return b, "", nil, nil, false
			}
		case filesPartRE.MatchString(name):
			data, err := io.ReadAll(io.LimitReader(p, maxAttachmentBytes+1))
			if err != nil || len(data) > maxAttachmentBytes {
				writeError(w, http.StatusRequestEntityTooLarge, codeEntityTooLarge, "Request entity too large", nil)
				return b, "", nil, nil, false
			}
			if len(files) == maxAttachments {
				formError(w, "files", "BASE_TYPE_MAX_LENGTH", fmt.Sprintf("Must be %d or fewer in length.", maxAttachments))
				return b, "", nil, nil, false
			}
			files = append(files, uploadedFile{name: p.FileName(), contentType: p.Header.Get("Content-Type"), data: data})
		}
	}
	if !validateNew(w, &b) {
		return b, "", nil, nil, false
	}
	if b.Content != nil {
		content = *b.Content
	}
	if b.Components != nil {
		comps = *b.Components
	}
	if isEmpty(content, comps, len(files)) {
		writeError(w, http.StatusBadRequest, codeEmptyMessage, "Cannot send an empty message", nil)
		return b, "", nil, nil, false
	}
	return b, content, comps, files, true
}

// attachLocked adds files to a new message as attachments the fake
// serves. Caller holds f.mu.
func (f *Fake) attachLocked(m *message, files []uploadedFile) {
	for _, u := range files {
		id := f.newID()
		f.files[id] = file{contentType: u.contentType, data: u.data}
		url := f.srv.URL + "/attachments/" + m.wire.ChannelID + "/" + id + "/" + u.name
		m.wire.Attachments = append(m.wire.Attachments, wireAttachment{
			ID: id, Filename: u.name, ContentType: u.contentType, Size: len(u.data), URL: url, ProxyURL: url,
		})
	}
}

// Attachment returns the content of attachment name of message id.
func (f *Fake) Attachment(messageID, name string) ([]byte, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m, ok := f.messages[messageID]
	if !ok {
		return nil, false
	}
	for _, a := range m.wire.Attachments {
		if a.Filename == name {
			fl, ok := f.files[a.ID]
			return append([]byte(nil), fl.data...), ok
		}
	}
	return nil, false
}

// getAttachment serves an uploaded file's url.
func (f *Fake) getAttachment(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	fl, ok := f.files[r.PathValue("attachment_id")]
	f.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", fl.contentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(fl.data)))
	_, _ = w.Write(fl.data)
}
