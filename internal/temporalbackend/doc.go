// Package temporalbackend runs gonogo runs on Temporal, for teams that
// outgrow one machine: steps run on a pool of workers, and waiting runs and
// their decisions survive the loss of any machine. It is the other backend
// beside engine.Service, and keeps the same rules by calling the same
// engine functions. It owns the run workflow (one run, one workflow whose
// id is the run id, folding the engine's events), the step activities
// (Activities, their artifacts in an ArtifactStore), the Updates and
// Queries that decide and read a run, a run's notes and Slack thread
// syncs, start-key claims, the Slack inbox on Temporal (Inbox), the
// namespace's readiness and setup (CheckReadiness, Setup), dialing the
// cluster with its TLS (Dial), and Backend, the client side front ends call,
// with what the terminal commands read and write through it (Reader,
// RunCopies: a followed run's files under the data directory).
//
// It imports engine and internal/record (its payloads are the bbolt
// store's own records, never engine structs), the Temporal SDK and API,
// and nothing else of gonogo; cmd/gonogo wires it in (gonogo worker,
// gonogo temporal setup, and the terminal commands and serve when
// GONOGO_TEMPORAL_ADDR is set). How it is built, and what is not built
// yet: docs/temporal.md.
//
//	c, err := client.Dial(client.Options{HostPort: "localhost:7233", Namespace: "gonogo"})
//	if err != nil {
//		return err
//	}
//	b := temporalbackend.New(temporalbackend.Config{Client: c, Artifacts: store})
//	run, err := b.Start(ctx, plan, opts) // a workflow of id run.ID now runs it
package temporalbackend
