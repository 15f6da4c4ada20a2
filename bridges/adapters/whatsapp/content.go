package whatsapp

import (
	"fmt"
	"strconv"
	"strings"

	"go.mau.fi/whatsmeow/proto/waE2E"

	"github.com/agentbridge/agentbridge/bridges"
)

// msgContent is what an inbound message carries for the agent.
type msgContent struct {
	text string             // the text, a caption, or a short description (sticker, location, contact)
	ci   *waE2E.ContextInfo // mentions and the quote
	file *inFile            // an attachment (image, video, document, voice note or audio)
}

// content is a message's text, context (mentions, quote) and attachment.
// Every kind a person sends gives the agent something: captions of images,
// videos and documents; stickers, locations and contacts as a short
// description. A voice note (push-to-talk) or audio file is an attachment
// marked Voice for the core, which transcribes it (bridges/core voice.go).
func content(m *waE2E.Message) msgContent {
	switch {
	case m.GetExtendedTextMessage() != nil:
		x := m.GetExtendedTextMessage()
		return msgContent{text: x.GetText(), ci: x.GetContextInfo()}
	case m.GetImageMessage() != nil:
		x := m.GetImageMessage()
		return msgContent{text: x.GetCaption(), ci: x.GetContextInfo(), file: &inFile{File: bridges.File{Name: "image" + extFor(x.GetMimetype()),
			MimeType: x.GetMimetype(), Size: int64(x.GetFileLength())}, msg: x}}
	case m.GetVideoMessage() != nil:
		x := m.GetVideoMessage()
		return msgContent{text: x.GetCaption(), ci: x.GetContextInfo(), file: &inFile{File: bridges.File{Name: "video" + extFor(x.GetMimetype()),
			MimeType: x.GetMimetype(), Size: int64(x.GetFileLength())}, msg: x}}
	case m.GetDocumentMessage() != nil:
		x := m.GetDocumentMessage()
		return msgContent{text: x.GetCaption(), ci: x.GetContextInfo(), file: &inFile{File: bridges.File{Name: x.GetFileName(),
			MimeType: x.GetMimetype(), Size: int64(x.GetFileLength())}, msg: x}}
	case m.GetAudioMessage() != nil:
		x := m.GetAudioMessage()
		name := "audio"
		if x.GetPTT() {
			name = "voice-note"
		}
		return msgContent{ci: x.GetContextInfo(), file: &inFile{File: bridges.File{Name: name + audioExt(x.GetMimetype()),
			MimeType: x.GetMimetype(), Size: int64(x.GetFileLength()), Voice: x.GetPTT()}, msg: x}}
	case m.GetStickerMessage() != nil:
		x := m.GetStickerMessage()
		return msgContent{text: describeSticker(x), ci: x.GetContextInfo()}
	case m.GetLocationMessage() != nil:
		x := m.GetLocationMessage()
		return msgContent{text: describeLocation("Location", x.GetDegreesLatitude(), x.GetDegreesLongitude(),
			x.GetName(), x.GetAddress(), x.GetComment()), ci: x.GetContextInfo()}
	case m.GetLiveLocationMessage() != nil:
		x := m.GetLiveLocationMessage()
		return msgContent{text: describeLocation("Live location (where it was when sent)", x.GetDegreesLatitude(), x.GetDegreesLongitude(),
			"", "", x.GetCaption()), ci: x.GetContextInfo()}
	case m.GetContactMessage() != nil:
		x := m.GetContactMessage()
		return msgContent{text: "[Shared a contact: " + describeContact(x) + "]", ci: x.GetContextInfo()}
	case m.GetContactsArrayMessage() != nil:
		x := m.GetContactsArrayMessage()
		var cs []string
		for _, c := range x.GetContacts() {
			cs = append(cs, describeContact(c))
		}
		return msgContent{text: "[Shared contacts: " + strings.Join(cs, "; ") + "]", ci: x.GetContextInfo()}
	default:
		return msgContent{text: m.GetConversation()}
	}
}

// describeSticker is a sticker as text: its emojis or label, if any.
func describeSticker(x *waE2E.StickerMessage) string {
	what := "a sticker"
	if x.GetIsAnimated() {
		what = "an animated sticker"
	}
	if d := strings.TrimSpace(x.GetEmojis() + " " + x.GetAccessibilityLabel()); d != "" {
		return "[Sent " + what + ": " + clipRunes(d, 100) + "]"
	}
	return "[Sent " + what + "]"
}

// describeLocation is a shared location as coordinates, its name and
// address, and a map link.
func describeLocation(what string, lat, lon float64, name, address, comment string) string {
	coords := strconv.FormatFloat(lat, 'f', 6, 64) + ", " + strconv.FormatFloat(lon, 'f', 6, 64)
	var b strings.Builder
	fmt.Fprintf(&b, "[%s: %s", what, coords)
	for _, s := range []string{name, address} {
		if s = strings.TrimSpace(s); s != "" {
			b.WriteString(" — " + clipRunes(s, 200))
		}
	}
	fmt.Fprintf(&b, " (https://maps.google.com/?q=%s,%s)]",
		strconv.FormatFloat(lat, 'f', 6, 64), strconv.FormatFloat(lon, 'f', 6, 64))
	if c := strings.TrimSpace(comment); c != "" {
		b.WriteString("\n" + c)
	}
	return b.String()
}

// describeContact is a shared contact card as its name and phone numbers
// (the vCard's TEL lines).
func describeContact(x *waE2E.ContactMessage) string {
	name := strings.TrimSpace(x.GetDisplayName())
	var tels []string
	for line := range strings.Lines(x.GetVcard()) {
		line = strings.TrimSpace(line)
		key, val, ok := strings.Cut(line, ":")
		if ok && strings.HasPrefix(strings.ToUpper(key), "TEL") && strings.TrimSpace(val) != "" && len(tels) < 5 {
			tels = append(tels, strings.TrimSpace(val))
		}
	}
	if name == "" {
		name = "(no name)"
	}
	if len(tels) == 0 {
		return clipRunes(name, 100)
	}
	return clipRunes(name, 100) + " " + strings.Join(tels, ", ")
}

// audioExt is a file extension for an audio MIME type: WhatsApp's
// "audio/ogg; codecs=opus" is .ogg, which transcription servers pick their
// decoder by.
func audioExt(mimeType string) string {
	base, _, _ := strings.Cut(mimeType, ";")
	switch strings.TrimSpace(strings.ToLower(base)) {
	case "audio/ogg", "audio/opus":
		return ".ogg"
	case "audio/mpeg":
		return ".mp3"
	case "audio/mp4", "audio/aac", "audio/x-m4a":
		return ".m4a"
	}
	return extFor(mimeType)
}
