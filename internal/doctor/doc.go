// Package doctor checks a gonogo set-up before any work starts, for
// gonogo doctor: every runner's agent CLI (found or not, whether it
// answers --version, what it says of its login, whether its Node is one
// its npm package declares), the skills folders and how many skills can
// be used, the workflows folder, the data directory (exists or can be
// created, writable, whether its store opens or another gonogo holds it,
// runs by state) and, when one is named, the Temporal cluster (reachable,
// ready, how many workers take steps). It owns the Report, its JSON
// shape (doctor --json), the verdict (OK, or each reason no run could
// work) and the text Print writes.
//
// It creates nothing: a missing data directory or store is reported, not
// made, and a probe file shows a folder writable and is removed at once.
// An existing store it opens as every command does, which brings the
// store up to date (storage.Open) and stops the agents a gonogo that died
// left running (Config.ReapAgents).
//
// It may import engine, parse, storage, internal/runner (finding and
// asking agents), internal/intake (workflows), internal/temporalbackend
// (Readiness, the one rule gonogo temporal setup also acts on),
// internal/terminal (its words) and internal/localapi (RootCause); never
// cmd/gonogo; it dials no cluster itself: reading flags and variables,
// dialling the cluster (TemporalConfig.Dial), the private-directory
// check and exit codes stay with the command, which hands them over in a
// Config.
//
//	rep := doctor.Check(ctx, doctor.Config{Runner: "claude", DataDir: "gonogo-data",
//		Skills: doctor.SkillsConfig{Dirs: []string{"skills"}, Load: loadSkills}})
//	doctor.Print(os.Stdout, rep)
//	if !rep.OK {
//		os.Exit(1)
//	}
package doctor
