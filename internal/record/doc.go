// Package record owns gonogo's record format: the versioned records of
// runs, plans, journal events and run summaries, and their codecs. It is
// the one format of the bbolt store (package storage keeps these bytes),
// of Temporal's workflow histories and memos (internal/temporalbackend
// carries them as payloads) and of the local API (internal/localapi hands
// another gonogo what it read from the store it holds), so every backend
// reads back exactly what another wrote.
//
// Records are private structs, kept apart from the engine's types so the
// engine can change without rewriting a store or a history; typed states
// are stored as their text and read back through the engine's parsers, so
// a state this gonogo does not know is an error, never a guess. Every
// record carries Version: a reader refuses one a newer gonogo wrote
// (ErrNewer). A run is kept in pieces: its plan (EncodePlan), its snapshot
// (EncodeRun), whose steps refer to their plan steps, and one record per
// journal event (EncodeEvent); MarshalRun, MarshalSummaries and
// MarshalEvents bundle them with everything they refer to, for one gonogo
// to hand another. DecodeStatsRun and DecodeStatsEvent read of the same
// records only what gonogo stats counts, skipping the rest unread.
//
// It imports engine and the standard library only, and does no I/O:
//
//	plan, err := record.DecodePlan(planBytes)
//	...
//	run, err := record.DecodeRun(snapBytes, plan)
package record
