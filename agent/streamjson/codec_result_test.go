package streamjson

import (
	"slices"
	"testing"
)

// TestDecodeResultBinding: result_index and user_message_uuid(s) as
// 2.1.332 sends them (transcript-queued: two messages folded into one
// turn), absent (older CLIs), and of unexpected types, which are ignored
// instead of making the turn's result undecodable.
func TestDecodeResultBinding(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		index   int
		indexed bool
		uuid    string
		uuids   []string
	}{
		{"folded", `{"type":"result","subtype":"success","result":"pong: second\nthird","result_index":1,` +
			`"user_message_uuid":"b","user_message_uuids":["a","b"]}`, 1, true, "b", []string{"a", "b"}},
		{"absent", `{"type":"result","subtype":"success","result":"x"}`, 0, false, "", nil},
		{"null", `{"type":"result","result":"x","result_index":null,"user_message_uuid":null,"user_message_uuids":null}`, 0, false, "", nil},
		{"wrong types", `{"type":"result","result":"x","result_index":"3","user_message_uuid":7,"user_message_uuids":{"a":1}}`, 0, false, "", nil},
		{"negative and fraction", `{"type":"result","result":"x","result_index":-1}`, 0, false, "", nil},
		{"fraction", `{"type":"result","result":"x","result_index":2.5}`, 0, false, "", nil},
		{"mixed list", `{"type":"result","result":"x","result_index":4,"user_message_uuids":["a",1,null,"c"]}`, 4, true, "", []string{"a", "c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs := decodeLine([]byte(tt.line))
			if len(evs) != 1 {
				t.Fatalf("%d events: %#v", len(evs), evs)
			}
			r, ok := evs[0].(Result)
			if !ok {
				t.Fatalf("got %T (%v), want a Result: an optional field broke the turn's end", evs[0], evs[0])
			}
			if r.Text != "x" && tt.name != "folded" {
				t.Errorf("text %q", r.Text)
			}
			if r.Index != tt.index || r.Indexed != tt.indexed || r.UserMessageUUID != tt.uuid || !slices.Equal(r.UserMessageUUIDs, tt.uuids) {
				t.Errorf("index %d/%v uuid %q uuids %q; want %d/%v %q %q", r.Index, r.Indexed, r.UserMessageUUID, r.UserMessageUUIDs,
					tt.index, tt.indexed, tt.uuid, tt.uuids)
			}
		})
	}
}
