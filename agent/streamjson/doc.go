// Package streamjson is the Claude Code CLI's stream-json protocol (see
// shared/protocol/PROTOCOL.md: the captures of the real CLI 2.1.330 are the
// reference, copied to testdata/transcripts; the scripted captures of the
// pinned CLI, 2.1.332, and of 2.1.330 for comparison are in testdata/wire,
// with the differences in its README): the typed events a session
// delivers, the decoder of the CLI's stdout lines and the encoder of the
// lines the host writes to its stdin. It is pure: no processes, no I/O
// beyond the reader LineReader splits.
//
// A Decoder (Decoder.Decode) turns one stdout line into typed Events;
// every kind the CLI printed in the captures is modelled, anything else is
// an Unknown (never fatal), a non-JSON line a DecodeError. Unknown frame
// types, unknown fields and missing optional fields never change what a
// turn yields (FuzzTurnSurvivesUnknownShapes, TestTurnSurvivesEachMissingField). Lines the host
// writes are only ever marshalled from the typed structs in wire.go by the
// Encode functions: a malformed stdin line kills the CLI, and a permission
// answer in any other shape than the one in codec_encode.go hangs the
// turn. LineReader reads stdout lines up to a cap (DefaultMaxLineBytes by
// default); longer ones are skipped and reported as a *LineTooLongError.
//
// A few events are not decoded but made by agent.Session (Exit,
// EventsDropped, LimitHit); they live here so that Event is one closed set.
package streamjson
