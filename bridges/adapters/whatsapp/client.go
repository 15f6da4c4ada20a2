package whatsapp

import (
	"context"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/store"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
)

// waClient is everything this package calls on a *whatsmeow.Client, so
// that tests can put a recording fake in its place. Its methods are the
// library's own (same names and signatures); see whatsmeow for their
// contracts. Fields of the client (Store, the LID map) are reached through
// lidLookup and the *store.Device the client was made with.
type waClient interface {
	// Sending.
	SendMessage(ctx context.Context, to types.JID, message *waE2E.Message, extra ...whatsmeow.SendRequestExtra) (whatsmeow.SendResponse, error)
	BuildReaction(chat, sender types.JID, id types.MessageID, reaction string) *waE2E.Message
	BuildEdit(chat types.JID, id types.MessageID, newContent *waE2E.Message) *waE2E.Message
	BuildPollCreation(name string, optionNames []string, selectableOptionCount int) *waE2E.Message
	SendChatPresence(ctx context.Context, jid types.JID, state types.ChatPresence, media types.ChatPresenceMedia) error
	SendPresence(ctx context.Context, state types.Presence) error
	MarkRead(ctx context.Context, ids []types.MessageID, timestamp time.Time, chat, sender types.JID, receiptTypeExtra ...types.ReceiptType) error

	// Media: encrypt and upload an attachment (UploadFile).
	Upload(ctx context.Context, plaintext []byte, appInfo whatsmeow.MediaType) (whatsmeow.UploadResponse, error)

	// Receiving.
	Download(ctx context.Context, msg whatsmeow.DownloadableMessage) ([]byte, error)
	AddEventHandler(handler whatsmeow.EventHandler) uint32
	AddEventHandlerWithSuccessStatus(handler whatsmeow.EventHandlerWithSuccessStatus) uint32
	RemoveEventHandler(id uint32) bool
	DecryptPollVote(ctx context.Context, vote *events.Message) (*waE2E.PollVoteMessage, error)

	// Lookups: phone numbers on WhatsApp (also stores their LID mappings).
	IsOnWhatsApp(ctx context.Context, phones []string) ([]types.IsOnWhatsAppResponse, error)

	// Connection and linking.
	Connect() error
	Disconnect()
	IsConnected() bool
	IsLoggedIn() bool
	GetQRChannel(ctx context.Context) (<-chan whatsmeow.QRChannelItem, error)
	PairPhone(ctx context.Context, phone string, showPushNotification bool, clientType whatsmeow.PairClientType, clientDisplayName string) (string, error)
}

// lidLookup maps between LIDs (@lid) and phone-number JIDs: the device
// store's LIDs (store.Device.LIDs, set once the device is saved) or the
// container's LIDMap. An unknown mapping is an empty JID and a nil error.
type lidLookup interface {
	GetPNForLID(ctx context.Context, lid types.JID) (types.JID, error)
	GetLIDForPN(ctx context.Context, pn types.JID) (types.JID, error)
}

var (
	_ waClient  = (*whatsmeow.Client)(nil)
	_ lidLookup = (store.LIDStore)(nil)
)
