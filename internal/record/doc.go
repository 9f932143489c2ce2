// Package record owns gonogo's record format: the versioned records of
// runs, plans, journal events and run summaries, and their codecs. It is
// the one format of the bbolt store (package storage keeps these bytes),
// of Temporal's workflow histories and memos (internal/temporalbackend
// carries them as payloads) and of the local API (one gonogo hands another
// what it read from the store it holds), so that every backend reads back
// exactly what another wrote.
//
// Records are private structs, kept apart from the engine's types so the
// engine can change without rewriting a store or a history; typed states
// are stored as their text and read back through the engine's parsers, so
// a state this gonogo does not know is an error, never a guess. Every
// record carries a version (Version): a reader refuses one written by a
// newer gonogo (ErrNewer) rather than guess at its fields.
//
// A run is kept in pieces: its plan (EncodePlan), which never changes once
// it has started; its snapshot (EncodeRun), whose steps refer to their plan
// steps instead of repeating them; and its journal, one record per event
// (EncodeEvent), whose run-started event may refer to the stored plan.
// The decoders put the pieces back together. For one gonogo to hand
// another a run, a listing or events, MarshalRun, MarshalSummaries and
// MarshalEvents bundle the same records with everything they refer to.
//
// The package is pure: it imports only engine and the standard library,
// and does no I/O. For example, a snapshot read from a store is decoded
// with its plan:
//
//	plan, err := record.DecodePlan(planBytes)
//	...
//	run, err := record.DecodeRun(snapBytes, plan)
package record
