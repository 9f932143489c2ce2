// Package localapi is the local API: the gonogo that holds a data directory (run, resume, demo,
// serve) answers other gonogo processes of the same user on the unix
// socket <data>/gonogo.sock, since bbolt's exclusive lock keeps them from
// opening the store themselves. HTTP, JSON; runs, journals and listings
// travel as the store's own versioned records (package record,
// record.MarshalRun).
//
//	GET  /v1/holder                            who holds the data directory: {"pid", "command", "version"}
//	GET  /v1/runs                              the listing, newest first
//	GET  /v1/runs/{id}                         a run and its journal
//	GET  /v1/runs/{id}/artifacts               size and sha256 of every attempt's current artifact
//	GET  /v1/runs/{id}/artifacts/{step}/{attempt}  that artifact, byte for byte
//	POST /v1/runs/{id}/decisions               a decision: {"step", "attempt", "kind", "feedback", "key", "actor"},
//	                                           an edit with "body" too (the replacement artifact, base64),
//	                                           at most the holder's GONOGO_MAX_ARTIFACT (else 413 "too-large");
//	                                           answered with {"run", "carried_out"}
//	POST /v1/runs/{id}/pause                   pause a moving run: {"actor"}; answered as a decision
//	POST /v1/runs/{id}/resume                  resume a paused run: {"actor", "mode"} ("" keeps the
//	                                           run's mode, or "checkpointed"); answered as a decision
//
// A path whose {id} is not a well-formed run id (engine.RunID.WellFormed)
// is answered 404 "not-found", as is a run the store does not hold.
// Errors are {"error": "sentence", "code": the refusal's wire code
// (engine.ErrorCode: "not-found", "stale", "key-reused", ...), else
// "bad-request" or "internal"}.
//
// The package owns the server (Server, Listen, Serve), the client (Dial,
// Client) and the wire shapes between them. It may import engine, record
// and storage (the holder reads its store directly); refusals cross it as
// engine.ErrorCode's codes, so errors.Is works on either side. Opening a
// data directory for reading (the store when free, else this API) is
// internal/datadir's, not this package's.
//
//	srv := localapi.NewServer(db, svc, log, "serve", version, maxArtifact)
//	ln, err := localapi.Listen(dataDir) // <data>/gonogo.sock, mode 0600
//	go localapi.Serve(ctx, ln, srv)
//	...
//	c, err := localapi.Dial(ctx, dataDir) // from another gonogo
//	run, carried, err := c.Decide(ctx, id, decision)
//	run, carried, err = c.Edit(ctx, id, edit, body)
package localapi
